import { archiveEtag, type ArchiveExtension, type GitRepositories, type RepoRef } from '@app/git';
import type { Response } from 'express';

/**
 * Sends the archive of a commit whose single top directory is `prefix`, as
 * `GET /projects/:id/repository/archive` and the web pages' `/-/archive/` path both do: an ETag
 * known before the archive is made (304 for a client that has it), then the cached file streamed
 * whole (GitRepositories.archive: one `git archive` per archive in the work budget's slots).
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
  res.status(200);
  res.setHeader('Content-Type', 'application/octet-stream');
  res.setHeader('Content-Disposition', `attachment; filename="${prefix.replace(/["\\]/g, '_')}.${ext}"`);
  res.setHeader('Content-Transfer-Encoding', 'binary');
  if (archive.size !== undefined) res.setHeader('Content-Length', String(archive.size));
  res.on('close', () => {
    if (!res.writableFinished) archive.stream.destroy();
  });
  archive.stream.on('error', () => res.destroy());
  archive.stream.pipe(res);
}
