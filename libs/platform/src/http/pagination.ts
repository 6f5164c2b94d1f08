import { CallHandler, ExecutionContext, Injectable, NestInterceptor } from '@nestjs/common';
import { IsInt, IsOptional } from 'class-validator';
import type { Request, Response } from 'express';
import { map, Observable } from 'rxjs';
import { UriTooLong } from '../errors';
import { ToInt } from './transforms';

export const DEFAULT_PER_PAGE = 20;
/** GitLab (Kaminari's max_per_page) caps every list at 100; larger values are clamped, not refused. */
export const MAX_PER_PAGE = 100;

/**
 * The most bytes the `Link` header may take. Each link repeats the request's URL, so four of them for
 * a long query passed Node's 16 KB limit on an answer's headers: gitbeaker, or any Node client, could
 * not read the answer at all (Python's http.client stops at 64 KB a line). Clients need only
 * `rel="next"` to iterate: python-gitlab follows it and, without it, stops after the page it has,
 * silently. So the links are kept in the order next, prev, first, last while they fit, and a list
 * whose `next` alone does not fit is refused with 414, the answer GitLab's own nginx gives a request
 * line past 8 KB, rather than an answer a client reads as the last page.
 */
export const LINK_HEADER_BUDGET = 8 * 1024;

/** `page` and `per_page`, for DTOs of list endpoints to extend. */
export class PaginationDto {
  @IsOptional() @ToInt() @IsInt() page?: number;
  @IsOptional() @ToInt() @IsInt() per_page?: number;
}

export interface PageParams {
  page: number;
  perPage: number;
  offset: number;
}

export function pageParams(p: { page?: number; per_page?: number }): PageParams {
  const page = p.page && p.page > 0 ? p.page : 1;
  const perPage = p.per_page && p.per_page > 0 ? Math.min(p.per_page, MAX_PER_PAGE) : DEFAULT_PER_PAGE;
  return { page, perPage, offset: (page - 1) * perPage };
}

/** What a list endpoint returns: one page of items and the total the headers announce. */
export class Page<T> {
  constructor(
    readonly items: T[],
    readonly total: number,
    readonly params: PageParams,
  ) {}
}

/** Sets GitLab's pagination headers for a `Page` result and answers with its items. */
@Injectable()
export class PaginationInterceptor implements NestInterceptor {
  /** `externalUrl`: LODE_EXTERNAL_URL, the only origin links are built from (never the request's `Host`). */
  constructor(private readonly externalUrl: string) {}

  intercept(ctx: ExecutionContext, next: CallHandler): Observable<unknown> {
    return next.handle().pipe(
      map((result: unknown) => {
        if (!(result instanceof Page)) return result;
        const page = result as Page<unknown>;
        const http = ctx.switchToHttp();
        setPaginationHeaders(
          http.getRequest<Request>(),
          http.getResponse<Response>(),
          page.params,
          page.total,
          this.externalUrl,
        );
        return page.items;
      }),
    );
  }
}

export function setPaginationHeaders(
  req: Request,
  res: Response,
  p: PageParams,
  total: number,
  externalUrl: string,
): void {
  const totalPages = Math.max(1, Math.ceil(total / p.perPage));
  const next = p.page < totalPages ? p.page + 1 : undefined;
  // Kaminari's prev_page: none on the first page, and none past the last page either.
  const prev = p.page > 1 && p.page <= totalPages ? p.page - 1 : undefined;
  // Links are absolute, on LODE_EXTERNAL_URL (never the caller's `Host`, which anyone may set to
  // anything), with the path and every query parameter the client called.
  const base = new URL(externalUrl.replace(/\/+$/, '') + req.originalUrl);
  const link = (page: number, rel: string) => {
    const u = new URL(base);
    u.searchParams.set('page', String(page));
    u.searchParams.set('per_page', String(p.perPage));
    return `<${u.toString()}>; rel="${rel}"`;
  };
  const wanted: [string, number | undefined][] = [
    ['next', next],
    ['prev', prev],
    ['first', 1],
    ['last', totalPages],
  ];
  const kept = new Map<string, string>();
  let bytes = 0;
  for (const [rel, page] of wanted) {
    if (page === undefined) continue;
    const text = link(page, rel);
    const size = Buffer.byteLength(text) + (kept.size ? 2 : 0);
    if (bytes + size > LINK_HEADER_BUDGET) {
      if (rel === 'next') throw new UriTooLong();
      continue;
    }
    kept.set(rel, text);
    bytes += size;
  }
  res.setHeader('X-Total', String(total));
  res.setHeader('X-Total-Pages', String(totalPages));
  res.setHeader('X-Per-Page', String(p.perPage));
  res.setHeader('X-Page', String(p.page));
  res.setHeader('X-Next-Page', next ? String(next) : '');
  res.setHeader('X-Prev-Page', prev ? String(prev) : '');
  // GitLab's order: prev, next, first, last.
  const links = ['prev', 'next', 'first', 'last'].flatMap((rel) => kept.get(rel) ?? []);
  if (links.length) res.setHeader('Link', links.join(', '));
}
