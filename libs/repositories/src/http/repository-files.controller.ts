import { GitRepositories, type FileEntry, type RepoRef } from '@app/git';
import { CurrentActor, GitlabParams, NotFound, plainlyAnonymous, type Actor } from '@app/platform';
import { ProjectQueries, PublicProjectAnswers } from '@app/projects';
import { Controller, Get, Head, Param, Req, Res } from '@nestjs/common';
import { IsDefined, IsString } from 'class-validator';
import type { Request, Response } from 'express';
import { createHash } from 'node:crypto';
import { serializeBlameRange } from './commit.serializer';
import { FILE_URL } from './public-repository-reads';
import { sendRawBlob } from './raw-response';
import { readableRepository } from './readable-repository';

/** GitLab 10.x requires `ref` on every file read (`{"error":"ref is missing"}`); later GitLab defaults raw to HEAD. */
export class FileDto {
  @IsDefined() @IsString() ref: string;
}

/** GitLab's file metadata (`blob_data` in `lib/api/files.rb`), the body's keys and the X-Gitlab-* headers. */
interface FileData {
  file_name: string;
  file_path: string;
  size: number;
  encoding: 'base64';
  content_sha256?: string;
  ref: string;
  blob_id: string;
  commit_id: string;
  last_commit_id: string | null;
}

/**
 * Header values are ASCII: a character outside printable ASCII (a UTF-8 file name, a control character a
 * git path may hold) is percent-encoded, `naïve.md` as `na%C3%AFve.md`. GitLab sends the raw UTF-8
 * bytes, but Node writes header bytes as UTF-8 or Latin-1 depending on the body that follows, so only
 * ASCII arrives the same on every answer (JSON, HEAD and raw).
 */
const headerValue = (value: string) =>
  // Through a Buffer rather than encodeURIComponent, which throws on a lone surrogate.
  value.replace(/[^\x20-\x7e]+/g, (run) =>
    [...Buffer.from(run, 'utf8')].map((b) => `%${b.toString(16).toUpperCase().padStart(2, '0')}`).join(''),
  );

/** GitLab's `set_http_headers`: `file_name` becomes `X-Gitlab-File-Name`, and so on for every key. */
function fileHeaders(data: FileData): [string, string][] {
  const headers: [string, string][] = [];
  for (const [key, value] of Object.entries(data)) {
    if (value === undefined) continue;
    const name = key
      .split('_')
      .map((w) => w.charAt(0).toUpperCase() + w.slice(1))
      .join('-');
    headers.push([`X-Gitlab-${name}`, headerValue(String(value ?? ''))]);
  }
  return headers;
}

/** Sets them on the answer, and answers them (the files API keeps them beside a kept body). */
function setFileHeaders(res: Response, data: FileData): [string, string][] {
  const headers = fileHeaders(data);
  for (const [name, value] of headers) res.setHeader(name, value);
  return headers;
}

/**
 * GitLab's repository files API (`lib/api/files.rb`), its reads. `:file_path` is URL-encoded
 * (`src%2Fmain.ts`), which Express decodes. An unknown `ref` is `404 Commit Not Found`, a path that
 * is no file at that commit (missing, a directory, a submodule) `404 File Not Found`.
 */
@Controller('projects/:id/repository/files')
export class RepositoryFilesController {
  constructor(
    private readonly projects: ProjectQueries,
    private readonly git: GitRepositories,
    private readonly publicProjects: PublicProjectAnswers,
  ) {}

  /** GitLab's `assign_file_vars!`: the caller may read the code and the ref names a commit. */
  private async commitOf(id: string, ref: string, actor: Actor | undefined) {
    const { repo } = await readableRepository(this.projects, id, actor);
    const commit = await this.git.resolveCommit(repo, ref);
    if (!commit) throw new NotFound('Commit');
    return { repo, commit };
  }

  /** The file read whole at the ref, and its metadata: the JSON answer, HEAD and blame. */
  private async wholeFile(id: string, path: string, ref: string, actor: Actor | undefined) {
    const { project, repo } = await readableRepository(this.projects, id, actor);
    // Ref, commit and blob in one read (small blobs: the raw endpoint's cat-file process).
    const found = await this.git.fileAtRef(repo, ref, path);
    if (!found) throw new NotFound('Commit');
    const { commitId, file } = found;
    if (!file) throw new NotFound('File');
    const sha256 = createHash('sha256').update(file.content).digest('hex');
    const data = await this.data(repo, ref, commitId, file, file.content.length, sha256);
    return { project, repo, commitId, file, data };
  }

