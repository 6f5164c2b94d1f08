import { ArgumentsHost, Catch, ExceptionFilter, HttpException, Logger } from '@nestjs/common';
import type { Request, Response } from 'express';
import {
  ApiError,
  BadParameter,
  BadRequestMessage,
  Conflict,
  DomainError,
  Forbidden,
  InsufficientScope,
  Invalid,
  KeysetUnavailable,
  NotFound,
  NotModified,
  PayloadTooLarge,
  RecordInvalid,
  Unauthorized,
  Unavailable,
  Unprocessable,
  TooManyRequests,
  UriTooLong,
} from '../errors';
import { isDatabaseUnavailable, RETRY_AFTER_S } from '../database/database-watch';
import { redactSecrets } from '../logging/redact';
import { sendJson } from './json-response';

/** A multipart body busboy could not read: no boundary, truncated, a malformed part. */
export class MalformedMultipart extends Error {
  constructor(cause: unknown) {
    super(`malformed multipart body: ${cause instanceof Error ? cause.message : String(cause)}`, { cause });
  }
}

/** The one place that turns errors into GitLab's bodies. Anything unexpected is a logged 500. */
@Catch()
export class GitlabErrorFilter implements ExceptionFilter {
  private readonly logger = new Logger('HTTP');

  catch(err: unknown, host: ArgumentsHost): void {
    const ctx = host.switchToHttp();
    this.respond(err, ctx.getRequest<Request>(), ctx.getResponse<Response>());
  }

  /** Also Express's error handler, for what fails before routing (body parsers, multipart, input checks). */
  respond(err: unknown, req: Request, res: Response): void {
    if (res.headersSent) {
      res.destroy();
      return;
    }
    const [status, body] = this.render(err, req);
    if (status === 503)
      res.setHeader('Retry-After', String(err instanceof Unavailable ? err.retryAfter : RETRY_AFTER_S));
    if (status === 304) {
      res.status(304).end();
      return;
    }
    sendJson(res, status, body);
  }

  private render(err: unknown, req: Request): [number, unknown] {
    if (err instanceof DomainError) {
      if (err instanceof NotFound) return [404, { message: err.message }];
      if (err instanceof Unauthorized) return [401, { message: err.message }];
      if (err instanceof InsufficientScope)
        return [
          403,
          {
            error: 'insufficient_scope',
            error_description: 'The request requires higher privileges than provided by the access token.',
            scope: err.scopes.join(' '),
          },
        ];
      if (err instanceof Forbidden) return [403, { message: err.message }];
      if (err instanceof Conflict) return [409, { message: err.body }];
      if (err instanceof Invalid) return [400, { message: err.fields }];
      if (err instanceof BadParameter) return [400, { error: err.error }];
      if (err instanceof BadRequestMessage) return [400, { message: err.message }];
      if (err instanceof Unprocessable)
        return [422, err.detail ? { error: err.error, message: err.detail } : { error: err.error }];
      if (err instanceof RecordInvalid) return [422, { message: err.messages }];
      if (err instanceof ApiError) return [err.status, { message: err.body }];
      if (err instanceof NotModified) return [304, undefined];
      if (err instanceof KeysetUnavailable) return [405, { error: err.message }];
      if (err instanceof PayloadTooLarge) return [413, { message: err.message }];
      if (err instanceof UriTooLong) return [414, { message: err.message }];
      if (err instanceof TooManyRequests) return [429, { message: err.message }];
      if (err instanceof Unavailable) return [503, { message: err.message }];
    }
    // PostgreSQL unreachable or too slow: the client should come back, not report a bug.
    if (isDatabaseUnavailable(err)) return [503, { message: '503 Service Unavailable' }];
    if (err instanceof HttpException) {
      const status = err.getStatus();
      // Grape's catch-all route answers unknown paths with `error!('404 Not Found')`.
      if (status === 404) return [404, { error: '404 Not Found' }];
      if (status === 405) return [405, { error: '405 Method Not Allowed' }];
      if (status === 413) return [413, { message: '413 Request Entity Too Large' }];
      if (status < 500) return [status, { error: err.message }];
    }
    const e = err as {
      type?: string;
      status?: number;
      statusCode?: number;
      code?: string;
      message?: string;
      field?: string;
    };
    // Body parsers and multer: a malformed body is the client's fault, never a 500.
    if (e?.type === 'entity.parse.failed') return [400, { error: 'The request body could not be parsed' }];
    if (err instanceof MalformedMultipart) return [400, { error: 'The multipart body could not be parsed' }];
    if (e?.type === 'entity.too.large' || e?.code === 'LIMIT_FILE_SIZE')
      return [413, { message: '413 Request Entity Too Large' }];
    if (typeof e?.code === 'string' && e.code.startsWith('LIMIT_'))
      return [400, { error: e.message ?? 'invalid multipart body' }];
    if (typeof e?.status === 'number' && e.status >= 400 && e.status < 500)
      return [e.status, { error: e.message ?? 'Bad Request' }];
    this.logger.error(
      redactSecrets(
        `${req.method} ${req.originalUrl} failed (request ${String(req.headers['x-request-id'] ?? '-')}): ${(err as Error)?.stack ?? String(err)}`,
      ),
    );
    return [500, { message: '500 Internal Server Error' }];
  }
}
