import {
  archiveEtag,
  archiveExtension,
  GitRepositories,
  projectRepo,
  type CommitInfo,
  type RepoRef,
  type TreeEntry,
} from '@app/git';
import {
  CurrentActor,
  GitlabParams,
  LodeConfig,
  NotFound,
  Page,
  pageParams,
  PaginationDto,
  ToBool,
  type Actor,
} from '@app/platform';
import { ProjectAccessPolicy, ProjectQueries, type ProjectRow } from '@app/projects';
import { Controller, Get, Param, Res } from '@nestjs/common';
import { IsBoolean, IsDefined, IsOptional, IsString } from 'class-validator';
import type { Response } from 'express';

export class TreeDto extends PaginationDto {
  @IsOptional() @IsString() path?: string;
  @IsOptional() @IsString() ref?: string;
  @IsOptional() @ToBool() @IsBoolean() recursive?: boolean;
}

export class CompareDto {
  @IsDefined() @IsString() from: string;
  @IsDefined() @IsString() to: string;
}

export class ArchiveDto {
  @IsOptional() @IsString() sha?: string;
}

export class BranchesDto extends PaginationDto {
  @IsOptional() @IsString() search?: string;
}

/** GitLab's RepoCommit entity. */
export const serializeCommit = (c: CommitInfo) => ({
  id: c.id,
  short_id: c.shortId,
  title: c.title,
  created_at: c.committedDate,
  parent_ids: c.parentIds,
  message: c.message,
  author_name: c.authorName,
  author_email: c.authorEmail,
  authored_date: c.authoredDate,
  committer_name: c.committerName,
  committer_email: c.committerEmail,
  committed_date: c.committedDate,
});

const serializeEntry = (e: TreeEntry) => ({ id: e.id, name: e.name, type: e.type, path: e.path, mode: e.mode });

/**
 * Repository reads (GitLab's `lib/api/repositories.rb` and `branches.rb`), through the
 * GitRepositories port: libgit2 in process, no git process per request.
 */
@Controller('projects/:id/repository')
export class RepositoryReadsController {
  constructor(
    private readonly projects: ProjectQueries,
    private readonly git: GitRepositories,
    private readonly config: LodeConfig,
  ) {}

  /** GitLab's `download_code`: an invisible project is 404, a visible one whose code the caller may not read 403. */
  private async readable(id: string, actor: Actor | undefined): Promise<{ project: ProjectRow; repo: RepoRef }> {
    const project = await this.projects.getVisible(id, actor);
    ProjectAccessPolicy.requireDownloadCode(project, actor);
    return { project, repo: projectRepo(project.id) };
  }

  /** The default ref: the project's default branch, else what HEAD names. */
  private async defaultRef(project: ProjectRow, repo: RepoRef): Promise<string | undefined> {
    return project.default_branch ?? (await this.git.headBranch(repo));
  }

  @Get('tree')
  async tree(@Param('id') id: string, @GitlabParams() q: TreeDto, @CurrentActor() actor?: Actor) {
    const { project, repo } = await this.readable(id, actor);
    const ref = q.ref || (await this.defaultRef(project, repo));
    const entries = ref ? await this.git.tree(repo, ref, q.path ?? '', q.recursive === true) : undefined;
    if (!entries) throw new NotFound('Tree');
    const page = pageParams(q);
    return new Page(entries.slice(page.offset, page.offset + page.perPage).map(serializeEntry), entries.length, page);
  }

  @Get('blobs/:sha')
  async blob(@Param('id') id: string, @Param('sha') sha: string, @CurrentActor() actor?: Actor) {
    const { repo } = await this.readable(id, actor);
    const blob = await this.git.blob(repo, sha);
    if (!blob) throw new NotFound('Blob');
    return { size: blob.size, encoding: 'base64', content: blob.content.toString('base64'), sha: blob.sha };
  }

  /**
   * The blob's bytes, streamed. Never rendered by a browser: `nosniff` and a sandboxing policy keep HTML or
   * SVG from a repository from running on Lode's origin (GitLab 10.x sent the blob's own type).
   */
  @Get('blobs/:sha/raw')
  async raw(@Param('id') id: string, @Param('sha') sha: string, @Res() res: Response, @CurrentActor() actor?: Actor) {
    const { repo } = await this.readable(id, actor);
    const blob = await this.git.rawBlob(repo, sha);
    if (!blob) throw new NotFound('Blob');
    res.status(200);
    res.setHeader('Content-Type', blob.binary ? 'application/octet-stream' : 'text/plain; charset=utf-8');
    res.setHeader('Content-Length', String(blob.size));
    res.setHeader('Content-Disposition', 'inline');
    res.setHeader('X-Content-Type-Options', 'nosniff');
    res.setHeader('Content-Security-Policy', "sandbox; default-src 'none'");
    if ('content' in blob) return void res.end(blob.content);
    res.on('close', () => {
      if (!res.writableFinished) blob.cancel();
    });
    blob.stream.on('error', () => res.destroy());
    blob.stream.pipe(res);
  }

