import { GitRepositories, projectRepo, validRefName, type CommitInfo } from '@app/git';
import { ACCESS } from '@app/groups';
import {
  ApiError,
  BadParameter,
  BadRequestMessage,
  Clock,
  Conflict,
  CurrentActor,
  Forbidden,
  GitlabParams,
  LodeConfig,
  Nullable,
  NotFound,
  Page,
  pageParams,
  PaginationDto,
  validateParams,
  type Actor,
} from '@app/platform';
import {
  CreateRelease,
  DeleteRelease,
  LINK_TYPES,
  ProjectAccessPolicy,
  ProjectQueries,
  ReleaseQueries,
  UpdateRelease,
  ZERO_SHA,
  type AuthorizedProject,
  type LinkType,
  type ProjectRow,
  type ReleaseChanges,
  type ReleaseLinkValues,
  type ReleaseRow,
} from '@app/projects';
import { serializeUserBasic, UserQueries, type UserBasicJson } from '@app/users';
import { Controller, Delete, Get, HttpCode, Param, Post, Put } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import { ApiBody } from '@nestjs/swagger';
import { IsArray, IsDefined, IsIn, IsISO8601, IsObject, IsOptional, IsString } from 'class-validator';
import { BranchWriteRefused, RepositoryWrites } from '../writes/repository-writes';
import { serializeProjectRelease, type ProjectReleaseJson } from './release.serializer';

export class ListReleasesDto extends PaginationDto {
  @IsOptional() @IsIn(['released_at', 'created_at']) order_by?: 'released_at' | 'created_at';
  @IsOptional() @IsIn(['asc', 'desc']) sort?: 'asc' | 'desc';
}

export class CreateReleaseDto {
  @IsDefined() @IsString() tag_name: string;
  @IsOptional() @IsString() name?: string;
  @IsOptional() @IsString() description?: string;
  @IsOptional() @IsString() ref?: string;
  @IsOptional() @IsString() tag_message?: string;
  @IsOptional() @IsISO8601() released_at?: string;
  /** `{"links": [{"name", "url", "direct_asset_path" | "filepath", "link_type"}]}`. */
  @IsOptional() @IsObject() assets?: { links?: unknown };
  @IsOptional() milestones?: string[] | string;
}

export class UpdateReleaseDto {
  @IsOptional() @Nullable() @IsString() name?: string | null;
  @IsOptional() @Nullable() @IsString() description?: string | null;
  @IsOptional() @IsISO8601() released_at?: string;
  @IsOptional() @IsArray() milestones?: string[];
}

/** Where the link parameters of the Releases API (and its links API) come from, whichever spelling a client uses. */
export interface LinkParams {
  name?: unknown;
  url?: unknown;
  direct_asset_path?: unknown;
  filepath?: unknown;
  link_type?: unknown;
}

/**
 * `direct_asset_path` (15.9) or the older `filepath` it replaced (`Releases::Links::Params`: the new
 * name wins), stored as the model's `filepath`; blank means none.
 */
export function filepathOf(p: LinkParams): string | null | undefined {
  const given = p.direct_asset_path ?? p.filepath;
  if (given === undefined) return undefined;
  return typeof given === 'string' && given !== '' ? given : null;
}

/**
 * The `assets[links]` of a new release, checked as Grape checks them (`requires :name, :url`,
 * `link_type` one of the types): 400 `{"error": ...}` otherwise.
 */
function linksOfNewRelease(assets: { links?: unknown } | undefined): ReleaseLinkValues[] {
  const links = assets?.links;
  if (links === undefined) return [];
  if (!Array.isArray(links)) throw new BadParameter('assets[links] is invalid');
  return links.map((raw: unknown) => {
    const l = (raw && typeof raw === 'object' ? raw : {}) as LinkParams;
    if (l.name === undefined) throw new BadParameter('assets[links][name] is missing');
    if (l.url === undefined) throw new BadParameter('assets[links][url] is missing');
    if (typeof l.name !== 'string') throw new BadParameter('assets[links][name] is invalid');
    if (typeof l.url !== 'string') throw new BadParameter('assets[links][url] is invalid');
    const linkType = l.link_type ?? 'other';
    if (!LINK_TYPES.includes(linkType as LinkType))
      throw new BadParameter('assets[links][link_type] does not have a valid value');
    return { name: l.name, url: l.url, filepath: filepathOf(l) ?? null, linkType: linkType as LinkType };
  });
}

/** GitLab has no milestones in Lode: any named is unknown (`Releases::BaseService#inexistent_milestones`). */
function refuseMilestones(milestones: string[] | string | undefined): void {
  const titles = (Array.isArray(milestones) ? milestones : (milestones ?? '').split(',')).map((m) => `${m}`.trim());
  const named = titles.filter(Boolean);
  if (named.length) throw new ApiError(400, `Milestone(s) not found: ${named.join(', ')}`);
}