  private async data(repo: RepoRef, ref: string, commitId: string, file: FileEntry, size: number, sha256?: string) {
    return {
      file_name: file.name,
      file_path: file.path,
      size,
      encoding: 'base64',
      content_sha256: sha256,
      ref,
      blob_id: file.blobId,
      commit_id: commitId,
      last_commit_id: (await this.git.lastCommitFor(repo, commitId, file.path)) ?? null,
    } satisfies FileData;
  }

  /**
   * The metadata only, in GitLab's X-Gitlab-* headers, and no body. Declared before GET: Express lets a
   * GET route answer HEAD when it comes first.
   */
  @Head(':file_path')
  async head(
    @Param('id') id: string,
    @Param('file_path') path: string,
    @GitlabParams() q: FileDto,
    @Res() res: Response,
    @CurrentActor() actor?: Actor,
  ): Promise<void> {
    setFileHeaders(res, (await this.wholeFile(id, path, q.ref, actor)).data);
    res.setHeader('Content-Type', 'application/json');
    res.status(200).end();
  }

  /**
   * The file whole, base64, with its metadata; the same metadata in X-Gitlab-* headers. An anonymous
   * answer of a public project is kept by its URL, so the next one is answered before this route
   * (`publicRepositoryReads`) until an event names the project (a ref move is one).
   */
  @Get(':file_path')
  async get(
    @Param('id') id: string,
    @Param('file_path') path: string,
    @GitlabParams() q: FileDto,
    @Req() req: Request,
    @Res({ passthrough: true }) res: Response,
    @CurrentActor() actor?: Actor,
  ) {
    const epoch = this.publicProjects.epoch;
    const { project, file, data } = await this.wholeFile(id, path, q.ref, actor);
    const headers = setFileHeaders(res, data);
    const answer = { ...data, content: file.content.toString('base64') };
    if (!actor && project.visibility === 'public' && this.answersItsUrl(req, q.ref))
      this.publicProjects.keepUrl(
        project.id,
        req.originalUrl,
        { body: Buffer.from(JSON.stringify(answer)), headers: [...headers.flat(), 'Content-Type', 'application/json'] },
        epoch,
      );
    return answer;
  }

  /**
   * The file's bytes, streamed as the raw blob endpoint streams them, with the X-Gitlab-* headers.
   * X-Gitlab-Content-Sha256 is sent for a file read whole (up to the raw blob threshold) and left out
   * for a streamed one, whose digest would need the whole file before the first byte.
   */
  @Get(':file_path/raw')
  async raw(
    @Param('id') id: string,
    @Param('file_path') path: string,
    @GitlabParams() q: FileDto,
    @Res() res: Response,
    @CurrentActor() actor?: Actor,
  ): Promise<void> {
    const { repo, commit } = await this.commitOf(id, q.ref, actor);
    const file = await this.git.fileEntry(repo, commit.id, path);
    if (!file) throw new NotFound('File');
    const blob = await this.git.rawBlob(repo, file.blobId);
    if (!blob) throw new NotFound('File');
    const sha256 = 'content' in blob ? createHash('sha256').update(blob.content).digest('hex') : undefined;
    setFileHeaders(res, await this.data(repo, q.ref, commit.id, file, blob.size, sha256));
    sendRawBlob(res, blob);
  }

  /**
   * Whether the answer is the one every anonymous GET of this URL gets: the URL is the middleware's, no
   * body or credential header was sent, and the `ref` read is the URL's own (a body's parameters are
   * laid over the query's, and one caller's body must not choose what the next caller reads).
   */
  private answersItsUrl(req: Request, ref: string): boolean {
    const url = req.originalUrl;
    if (!FILE_URL.test(url) || !plainlyAnonymous(req)) return false;
    return new URL(url, 'http://lode').searchParams.get('ref') === ref;
  }

  /** GitLab's blame: ranges of consecutive lines last changed by one commit, top to bottom. */
  @Get(':file_path/blame')
  async blame(
    @Param('id') id: string,
    @Param('file_path') path: string,
    @GitlabParams() q: FileDto,
    @Res({ passthrough: true }) res: Response,
    @CurrentActor() actor?: Actor,
  ) {
    const { repo, commitId, file, data } = await this.wholeFile(id, path, q.ref, actor);
    setFileHeaders(res, data);
    return (await this.git.blame(repo, commitId, file.path)).map(serializeBlameRange);
  }
}
