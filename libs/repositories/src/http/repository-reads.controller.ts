import { archiveExtension, GitRepositories, type RepoRef, type TreeEntry } from '@app/git';
import {
  BadRequestMessage,
  CurrentActor,
  GitlabParams,
  LodeConfig,
  NotFound,
  Page,
  pageParams,
  PaginationDto,
  ToBool,
  ToStringArray,
  type Actor,
} from '@app/platform';
import {
  ProjectQueries,
  ProtectedBranchPolicy,
  ProtectedBranchQueries,
  PublicProjectAnswers,
  type ProjectRow,
} from '@app/projects';
import { Controller, Get, Param, Res } from '@nestjs/common';
import { IsBoolean, IsDefined, IsOptional, IsString } from 'class-validator';
import type { Response } from 'express';
import { serializeBranch } from './branch.serializer';
import { serializeCommit, serializeDiff } from './commit.serializer';
import { sendArchive } from './archive-response';
import { sendRawBlob } from './raw-response';
import { readableRepository } from './readable-repository';

export class TreeDto extends PaginationDto {
  @IsOptional() @IsString() path?: string;
  @IsOptional() @IsString() ref?: string;
  @IsOptional() @ToBool() @IsBoolean() recursive?: boolean;
}

export class CompareDto {
  @IsDefined() @IsString() from: string;
  @IsDefined() @IsString() to: string;
}

export class MergeBaseDto {
  /** `refs[]=a&refs[]=b` (python-gitlab, gitbeaker) or `refs=a,b`. */
  @IsDefined() @ToStringArray() @IsString({ each: true }) refs: string[];
}

export class ArchiveDto {
  @IsOptional() @IsString() sha?: string;
}

