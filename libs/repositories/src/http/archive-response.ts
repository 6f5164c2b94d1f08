import { archiveEtag, type ArchiveExtension, type GitRepositories, type RepoRef } from '@app/git';
import { collectAsStreamed, hasBody, markAnsweredElsewhere, responseHead } from '@app/platform';
import type { Response } from 'express';

/**
 * Sends the archive of a commit whose single top directory is `prefix`, as
 * `GET /projects/:id/repository/archive` and the web pages' `/-/archive/` path both do: an ETag
 * known before the archive is made (304 for a client that has it), then the cached file whole
 * (GitRepositories.archive: one `git archive` per archive in the work budget's slots). A GET's
 * body is sent by a niced `cat` the git helper starts on the connection, which then closes
 * (`Connection: close`): archive bytes never pass the server's event loop, which every other
 * request waits on. A HEAD, or a server without the helper, answers from here.
 */
export async function sendArchive(
  git: GitRepositories,
  res: Response,
  repo: RepoRef,
  sha: string,
  ext: ArchiveExtension,
  prefix: string,
): Promise<void> {
  const etag = archiveEtag(repo, sha, ext, prefix);
  res.setHeader('ETag', etag);
  if (res.req.headers['if-none-match'] === etag) return void res.status(304).end();
  const archive = await git.archive(repo, sha, ext, prefix);
  res.setHeader('Content-Type', 'application/octet-stream');
  res.setHeader('Content-Disposition', `attachment; filename="${prefix.replace(/["\\]/g, '_')}.${ext}"`);
  res.setHeader('Content-Transfer-Encoding', 'binary');
  res.setHeader('Content-Length', String(archive.size));
  res.status(200);
  // A HEAD's answer is its headers: the body Node would drop is not read at all.
  if (res.req.method === 'HEAD') return void res.end();
  if (handOverPossible(res)) {
    const head = responseHead(res, 200);
    if (await archive.sendTo(res.req.socket, head, () => markAnsweredElsewhere(res, 200))) return;
  }
  // The client went away meanwhile: nothing to send, and no file to open.
  if (res.destroyed) return;
  const stream = archive.read();
  res.on('close', () => {
    if (!res.writableFinished) stream.destroy();
  });
  stream.on('error', () => res.destroy());
  collectAsStreamed(stream);
  stream.pipe(res);
}

/**
 * The connection can be handed to another process for this answer: a GET read whole, with no body,
 * and the connection's current request with none after it (a pipelined request already parsed
 * waits for this answer's end, which the other process would not send it), nothing written yet.
 */
function handOverPossible(res: Response): boolean {
  const req = res.req;
  const socket = req.socket as typeof req.socket & { _httpMessage?: unknown; parser?: { incoming?: unknown } | null };
  return (
    req.method === 'GET' &&
    req.complete &&
    !hasBody(req) &&
    !res.headersSent &&
    !socket.destroyed &&
    socket._httpMessage === res &&
    socket.parser?.incoming === req
  );
}
