import { Injectable, Logger, type CallHandler, type ExecutionContext, type NestInterceptor } from '@nestjs/common';
import { INTERCEPTORS_METADATA } from '@nestjs/common/constants';
import type { Reflector } from '@nestjs/core';
import type { Request, RequestHandler, Response } from 'express';
import multer from 'multer';
import { mkdirSync } from 'node:fs';
import { readdir, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { from, switchMap, throwError, type Observable } from 'rxjs';
import { LodeConfig } from '../config/lode-config';
import { DomainError, PayloadTooLarge } from '../errors';
import { MalformedMultipart } from './gitlab-error.filter';
import { unacceptableInput } from './request-input';

/*
 * Multipart bodies. GitLab takes every parameter from a multipart form as from JSON, so every route
 * reads multipart *fields*; but only a route that takes a file (`@AcceptsFiles()`) lets one reach
 * the disk, and only after the caller was authenticated (the interceptor runs after the guard).
 * Before, a global parser wrote every anonymous multipart body to disk on every route and read an
 * oversized one to its end before answering 413.
 */

/** A body without files is parameters only: at most this much, as JSON's limit. */
export const FIELDS_BODY_LIMIT = 1024 * 1024;

const logger = new Logger('Multipart');

const isMultipart = (req: Request): boolean => /^multipart\/form-data\b/i.test(req.headers['content-type'] ?? '');

/** Answers past a limit close the connection, so the rest of an oversized body is never read. */
function closeAfterAnswer(req: Request, res: Response): void {
  res.setHeader('Connection', 'close');
  res.once('finish', () => endConnection(req));
}

/** How long a connection ended after an answer stays before it is destroyed. */
const ANSWER_GRACE_MS = 50;

/**
 * Ends a connection whose body was not read to its end: the answer goes first (FIN), the socket is
 * destroyed a moment later. Destroyed at once with unread bytes, it is reset, and a client still
 * sending (a chunked body) loses the answer it was sent. The moment is short: a refused upload's
 * partial file goes when the request is destroyed.
 */
function endConnection(req: Request): void {
  req.socket.end();
  setTimeout(() => req.destroy(), ANSWER_GRACE_MS).unref();
}

/**
 * Calls `exceeded` once when more than `limit` bytes of the body have been read, for a body without
 * `Content-Length` (or with a false one); answers a function that stops counting.
 */
function countBody(req: Request, limit: number, exceeded: () => void): () => void {
  let seen = 0;
  const count = (chunk: Buffer) => {
    seen += chunk.length;
    if (seen <= limit) return;
    req.off('data', count);
    exceeded();
  };
  req.on('data', count);
  return () => req.off('data', count);
}

const declaredLength = (req: Request): number => Number(req.headers['content-length'] ?? NaN);

/**
 * Multer's errors are the client's: its LIMIT_* codes as they are, busboy's parse failures 400. A
 * refusal of the deferred authentication (401, 403, 400) stays what it is.
 */
const clientError = (err: unknown): unknown =>
  err instanceof multer.MulterError || err instanceof DomainError ? err : new MalformedMultipart(err);

const DEFERRED = Symbol('lode:deferred-authentication');
type Deferring = Request & { [DEFERRED]?: { run: () => Promise<void>; ran?: Promise<void> } };

/**
 * Whether this request's credentials may still be in its body, for the guard to defer to: it is
 * multipart, and its route reads the body itself after the guard (`@UseInterceptors(AcceptsFiles)`).
 * GitLab takes `private_token` (and `sudo`) from a multipart form like any other parameter.
 */
export function credentialsMayFollowInBody(ctx: ExecutionContext, reflector: Reflector): boolean {
  const interceptors = reflector.get<unknown[] | undefined>(INTERCEPTORS_METADATA, ctx.getHandler()) ?? [];
  return isMultipart(ctx.switchToHttp().getRequest<Request>()) && interceptors.includes(AcceptsFiles);
}

/**
 * The guard's authentication of a request whose token may be a multipart field: AcceptsFiles runs it
 * once, when the first file part arrives (the fields sent before it are in `req.body`; the file is
 * written only if it succeeds), or after the body when it holds no file, and always before the
 * handler. So an anonymous caller's file still never reaches the disk; a token sent after the file
 * part is not seen in time, and the request is answered as anonymous.
 */
export function deferAuthentication(req: Request, authenticate: () => Promise<void>): void {
  (req as Deferring)[DEFERRED] = { run: authenticate };
}

function runDeferredAuthentication(req: Request): Promise<void> {
  const deferred = (req as Deferring)[DEFERRED];
  if (!deferred) return Promise.resolve();
  // The fields read so far pass the same gate as every parameter before they are looked up.
  deferred.ran ??= (async () => {
    const invalid = unacceptableInput(req);
    if (invalid) throw invalid;
    await deferred.run();
  })();
  return deferred.ran;
}

/**
 * The global parser: multipart fields into `req.body`, in memory, the body bounded to
 * FIELDS_BODY_LIMIT (by `Content-Length` before reading, and while reading when the body is chunked);
 * a file part is refused (400). `takesFiles(req)` names the requests left to `AcceptsFiles`.
 */
export function multipartFields(takesFiles: (req: Request) => boolean): RequestHandler {
  const parse = multer({
    storage: multer.memoryStorage(),
    defParamCharset: 'utf8',
    limits: { files: 0, fieldSize: FIELDS_BODY_LIMIT, fields: 200, parts: 200 },
  }).any();
  return (req, res, next) => {
    if (!isMultipart(req)) return next();
    if (takesFiles(req)) {
      // Refused before its body was read (no token, not allowed): the rest is never read either.
      res.once('finish', () => {
        if (!req.complete) endConnection(req);
      });
      return next();
    }
    const refuse = () => {
      closeAfterAnswer(req, res);
      next(new PayloadTooLarge());
    };
    if (declaredLength(req) > FIELDS_BODY_LIMIT) return refuse();
    let refused = false;
    const stopCounting = countBody(req, FIELDS_BODY_LIMIT, () => {
      refused = true;
      refuse();
    });
    parse(req, res, (err?: unknown) => {
      stopCounting();
      if (!refused) next(err ? clientError(err) : undefined);
    });
  };
}

/** Where uploaded files wait while their request runs. */
const uploadsDir = (dataDir: string): string => join(dataDir, 'tmp');

/**
 * Uploaded files left in `$LODE_DATA_DIR/tmp` untouched for `olderThanMs`: each is removed when its
 * response ends, so one still there long after was left by a process that died mid-request.
 */
export async function leftoverUploads(dataDir: string, olderThanMs: number): Promise<string[]> {
  const dir = uploadsDir(dataDir);
  const names = await readdir(dir).catch(() => []);
  const left: string[] = [];
  for (const name of names) {
    const path = join(dir, name);
    const changed = (await stat(path).catch(() => undefined))?.mtimeMs;
    if (changed !== undefined && Date.now() - changed >= olderThanMs) left.push(path);
  }
  return left;
}

/**
 * Files for the routes that take them (`@UseInterceptors(AcceptsFiles)`): parsed after the guard,
 * so only an authenticated caller's upload reaches `$LODE_DATA_DIR/tmp`, each file bounded by
 * LODE_MAX_UPLOAD_BYTES while it streams (past it: 413 and the connection closed). What the handler
 * did not move away is removed when the response ends.
 */
@Injectable()
export class AcceptsFiles implements NestInterceptor {
  private readonly parse: RequestHandler;
  /**
   * The most a body may hold: one file at its limit and the fields. Checked before reading (by
   * `Content-Length`) and while reading, since multer, past a file's limit, reads the part to its end
   * before it reports.
   */
  private readonly bodyLimit: number;

  constructor(config: LodeConfig) {
    this.bodyLimit = config.maxUploadBytes + FIELDS_BODY_LIMIT;
    const tmp = uploadsDir(config.dataDir);
    mkdirSync(tmp, { recursive: true });
    this.parse = multer({
      dest: tmp,
      // Clients send file names as raw UTF-8; multer's default (latin1) would store `cafÃ©.png` for `café.png`.
      defParamCharset: 'utf8',
      limits: { fileSize: config.maxUploadBytes, fieldSize: FIELDS_BODY_LIMIT, fields: 200, files: 10 },
      // Before a file part is written, the caller is known: a deferred authentication runs here.
      fileFilter: (req, _file, accept) =>
        void runDeferredAuthentication(req).then(
          () => accept(null, true),
          (err: Error) => accept(err),
        ),
    }).any();
  }

  intercept(ctx: ExecutionContext, next: CallHandler): Observable<unknown> {
    const req = ctx.switchToHttp().getRequest<Request & { files?: Express.Multer.File[] }>();
    const res = ctx.switchToHttp().getResponse<Response>();
    if (!isMultipart(req)) return from(runDeferredAuthentication(req)).pipe(switchMap(() => next.handle()));
    if (declaredLength(req) > this.bodyLimit) {
      closeAfterAnswer(req, res);
      // None of the body is read, so a token in it is not seen: a caller without one in the headers is
      // answered as anonymous first (401 where the route needs a caller), as before the token could be a field.
      return from(runDeferredAuthentication(req)).pipe(switchMap(() => throwError(() => new PayloadTooLarge())));
    }
    const parsed = new Promise<void>((resolve, reject) => {
      let settled = false;
      const stopCounting = countBody(req, this.bodyLimit, () => {
        if (settled) return;
        settled = true;
        req.unpipe();
        req.pause();
        closeAfterAnswer(req, res);
        reject(new PayloadTooLarge());
      });
      this.parse(req, res, (err?: unknown) => {
        stopCounting();
        if (settled) return;
        settled = true;
        const files = Array.isArray(req.files) ? req.files : [];
        if (files.length)
          res.on('close', () => {
            // A file that cannot be removed (its directory's permissions changed under us) stays behind;
            // it must not reject unheard, which would end the process.
            for (const f of files)
              rm(f.path, { force: true }).catch((e: unknown) =>
                logger.warn(`could not remove the upload's temporary file ${f.path}: ${String(e)}`),
              );
          });
        if (err) {
          // Multer drains the rest of the body after an error; past a limit it is not read at all.
          req.removeAllListeners('readable');
          req.removeAllListeners('data');
          req.pause();
          closeAfterAnswer(req, res);
          return reject(clientError(err));
        }
        // The same gate as every other parameter (request-input.ts), for what was parsed here.
        const invalid = unacceptableInput(req);
        if (invalid) return reject(invalid);
        // A body without a file part: the deferred authentication has not run yet.
        runDeferredAuthentication(req).then(resolve, reject);
      });
    });
    return from(parsed).pipe(switchMap(() => next.handle()));
  }
}
