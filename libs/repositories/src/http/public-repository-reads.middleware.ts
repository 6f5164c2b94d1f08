import { projectRepo, type GitRepositories } from '@app/git';
import type { Metrics, RequestRateLimits } from '@app/platform';
import { answeringBeforeRoute, plainlyAnonymous, type PublicProjectAnswers } from '@app/projects';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { sendRawBlob } from './raw-response';

/**
 * `/api/v4/projects/<id>/repository/blobs/<full id>/raw` exactly: a project id (not a path), a whole
 * object id in git's lower case, no query string (the whole URL, as Express gives it).
 */
const RAW_BLOB_URL = /^\/api\/v4\/projects\/(\d{1,9})\/repository\/blobs\/([0-9a-f]{40}|[0-9a-f]{64})\/raw$/;
/**
 * `/api/v4/projects/<id>/repository/files/<encoded path>?ref=<ref>` exactly: a project id, one path
 * segment (the file's path URL-encoded, as the route takes it), `ref` the only parameter.
 */
export const FILE_URL = /^\/api\/v4\/projects\/(\d{1,9})\/repository\/files\/[^/?#]+\?ref=[^&#]*$/;
/** The route templates the Nest routes have, for the request log and `lode_http_request_duration_seconds`. */
const RAW_BLOB_ROUTE = '/api/v4/projects/:id/repository/blobs/:sha/raw';
const FILE_ROUTE = '/api/v4/projects/:id/repository/files/:file_path';

/**
 * Answers two anonymous repository reads of public projects from memory, before the Nest pipeline
 * (the project's query, the guard, pipes and interceptors, and git):
 *
 * - a raw blob by its full id, when the project is remembered public (`PublicProjectAnswers.isPublic`)
 *   and the blob's bytes are kept (`GitRepositories.keptBlob`: an object's bytes never change);
 * - a file read through the files API at a ref, when the route's answer to that very URL is kept
 *   (`PublicProjectAnswers.lookupUrl`): every ref move is an event naming the project, which evicts it.
 *
 * Both wait until every eviction committed before the request has been heard, so a project made
 * private, or a branch moved, through any process is never answered stale after that write answered.
 * The unauthenticated rate limit counts a hit as the guard counts a request. Anything else (a miss, an
 * abbreviated id, any credentials, another parameter) goes on to the route unchanged, which keeps
 * what it found for the next one.
 */
export function publicRepositoryReadsMiddleware(
  answers: PublicProjectAnswers,
  git: GitRepositories,
  limits: RequestRateLimits,
  metrics: Metrics,
): RequestHandler {
  const blobsAnswered = metrics.counter(
    'lode_public_blob_answers_total',
    'Anonymous raw blob reads of public projects answered from memory before the route',
  );
  const filesAnswered = metrics.counter(
    'lode_public_file_answers_total',
    'Anonymous files API reads of public projects answered from memory before the route',
  );
  const blob = async (id: number, sha: string, req: Request, res: Response, next: NextFunction) => {
    if (!(await answers.isPublic(id))) return next();
    const kept = git.keptBlob(projectRepo(id), sha);
    if (!kept) return next();
    await answeringBeforeRoute(req, res, limits, RAW_BLOB_ROUTE);
    blobsAnswered.inc();
    sendRawBlob(res, kept);
  };
  const file = async (id: number, req: Request, res: Response, next: NextFunction) => {
    const kept = await answers.lookupUrl(id, req.originalUrl);
    if (!kept) return next();
    await answeringBeforeRoute(req, res, limits, FILE_ROUTE);
    filesAnswered.inc();
    res.statusCode = 200;
    for (const [name, value] of kept.headers) res.setHeader(name, value);
    res.setHeader('Content-Type', 'application/json');
    res.setHeader('Content-Length', kept.body.length);
    res.end(kept.body);
  };
  return (req: Request, res: Response, next: NextFunction) => {
    // The whole URL: this runs before any router, where `url` and `originalUrl` are one.
    const url = req.originalUrl;
    if (req.method !== 'GET' || !url.startsWith('/api/v4/projects/')) return next();
    const raw = RAW_BLOB_URL.exec(url);
    const files = raw ? undefined : FILE_URL.exec(url);
    if ((!raw && !files) || !plainlyAnonymous(req)) return next();
    if (raw) blob(Number(raw[1]), raw[2], req, res, next).catch(next);
    else file(Number(files![1]), req, res, next).catch(next);
  };
}
