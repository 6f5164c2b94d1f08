import { projectRepo, type GitRepositories } from '@app/git';
import type { Metrics, RequestRateLimits } from '@app/platform';
import { plainlyAnonymous, type PublicProjectAnswers } from '@app/projects';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { sendRawBlob } from './raw-response';

/**
 * `/api/v4/projects/<id>/repository/blobs/<full id>/raw` exactly: a project id (not a path), a whole
 * object id in git's lower case, no query string (the whole URL, as Express gives it).
 */
const RAW_BLOB_URL = /^\/api\/v4\/projects\/(\d{1,9})\/repository\/blobs\/([0-9a-f]{40}|[0-9a-f]{64})\/raw$/;
/** The route template the Nest route has, for the request log and `lode_http_request_duration_seconds`. */
const RAW_BLOB_ROUTE = '/api/v4/projects/:id/repository/blobs/:sha/raw';

/**
 * Answers an anonymous raw read of a blob by its full id from memory, before the Nest pipeline: when
 * the project is remembered public (`PublicProjectAnswers.isPublic`, which waits until every earlier
 * eviction has been heard, so a project made private through any process is never read here after
 * that write answered) and the blob's bytes are kept (`GitRepositories.keptBlob`: an object's bytes
 * never change). That leaves the project's query, the guard, pipes and interceptors, and the pipe
 * round trip to git out of the most repeated repository read. The unauthenticated rate limit counts a
 * hit as the guard counts a request. Anything else (a miss, an abbreviated id, any credentials, a
 * parameter) goes on to the route unchanged, which remembers what it found for the next one.
 */
export function publicBlobMiddleware(
  answers: PublicProjectAnswers,
  git: GitRepositories,
  limits: RequestRateLimits,
  metrics: Metrics,
): RequestHandler {
  const answered = metrics.counter(
    'lode_public_blob_answers_total',
    'Anonymous raw blob reads of public projects answered from memory before the route',
  );
  const serve = async (id: number, sha: string, req: Request, res: Response, next: NextFunction) => {
    if (!(await answers.isPublic(id))) return next();
    const blob = git.keptBlob(projectRepo(id), sha);
    if (!blob) return next();
    await limits.count({ address: req.ip ?? 'unknown' }, res);
    // routeOf (the request log) reads Express's matched route; no Express route ran.
    (req as Request & { route?: { path: string } }).route = { path: RAW_BLOB_ROUTE };
    answered.inc();
    sendRawBlob(res, blob);
  };
  return (req: Request, res: Response, next: NextFunction) => {
    if (req.method !== 'GET') return next();
    const m = RAW_BLOB_URL.exec(req.url);
    if (!m || !plainlyAnonymous(req)) return next();
    serve(Number(m[1]), m[2], req, res, next).catch(next);
  };
}