/** `create_release` / `update_release` (developers and up) and `destroy_release` (maintainers), never on an archived project. */
export function releaseWriter<L extends number>(
  projects: ProjectQueries,
  project: ProjectRow,
  actor: Actor | undefined,
  level: L,
): AuthorizedProject<L> {
  const authorized = projects.authorize(project, actor, level);
  if (authorized.archived) throw new Forbidden();
  return authorized;
}

/**
 * GitLab's Releases API (`lib/api/releases.rb`, 11.7): the project's releases, one per tag, the same
 * rows 10.x's tag release notes write. A tag name with a slash is URL-encoded. Reading needs the
 * project (404 otherwise); `GET` of one release also needs the code (403 for a guest of a private
 * project); writing needs a developer (a maintainer to delete).
 */
@Controller('projects/:id/releases')
export class ReleasesController {
  constructor(
    private readonly projects: ProjectQueries,
    private readonly releases: ReleaseQueries,
    private readonly git: GitRepositories,
    private readonly writes: RepositoryWrites,
    private readonly users: UserQueries,
    private readonly commands: CommandBus,
    private readonly config: LodeConfig,
    private readonly clock: Clock,
  ) {}

  /** GitLab's ReleasesFinder: `order_by` released_at (default) or created_at, `sort` desc (default) or asc. */
  @Get()
  async list(@Param('id') id: string, @GitlabParams() q: ListReleasesDto, @CurrentActor() actor?: Actor) {
    const project = await this.projects.getVisible(id, actor);
    const page = pageParams(q);
    const { rows, total } = await this.releases.page(
      project.id,
      { orderBy: q.order_by ?? 'released_at', sort: q.sort ?? 'desc' },
      page,
    );
    return new Page(await this.present(project, rows, actor), total, page);
  }

  @Get(':tag_name')
  async get(@Param('id') id: string, @Param('tag_name') tagName: string, @CurrentActor() actor?: Actor) {
    const project = await this.projects.getVisible(id, actor);
    ProjectAccessPolicy.requireDownloadCode(project, actor);
    return this.one(project, tagName, actor);
  }

  /**
   * `Releases::CreateService`, in its order: 403 below developer, 409 `Release already exists`, 400
   * for milestones, then a missing tag is made from `ref` (422 `Ref is not specified` without one,
   * 400 with the tag service's words when it cannot be), then the release and its links (400 with
   * the model's words). 201 with the Release entity.
   */
  @Post()
  @HttpCode(201)
  @ApiBody({ type: CreateReleaseDto })
  async create(
    @Param('id') id: string,
    @GitlabParams() params: Record<string, unknown>,
    @CurrentActor() actor?: Actor,
  ) {
    const visible = await this.projects.getVisible(id, actor);
    const q = await validateParams(CreateReleaseDto, params);
    const links = linksOfNewRelease(q.assets);
    const project = releaseWriter(this.projects, visible, actor, ACCESS.developer);
    if (await this.releases.find(project.id, q.tag_name)) throw new Conflict('Release already exists');
    refuseMilestones(q.milestones);
    if (!(await this.git.tag(projectRepo(project.id), q.tag_name))) {
      if (!q.ref) throw new ApiError(422, 'Ref is not specified');
      await this.makeTag(project, actor!, q.tag_name, q.ref, q.tag_message);
    }
    const release = {
      tagName: q.tag_name,
      name: q.name ?? null,
      description: q.description ?? null,
      releasedAt: q.released_at ? new Date(q.released_at).toISOString() : null,
      authorId: actor!.id,
    };
    await this.commands.execute(new CreateRelease(project, release, links));
    return this.one(project, q.tag_name, actor);
  }

  /**
   * `Releases::UpdateService`: GitLab authorizes `update_release` on the release first, so a missing
   * release is 403 as a reporter is; then 400 `params is empty`, milestones, 404 `Tag does not exist`.
   */
  @Put(':tag_name')
  @ApiBody({ type: UpdateReleaseDto })
  async update(
    @Param('id') id: string,
    @Param('tag_name') tagName: string,
    @GitlabParams() params: Record<string, unknown>,
    @CurrentActor() actor?: Actor,
  ) {
    const visible = await this.projects.getVisible(id, actor);
    const q = await validateParams(UpdateReleaseDto, params);
    const project = releaseWriter(this.projects, visible, actor, ACCESS.developer);
    if (!(await this.releases.find(project.id, tagName))) throw new Forbidden();
    const changes: ReleaseChanges = {};
    if (q.name !== undefined) changes.name = q.name;
    if (q.description !== undefined) changes.description = q.description;
    if (q.released_at !== undefined) changes.releasedAt = new Date(q.released_at).toISOString();
    if (!Object.keys(changes).length && q.milestones === undefined) throw new ApiError(400, 'params is empty');
    refuseMilestones(q.milestones);
    if (Object.keys(changes).length) await this.commands.execute(new UpdateRelease(project, tagName, changes));
    return this.one(project, tagName, actor);
  }