export class BranchesDto extends PaginationDto {
  @IsOptional() @IsString() search?: string;
}

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
    private readonly protectedBranches: ProtectedBranchQueries,
    private readonly publicProjects: PublicProjectAnswers,
  ) {}

  /** The default ref: the project's default branch, else what HEAD names. */
  private async defaultRef(project: ProjectRow, repo: RepoRef): Promise<string | undefined> {
    return project.default_branch ?? (await this.git.headBranch(repo));
  }

  @Get('tree')
  async tree(@Param('id') id: string, @GitlabParams() q: TreeDto, @CurrentActor() actor?: Actor) {
    const { project, repo } = await readableRepository(this.projects, id, actor);
    const ref = q.ref || (await this.defaultRef(project, repo));
    const entries = ref ? await this.git.tree(repo, ref, q.path ?? '', q.recursive === true) : undefined;
    if (!entries) throw new NotFound('Tree');
    const page = pageParams(q);
    return new Page(entries.slice(page.offset, page.offset + page.perPage).map(serializeEntry), entries.length, page);
  }

  @Get('blobs/:sha')
  async blob(@Param('id') id: string, @Param('sha') sha: string, @CurrentActor() actor?: Actor) {
    const { repo } = await readableRepository(this.projects, id, actor);
    const blob = await this.git.blob(repo, sha);
    if (!blob) throw new NotFound('Blob');
    return { size: blob.size, encoding: 'base64', content: blob.content.toString('base64'), sha: blob.sha };
  }

  /**
   * The blob's bytes, streamed (see sendRawBlob for the headers that keep a browser from running them).
   * An anonymous read of a public project is remembered, so the next one of a blob kept in memory is
   * answered before this route (`publicRepositoryReads`).
   */
  @Get('blobs/:sha/raw')
  async raw(@Param('id') id: string, @Param('sha') sha: string, @Res() res: Response, @CurrentActor() actor?: Actor) {
    const epoch = this.publicProjects.epoch;
    const { project, repo } = await readableRepository(this.projects, id, actor);
    const blob = await this.git.rawBlob(repo, sha);
    if (!blob) throw new NotFound('Blob');
    if (!actor && project.visibility === 'public') this.publicProjects.notePublic(project.id, epoch);
    sendRawBlob(res, blob);
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
    const { project, repo } = await readableRepository(this.projects, id, actor);
    const ext = archiveExtension(format);
    if (!ext) throw new NotFound();
    const ref = q.sha || (await this.defaultRef(project, repo));
    const commit = ref ? await this.git.resolveCommit(repo, ref) : undefined;
    if (!ref || !commit) throw new NotFound('File');
    const prefix = `${project.path}-${ref.replace(/\//g, '-')}-${commit.id}`;
    await sendArchive(this.git, res, repo, commit.id, ext, prefix);
  }

  /** GitLab 10.x: an unknown `from` or `to` gives an empty comparison (200), not a 404. */
  @Get('compare')
  async compare(@Param('id') id: string, @GitlabParams() q: CompareDto, @CurrentActor() actor?: Actor) {
    const { repo } = await readableRepository(this.projects, id, actor);
    const c = await this.git.compare(repo, q.from, q.to, {
      maxFiles: this.config.compareMaxFiles,
      maxLines: this.config.compareMaxLines,
      maxBytes: this.config.compareMaxBytes,
    });
    const commits = c.commits.map(serializeCommit);
    return {
      commit: commits.length ? commits[commits.length - 1] : null,
      commits,
      diffs: c.diffs.map(serializeDiff),
      compare_timeout: c.overflow,
      compare_same_ref: c.same,
    };
  }

  /**
   * `GET .../repository/merge_base` (GitLab 11.2, at least two refs as 12.x takes them): the Commit
   * entity of the refs' best common ancestor. 400 `Provide at least 2 refs`, 400 `Could not find
   * ref(s): a, b` for refs that name no commit, 404 `Merge Base Not Found` for unrelated histories.
   */
  @Get('merge_base')
  async mergeBase(@Param('id') id: string, @GitlabParams() q: MergeBaseDto, @CurrentActor() actor?: Actor) {
    const { repo } = await readableRepository(this.projects, id, actor);
    if (q.refs.length < 2) throw new BadRequestMessage('Provide at least 2 refs');
    const commits = await Promise.all(q.refs.map((ref) => this.git.resolveCommit(repo, ref)));
    const unknown = q.refs.filter((_, i) => !commits[i]);
    if (unknown.length)
      throw new BadRequestMessage(`Could not find ${unknown.length === 1 ? 'ref' : 'refs'}: ${unknown.join(', ')}`);
    const base = await this.git.mergeBase(
      repo,
      commits.map((c) => c!.id),
    );
    const commit = base && (await this.git.resolveCommit(repo, base));
    if (!commit) throw new NotFound('Merge Base');
    return serializeCommit(commit);
  }

  @Get('contributors')
  async contributors(@Param('id') id: string, @GitlabParams() q: PaginationDto, @CurrentActor() actor?: Actor) {
    const { project, repo } = await readableRepository(this.projects, id, actor);
    const ref = await this.defaultRef(project, repo);
    const all = ref ? await this.git.contributors(repo, ref) : [];
    const page = pageParams(q);
    return new Page(all.slice(page.offset, page.offset + page.perPage), all.length, page);
  }

  /** GitLab 10.x's `search`: a case-insensitive substring of the name. Sorted by name, as git lists them. */
  @Get('branches')
  async branches(@Param('id') id: string, @GitlabParams() q: BranchesDto, @CurrentActor() actor?: Actor) {
    const { project, repo } = await readableRepository(this.projects, id, actor);
    const search = q.search?.toLowerCase();
    const main = await this.defaultRef(project, repo);
    const [branches, rules] = await Promise.all([
      this.git.branches(repo, main),
      this.protectedBranches.forProject(project.id),
    ]);
    const all = branches.filter((b) => !search || b.name.toLowerCase().includes(search));
    const page = pageParams(q);
    return new Page(
      all
        .slice(page.offset, page.offset + page.perPage)
        .map((b) => serializeBranch(b, main, ProtectedBranchPolicy.branchFlags(rules, b.name))),
      all.length,
      page,
    );
  }

  /** `:branch` may hold slashes when encoded (`feature%2Fx`); Express decodes the parameter. */
  @Get('branches/:branch')
  async branch(@Param('id') id: string, @Param('branch') name: string, @CurrentActor() actor?: Actor) {
    const { project, repo } = await readableRepository(this.projects, id, actor);
    const main = await this.defaultRef(project, repo);
    const branch = (await this.git.branches(repo, main)).find((b) => b.name === name);
    if (!branch) throw new NotFound('Branch');
    const rules = await this.protectedBranches.forProject(project.id);
    return serializeBranch(branch, main, ProtectedBranchPolicy.branchFlags(rules, branch.name));
  }
}
