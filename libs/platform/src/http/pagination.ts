import { CallHandler, ExecutionContext, Injectable, NestInterceptor } from '@nestjs/common';
import { IsIn, IsInt, IsOptional } from 'class-validator';
import type { Request, Response } from 'express';
import { map, Observable } from 'rxjs';
import { KeysetUnavailable, UriTooLong } from '../errors';
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

/**
 * `page` and `per_page`, for DTOs of list endpoints to extend; and `pagination` (GitLab 12.x and later):
 * `keyset` asks for keyset pages, which only the lists that answer a `KeysetPage` have; every other
 * list answers it 405 (`PaginationInterceptor`), as GitLab's `paginate` helper does.
 */
export class PaginationDto {
  @IsOptional() @ToInt() @IsInt() page?: number;
  @IsOptional() @ToInt() @IsInt() per_page?: number;
  @IsOptional() @IsIn(['offset', 'keyset']) pagination?: 'offset' | 'keyset';
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

/**
 * GitLab's `Kaminari::ActiveRecordRelationMethods::MAX_COUNT_LIMIT`: a list of more rows than this is
 * not counted (`paginate_with_limit_optimization` counts up to it, then pages `without_count`).
 */
export const COUNT_LIMIT = 10_000;

/**
 * What a list endpoint returns: one page of items and the total the headers announce. A total of
 * `null` is GitLab's uncounted page (more than COUNT_LIMIT rows): no `X-Total`, `X-Total-Pages` or
 * `rel="last"`, and `hasNext` says whether a next page exists (read as one row past the page).
 */
export class Page<T> {
  constructor(
    readonly items: T[],
    readonly total: number | null,
    readonly params: PageParams,
    readonly hasNext = false,
  ) {}
}

/**
 * One keyset page: its items, and the query parameters that fetch the page after it (`id_before=`,
 * `id_after=` or `cursor=`), absent when Lode knows no row remains. GitLab's keyset answers carry no
 * `X-Total`, `X-Page`... headers, only `Link: <...>; rel="next"`.
 */
export class KeysetPage<T> {
  constructor(
    readonly items: T[],
    readonly perPage: number,
    readonly next: Record<string, string> | undefined,
  ) {}
}

/** A keyset page's size: GitLab's Keyset::Page, 20 by default (also for 0 or less), at most 100. */
export function keysetPerPage(perPage: number | undefined): number {
  return perPage && perPage > 0 ? Math.min(perPage, MAX_PER_PAGE) : DEFAULT_PER_PAGE;
}

/**
 * An opaque cursor for keyset pages ordered by more than the id: base64url of JSON, as GitLab's
 * cursor-based keyset (16.5+) writes it. `decodeCursor` answers undefined for anything it did not write.
 */
export function encodeCursor(position: Record<string, string | number>): string {
  return Buffer.from(JSON.stringify(position)).toString('base64url');
}

export function decodeCursor(cursor: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
    return value && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/** Sets GitLab's pagination headers for a `Page` or `KeysetPage` result and answers with its items. */
@Injectable()
export class PaginationInterceptor implements NestInterceptor {
  /** `externalUrl`: LODE_EXTERNAL_URL, the only origin links are built from (never the request's `Host`). */
  constructor(private readonly externalUrl: string) {}

  intercept(ctx: ExecutionContext, next: CallHandler): Observable<unknown> {
    return next.handle().pipe(
      map((result: unknown) => {
        const http = ctx.switchToHttp();
        if (result instanceof KeysetPage) {
          setKeysetHeaders(http.getRequest<Request>(), http.getResponse<Response>(), result, this.externalUrl);
          return result.items as unknown;
        }
        if (!(result instanceof Page)) return result;
        // A list without keyset pages asked for them: GitLab's 405, not a numbered page the client
        // would follow as if it were one.
        if ((http.getRequest<Request>().query as Record<string, unknown>).pagination === 'keyset')
          throw new KeysetUnavailable();
        const page = result as Page<unknown>;
        setPaginationHeaders(
          http.getRequest<Request>(),
          http.getResponse<Response>(),
          page.params,
          page.total,
          this.externalUrl,
          page.hasNext,
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
  total: number | null,
  externalUrl: string,
  hasNext = false,
): void {
  // Uncounted (GitLab's `without_count`): no last page known; Kaminari's prev_page is then the page before.
  const totalPages = total === null ? undefined : Math.max(1, Math.ceil(total / p.perPage));
  const next = (totalPages === undefined ? hasNext : p.page < totalPages) ? p.page + 1 : undefined;
  // Kaminari's prev_page: none on the first page, and none past the last page either.
  const prev = p.page > 1 && (totalPages === undefined || p.page <= totalPages) ? p.page - 1 : undefined;
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
  if (totalPages !== undefined) {
    res.setHeader('X-Total', String(total));
    res.setHeader('X-Total-Pages', String(totalPages));
  }
  res.setHeader('X-Per-Page', String(p.perPage));
  res.setHeader('X-Page', String(p.page));
  res.setHeader('X-Next-Page', next ? String(next) : '');
  res.setHeader('X-Prev-Page', prev ? String(prev) : '');
  // GitLab's order: prev, next, first, last.
  const links = ['prev', 'next', 'first', 'last'].flatMap((rel) => kept.get(rel) ?? []);
  if (links.length) res.setHeader('Link', links.join(', '));
}

/**
 * A keyset page's only header: `Link: <url>; rel="next"` (exactly that form: gitbeaker's parser wants
 * one space after `;` and a quoted rel), on LODE_EXTERNAL_URL, repeating every parameter of the
 * request (python-gitlab follows the URL, gitbeaker takes only its query to the same path) with the
 * next page's position in place of this one's.
 */
export function setKeysetHeaders(req: Request, res: Response, page: KeysetPage<unknown>, externalUrl: string): void {
  if (!page.next) return;
  const u = new URL(externalUrl.replace(/\/+$/, '') + req.originalUrl);
  u.searchParams.set('per_page', String(page.perPage));
  for (const [key, value] of Object.entries(page.next)) u.searchParams.set(key, value);
  const link = `<${u.toString()}>; rel="next"`;
  if (Buffer.byteLength(link) > LINK_HEADER_BUDGET) throw new UriTooLong();
  res.setHeader('Link', link);
}