  @Get('archive')
  archive(@Param('id') id: string, @GitlabParams() q: ArchiveDto, @Res() res: Response, @CurrentActor() actor?: Actor) {
    return this.sendArchive(id, 'tar.gz', q, res, actor);
  }

  /** `archive.zip`, `archive.tar.bz2`, ...: GitLab's format names; any other is 404. */
  @Get('archive.:format')
  archiveAs(
    @Param('id') id: string,
    @Param('format') format: string,
    @GitlabParams() q: ArchiveDto,
    @Res() res: Response,
    @CurrentActor() actor?: Actor,
  ) {
    return this.sendArchive(id, format, q, res, actor);
  }

  /**
   * The tree of a commit as one archive with a single top directory `<project path>-<ref>-<sha>`
   * (GitLab's `archive_prefix`), streamed from `git archive` and cached per commit and format.
   */
  private async sendArchive(
    id: string,
    format: string,
    q: ArchiveDto,
    res: Response,
    actor: Actor | undefined,
  ): Promise<void> {
    const { project, repo } = await this.readable(id, actor);
    const ext = archiveExtension(format);
    if (!ext) throw new NotFound();
    const ref = q.sha || (await this.defaultRef(project, repo));
    const commit = ref ? await this.git.resolveCommit(repo, ref) : undefined;
    if (!ref || !commit) throw new NotFound('File');
    const prefix = `${project.path}-${ref.replace(/\//g, '-')}-${commit.id}`;
    const etag = archiveEtag(repo, commit.id, ext, prefix);
    res.setHeader('ETag', etag);
    if (res.req.headers['if-none-match'] === etag) return void res.status(304).end();
    const archive = await this.git.archive(repo, commit.id, ext, prefix);
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

  /** GitLab 10.x: an unknown `from` or `to` gives an empty comparison (200), not a 404. */
  @Get('compare')
  async compare(@Param('id') id: string, @GitlabParams() q: CompareDto, @CurrentActor() actor?: Actor) {
    const { repo } = await this.readable(id, actor);
    const c = await this.git.compare(repo, q.from, q.to, {
      maxFiles: this.config.compareMaxFiles,
      maxLines: this.config.compareMaxLines,
      maxBytes: this.config.compareMaxBytes,
    });
    const commits = c.commits.map(serializeCommit);
    return {
      commit: commits.length ? commits[commits.length - 1] : null,
      commits,
      diffs: c.diffs.map((d) => ({
        old_path: d.oldPath,
        new_path: d.newPath,
        a_mode: d.aMode,
        b_mode: d.bMode,
        new_file: d.newFile,
        renamed_file: d.renamedFile,
        deleted_file: d.deletedFile,
        diff: d.diff,
      })),
      compare_timeout: c.overflow,
      compare_same_ref: c.same,
    };
  }

  @Get('contributors')
  async contributors(@Param('id') id: string, @GitlabParams() q: PaginationDto, @CurrentActor() actor?: Actor) {
    const { project, repo } = await this.readable(id, actor);
    const ref = await this.defaultRef(project, repo);
    const all = ref ? await this.git.contributors(repo, ref) : [];
    const page = pageParams(q);
    return new Page(all.slice(page.offset, page.offset + page.perPage), all.length, page);
  }

  @Get('branches')
  async branches(@Param('id') id: string, @GitlabParams() q: BranchesDto, @CurrentActor() actor?: Actor) {
    const { project, repo } = await this.readable(id, actor);
    const search = q.search?.toLowerCase();
    const all = (await this.git.branches(repo, await this.defaultRef(project, repo))).filter(
      (b) => !search || b.name.toLowerCase().includes(search),
    );
    const page = pageParams(q);
    return new Page(
      all.slice(page.offset, page.offset + page.perPage).map((b) => serializeBranch(b)),
      all.length,
      page,
    );
  }

  /** `:branch` may hold slashes when encoded (`feature%2Fx`); Express decodes the parameter. */
  @Get('branches/:branch')
  async branch(@Param('id') id: string, @Param('branch') name: string, @CurrentActor() actor?: Actor) {
    const { project, repo } = await this.readable(id, actor);
    const branch = (await this.git.branches(repo, await this.defaultRef(project, repo))).find((b) => b.name === name);
    if (!branch) throw new NotFound('Branch');
    return serializeBranch(branch);
  }
}

/** GitLab 10.x's Branch entity: no protected branches in Lode, so never protected. */
function serializeBranch(b: { name: string; commit: CommitInfo; merged: boolean }) {
  return {
    name: b.name,
    commit: serializeCommit(b.commit),
    merged: b.merged,
    protected: false,
    developers_can_push: false,
    developers_can_merge: false,
  };
}
