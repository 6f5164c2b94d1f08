import { projectRepo, type GitRepositories } from '@app/git';
import type { HotAnswer, HotRead, Metrics } from '@app/platform';
import type { PublicProjectAnswers } from '@app/projects';
import { rawBlobHeaders } from './raw-response';

/**
 * `/api/v4/projects/<id>/repository/blobs/<full id>/raw` exactly: a project id (not a path), a whole
 * object id in git's lower case, no query string (the whole URL).
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
 * Two anonymous repository reads of public projects answered from memory, ahead of the Nest pipeline
 * (the project's query, the guard, pipes and interceptors, and git), by platform's `frontDoor` or,
 * where the rate limit counts them, `hotReadsMiddleware`:
 *
 * - a raw blob by its full id, when the project is remembered public (`PublicProjectAnswers.isPublic`)
 *   and the blob's bytes are kept (`GitRepositories.keptBlob`: an object's bytes never change);
 * - a file read through the files API at a ref, when the route's answer to that very URL is kept
 *   (`PublicProjectAnswers.lookupUrl`): every ref move is an event naming the project, which evicts it.
 *
 * Both wait until every eviction committed before the request has been heard, so a project made
 * private, or a branch moved, through any process is never answered stale after that write answered.
 * Anything else (a miss, an abbreviated id, any credentials, another parameter) goes on to the route
 * unchanged, which keeps what it found for the next one.
 */
export function publicRepositoryReads(answers: PublicProjectAnswers, git: GitRepositories, metrics: Metrics): HotRead {
  const blobsAnswered = metrics.counter(
    'lode_public_blob_answers_total',
    'Anonymous raw blob reads of public projects answered from memory before the route',
  );
  const filesAnswered = metrics.counter(
    'lode_public_file_answers_total',
    'Anonymous files API reads of public projects answered from memory before the route',
  );
  const blob = async (id: number, sha: string): Promise<HotAnswer | undefined> => {
    if (!(await answers.isPublic(id))) return undefined;
    const kept = git.keptBlob(projectRepo(id), sha);
    if (!kept) return undefined;
    return { route: RAW_BLOB_ROUTE, headers: rawBlobHeaders(kept.binary), body: kept.content, answered: blobsAnswered };
  };
  const file = async (id: number, url: string): Promise<HotAnswer | undefined> => {
    const kept = await answers.lookupUrl(id, url);
    if (!kept) return undefined;
    return { route: FILE_ROUTE, headers: kept.headers, body: kept.body, answered: filesAnswered };
  };
  return (url) => {
    if (!url.startsWith('/api/v4/projects/')) return undefined;
    const raw = RAW_BLOB_URL.exec(url);
    if (raw) return blob(Number(raw[1]), raw[2]);
    const files = FILE_URL.exec(url);
    return files ? file(Number(files[1]), url) : undefined;
  };
}
