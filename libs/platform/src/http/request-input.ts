import type { NextFunction, Request, Response } from 'express';
import { BadParameter } from '../errors';

/** How deep a body or query may nest: GitLab's parameters go two levels down (`custom_attributes[k]`). */
export const MAX_INPUT_DEPTH = 64;

/**
 * C0 control characters but tab, newline and carriage return, and DEL. NUL cannot be stored by
 * PostgreSQL (`invalid byte sequence for encoding "UTF8": 0x00`, in text and jsonb alike), and no
 * GitLab parameter means any of the others.
 */
// eslint-disable-next-line no-control-regex -- finding control characters is the point
const CONTROL = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/;
const CONTROLS = new RegExp(CONTROL.source, 'g');

export function hasControlCharacters(value: string): boolean {
  return CONTROL.test(value);
}

/**
 * The parameter that is unacceptable in `input` (a parsed query or body), or undefined: a string
 * (or key) with a control character anywhere inside it, or nesting deeper than MAX_INPUT_DEPTH. It
 * is named by its top-level key, as Grape names a parameter (`custom_attributes is invalid`).
 * Iterative, so that a body nested thousands of levels deep cannot exhaust the stack either.
 */
export function unacceptableParameter(input: unknown, rootName = 'body'): string | undefined {
  const stack: [unknown, string, number][] = [[input, rootName, 0]];
  while (stack.length) {
    const [value, name, depth] = stack.pop()!;
    if (typeof value === 'string') {
      if (CONTROL.test(value)) return name;
    } else if (value !== null && typeof value === 'object') {
      if (depth >= MAX_INPUT_DEPTH) return name;
      for (const [k, v] of Object.entries(value)) {
        const child = depth === 0 ? k : name;
        if (CONTROL.test(k)) return child;
        stack.push([v, child, depth + 1]);
      }
    }
  }
  return undefined;
}

/**
 * The one gate every API request's parameters pass, after the body parsers and before routing,
 * authentication included (`sudo`, `private_token`): control characters or absurd nesting in the
 * query string, a JSON, form or multipart body, or a multipart file name answer 400
 * `{"error":"<param> is invalid"}`. Path parameters are checked by GitlabValidationPipe, which knows
 * their names.
 */
export function requestInputMiddleware(req: Request, _res: Response, next: NextFunction): void {
  next(unacceptableInput(req));
}

/**
 * The gate's verdict on a request's query, body and multipart files: the 400 to answer, or undefined.
 * Also asked by AcceptsFiles, which parses a file route's body after this middleware has run.
 */
export function unacceptableInput(req: Request): BadParameter | undefined {
  const files = (req as Request & { files?: Express.Multer.File[] }).files;
  const bad =
    unacceptableParameter(req.query) ??
    unacceptableParameter(req.body) ??
    (Array.isArray(files)
      ? files.find((f) => CONTROL.test(f.originalname) || CONTROL.test(f.fieldname))?.fieldname
      : undefined);
  return bad === undefined
    ? undefined
    : new BadParameter(`${bad.replace(CONTROLS, '').replace(/\[.*$/, '') || 'body'} is invalid`);
}