  /** `Releases::DestroyService`: 200 with the release as it was; the tag stays. Missing: 403 as for PUT. */
  @Delete(':tag_name')
  async remove(@Param('id') id: string, @Param('tag_name') tagName: string, @CurrentActor() actor?: Actor) {
    const visible = await this.projects.getVisible(id, actor);
    const project = releaseWriter(this.projects, visible, actor, ACCESS.maintainer);
    const release = await this.releases.find(project.id, tagName);
    if (!release) throw new Forbidden();
    const [answer] = await this.present(project, [release], actor);
    await this.commands.execute(new DeleteRelease(project, tagName));
    return answer;
  }

  private async one(project: ProjectRow, tagName: string, actor: Actor | undefined): Promise<ProjectReleaseJson> {
    const release = await this.releases.find(project.id, tagName);
    if (!release) throw new NotFound();
    const [answer] = await this.present(project, [release], actor);
    return answer;
  }

  /** The Release entities of these rows: their links, tags' commits and authors read once for all. */
  private async present(
    project: ProjectRow,
    rows: readonly ReleaseRow[],
    actor: Actor | undefined,
  ): Promise<ProjectReleaseJson[]> {
    if (!rows.length) return [];
    const readCode = ProjectAccessPolicy.mayDownloadCode(project, actor);
    const repo = projectRepo(project.id);
    const [links, commits, authors] = await Promise.all([
      this.releases.linksOf(
        project.id,
        rows.map((r) => r.tagName),
      ),
      readCode ? this.commitsOf(repo, rows) : new Map<string, CommitInfo>(),
      this.authorsOf(rows),
    ]);
    const ctx = {
      project,
      externalUrl: this.config.externalUrl,
      readCode,
      mayUpdate: actor?.isAdmin === true || (project.access >= ACCESS.developer && !project.archived),
      now: this.clock.now(),
    };
    return rows.map((r) =>
      serializeProjectRelease(
        r,
        links.get(r.tagName) ?? [],
        commits.get(r.tagName),
        r.authorId === null ? undefined : authors.get(r.authorId),
        ctx,
      ),
    );
  }

  /** One tag read for a single release; the tag list once for a page. */
  private async commitsOf(
    repo: ReturnType<typeof projectRepo>,
    rows: readonly ReleaseRow[],
  ): Promise<Map<string, CommitInfo>> {
    const tags =
      rows.length === 1
        ? [await this.git.tag(repo, rows[0].tagName)].filter((t) => t !== undefined)
        : await this.git.tags(repo);
    return new Map(tags.map((t) => [t.name, t.commit]));
  }

  private async authorsOf(rows: readonly ReleaseRow[]): Promise<Map<number, UserBasicJson>> {
    const ids = [...new Set(rows.map((r) => r.authorId).filter((a): a is number => a !== null))];
    const urls = { externalUrl: this.config.externalUrl, gravatar: this.config.gravatar };
    const found = await Promise.all(ids.map((uid) => this.users.find(uid)));
    return new Map(found.filter((u) => u !== null).map((u) => [u.id, serializeUserBasic(u, urls)]));
  }

  /**
   * GitLab's `Tags::CreateService` as the release service calls it: a lightweight tag, or an annotated
   * one with `tag_message` and the caller as tagger, moved through the push's one path. 400 `Tag name
   * invalid`, `Target <ref> is invalid`, `Tag <name> already exists`.
   */
  private async makeTag(
    project: ProjectRow,
    actor: Actor,
    tagName: string,
    ref: string,
    message: string | undefined,
  ): Promise<void> {
    if (!validRefName(tagName)) throw new BadRequestMessage('Tag name invalid');
    const repo = projectRepo(project.id);
    const fullRef = `refs/tags/${tagName}`;
    await this.writes.exclusive(project, fullRef, async () => {
      const refs = await this.git.refs(repo);
      if (refs.has(fullRef)) throw new BadRequestMessage(`Tag ${tagName} already exists`);
      const target = await this.git.resolveCommit(repo, ref);
      if (!target) throw new BadRequestMessage(`Target ${ref} is invalid`);
      let sha = target.id;
      const text = message?.trim();
      if (text) {
        const user = await this.users.get(actor.id);
        const tagger = { name: user.name, email: user.email, when: this.clock.now() };
        sha = await this.git.writeTagObject(repo, { name: tagName, target: target.id, message: text, tagger });
      }
      const moved = await this.writes.moveRef(project, actor, fullRef, ZERO_SHA, sha).catch((err: unknown) => {
        if (err instanceof BranchWriteRefused) throw new BadRequestMessage(err.message);
        throw err;
      });
      if (!moved) throw new BadRequestMessage(`Tag ${tagName} already exists`);
    });
  }
}
