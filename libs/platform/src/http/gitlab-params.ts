import { ArgumentMetadata, createParamDecorator, ExecutionContext, Injectable, PipeTransform } from '@nestjs/common';
import { plainToInstance } from 'class-transformer';
import { ValidationError, validate } from 'class-validator';
import type { Request } from 'express';
import { BadParameter } from '../errors';
import { VERBATIM } from './at-least-one-of';
import { hasControlCharacters } from './request-input';

const NULLABLE = Symbol('gitlab:nullable');

/**
 * A parameter for which `null` means something (`expires_at: null`: never expires). For every other
 * optional parameter a JSON `null` counts as absent, and for a required one (`@IsDefined()`) as
 * missing: it never reaches a handler that expects a string, a boolean or a number.
 */
export function Nullable() {
  return (target: object, propertyName: string) => {
    const inherited = (Reflect.getMetadata(NULLABLE, target) as string[] | undefined) ?? [];
    Reflect.defineMetadata(NULLABLE, [...inherited, propertyName], target);
  };
}

function withoutNulls(type: new () => object, plain: object): object {
  const nullable = (Reflect.getMetadata(NULLABLE, type.prototype as object) as string[] | undefined) ?? [];
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(plain)) if (v !== null || nullable.includes(k)) out[k] = v;
  return out;
}

/**
 * GitLab reads a parameter from wherever it comes: the query string, a JSON body, a form or a
 * multipart body. This merges them (the body wins) into one object for a DTO.
 */
export const GitlabParams = createParamDecorator((_: unknown, ctx: ExecutionContext) => {
  const req = ctx.switchToHttp().getRequest<Request>();
  const body: unknown = req.body; // Express types a parsed body as `any`
  const fields = body && typeof body === 'object' && !Array.isArray(body) ? body : {};
  return { ...(req.query as object), ...fields };
});

/**
 * Validates DTOs with class-validator and words failures as Grape does:
 * `{"error":"name is missing"}`, `"visibility does not have a valid value"`, `"per_page is invalid"`,
 * several joined with ", ". Unknown parameters are dropped, as Grape's `declared(params)` does.
 */
@Injectable()
export class GitlabValidationPipe implements PipeTransform {
  async transform(value: unknown, meta: ArgumentMetadata): Promise<unknown> {
    // Path parameters: the query and the body were checked by requestInputMiddleware.
    if (meta.type === 'param' && typeof value === 'string' && hasControlCharacters(value))
      throw new BadParameter(`${meta.data ?? 'id'} is invalid`);
    const type = meta.metatype;
    if (meta.type === 'custom' && type && !isPrimitive(type)) return validateParams(type as new () => object, value);
    return value;
  }
}

export async function validateParams<T extends object>(type: new () => T, value: unknown): Promise<T> {
  const plain = value && typeof value === 'object' ? withoutNulls(type, value) : {};
  const instance = plainToInstance(type, plain, { exposeDefaultValues: true });
  const errors = await validate(instance, { whitelist: true, forbidUnknownValues: false, stopAtFirstError: true });
  if (errors.length) throw new BadParameter(errors.map(describe).join(', '));
  return instance;
}

function describe(e: ValidationError): string {
  const kinds = Object.keys(e.constraints ?? {});
  if (kinds.includes(VERBATIM)) return e.constraints![VERBATIM];
  if (kinds.includes('isDefined')) return `${e.property} is missing`;
  if (kinds.some((k) => k === 'isIn' || k === 'isEnum')) return `${e.property} does not have a valid value`;
  return `${e.property} is invalid`;
}

function isPrimitive(t: unknown): boolean {
  return t === String || t === Number || t === Boolean || t === Object || t === Array;
}
