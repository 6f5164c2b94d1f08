import { archiveEtag, type ArchiveExtension, type GitRepositories, type RepoRef } from '@app/git';
import { markAnsweredElsewhere, responseHead } from '@app/platform';
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
  const socket = res.req.socket;
  // Only a GET whose request is wholly read: a body or a pipelined request left unread in the
  // connection would make its close a reset, which can cut the answer short.
  if (res.req.method === 'GET' && res.req.complete && !hasBody(res) && !res.headersSent && !socket.destroyed) {
    const head = responseHead(res, 200);
    markAnsweredElsewhere(res, 200);
    if (await archive.sendTo(socket, head)) return;
    markAnsweredElsewhere(res, false);
  }
  res.status(200);
  const stream = archive.read();
  res.on('close', () => {
    if (!res.writableFinished) stream.destroy();
  });
  stream.on('error', () => res.destroy());
  stream.pipe(res);
}

const hasBody = (res: Response) =>
  res.req.headers['transfer-encoding'] !== undefined || Number(res.req.headers['content-length'] ?? 0) > 0;
