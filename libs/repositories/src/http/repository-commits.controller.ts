import { GitRepositories } from '@app/git';
import {
  BadParameter,
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
import { ProjectQueries } from '@app/projects';
import { CommitSignatures } from '@app/users';
import { Controller, Get, Param } from '@nestjs/common';
import { IsBoolean, IsIn, IsISO8601, IsOptional, IsString } from 'class-validator';
import {
  serializeCommit,
  serializeCommitDetail,
  serializeCommitSignature,
  serializeCommitWithStats,
  serializeDiff,
  serializeRef,
} from './commit.serializer';
import { readableRepository } from './readable-repository';

export class CommitsDto extends PaginationDto {
  @IsOptional() @IsString() ref_name?: string;
  @IsOptional() @IsISO8601() since?: string;
  @IsOptional() @IsISO8601() until?: string;
  @IsOptional() @IsString() path?: string;
  @IsOptional() @ToBool() @IsBoolean() all?: boolean;
  @IsOptional() @ToBool() @IsBoolean() with_stats?: boolean;
}

export class CommitDto {
  @IsOptional() @ToBool() @IsBoolean() stats?: boolean;
}

export class CommitRefsDto extends PaginationDto {
  @IsOptional() @IsIn(['branch', 'tag', 'all']) type?: 'branch' | 'tag' | 'all';
}

/** An ISO 8601 time JavaScript can hold (`+275760-09-14` passes the format and is no Date): else Grape's 400. */
function date(name: string, value: string | undefined): Date | undefined {
  if (value === undefined) return undefined;
  const d = new Date(value);
  if (Number.isNaN(d.getTime())) throw new BadParameter(`${name} is invalid`);
  return d;
}

/**
 * GitLab's commits API (`lib/api/commits.rb`), its reads: the list, one commit, its diff and the refs
 * containing it. `:sha` is a commit id (full or abbreviated), a branch or a tag; a name with a slash is
 * URL-encoded (`feature%2Fx`). Reads write no events.
 */
@Controller('projects/:id/repository/commits')
export class RepositoryCommitsController {
  constructor(
    private readonly projects: ProjectQueries,
    private readonly git: GitRepositories,
    private readonly config: LodeConfig,
    private readonly signatures: CommitSignatures,
  ) {}

  /**
   * Newest first, from `ref_name` (the default branch when absent; every ref with `all`), limited by
   * `path` and by commit date (`since`, `until`). An unknown ref lists nothing (GitLab 10.x's
   * `raw_log`). The git port reads only up to the page asked for and keeps the total per commit.
   */
  @Get()
  async list(@Param('id') id: string, @GitlabParams() q: CommitsDto, @CurrentActor() actor?: Actor) {
    const { project, repo } = await readableRepository(this.projects, id, actor);
    const page = pageParams(q);
    const ref = q.all
      ? undefined
      : q.ref_name || project.default_branch || (await this.git.headBranch(repo)) || 'master';
    const log = await this.git.commitLog(repo, {
      ref,
      all: q.all === true,
      path: q.path,
      since: date('since', q.since),
      until: date('until', q.until),
      offset: page.offset,
      limit: page.perPage,
      withStats: q.with_stats === true,
    });
    const items = log.commits.map((c) => (q.with_stats ? serializeCommitWithStats(c) : serializeCommit(c)));
    return new Page(items, log.total, page);
  }

  @Get(':sha')
  async get(
    @Param('id') id: string,
    @Param('sha') sha: string,
    @GitlabParams() q: CommitDto,
    @CurrentActor() actor?: Actor,
  ) {
    const { project, repo } = await readableRepository(this.projects, id, actor);
    const commit = await this.git.resolveCommit(repo, sha);
    if (!commit) throw new NotFound('Commit');
    const stats = q.stats === false ? undefined : await this.git.commitStats(repo, commit.id);
    return serializeCommitDetail(commit, project.id, stats);
  }

  /**
   * The commit's changes against its first parent, whole (GitLab 10.x answers an unpaginated list; later
   * GitLab pages it), cut at the compare limits (LODE_COMPARE_MAX_*) as compare is.
   */
  @Get(':sha/diff')
  async diff(@Param('id') id: string, @Param('sha') sha: string, @CurrentActor() actor?: Actor) {
    const { repo } = await readableRepository(this.projects, id, actor);
    const commit = await this.git.resolveCommit(repo, sha);
    if (!commit) throw new NotFound('Commit');
    const { diffs } = await this.git.commitDiff(repo, commit.id, {
      maxFiles: this.config.compareMaxFiles,
      maxLines: this.config.compareMaxLines,
      maxBytes: this.config.compareMaxBytes,
    });
    return diffs.map(serializeDiff);
  }

  /** Branches, then tags, containing the commit (GitLab 10.6), each sorted by name; paginated. */
  @Get(':sha/refs')
  async refs(
    @Param('id') id: string,
    @Param('sha') sha: string,
    @GitlabParams() q: CommitRefsDto,
    @CurrentActor() actor?: Actor,
  ) {
    const { repo } = await readableRepository(this.projects, id, actor);
    const commit = await this.git.resolveCommit(repo, sha);
    if (!commit) throw new NotFound('Commit');
    const type = q.type ?? 'all';
    const refs = (await this.git.refsContaining(repo, commit.id)).filter((r) => type === 'all' || r.type === type);
    const page = pageParams(q);
    return new Page(refs.slice(page.offset, page.offset + page.perPage).map(serializeRef), refs.length, page);
  }

  /**
   * GitLab 10.7's GPG signature of a commit (`commits.rb`, `not_found! 'Signature' unless signature`):
   * the `gpgsig` header checked against the keys users registered. Lode computes it on each read
   * (GitLab caches it in `gpg_signatures`), so a key added or removed later changes the answer at once.
   */
  @Get(':sha/signature')
  async signature(@Param('id') id: string, @Param('sha') sha: string, @CurrentActor() actor?: Actor) {
    const { repo } = await readableRepository(this.projects, id, actor);
    const commit = await this.git.resolveCommit(repo, sha);
    if (!commit) throw new NotFound('Commit');
    const signed = await this.git.commitSignature(repo, commit.id);
    const signature =
      signed && (await this.signatures.verify(signed.signature, signed.signedData, commit.committerEmail));
    if (!signature) throw new NotFound('Signature');
    return serializeCommitSignature(signature);
  }
}
