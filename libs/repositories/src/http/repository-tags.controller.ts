import { GitRepositories, type Tag } from '@app/git';
import {
  CurrentActor,
  GitlabParams,
  NotFound,
  Page,
  pageParams,
  PaginationDto,
  validateParams,
  type Actor,
} from '@app/platform';
import { CreateTagRelease, ProjectQueries, ReleaseQueries, UpdateTagRelease } from '@app/projects';
import { Controller, Get, HttpCode, Param, Post, Put } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import { ApiBody } from '@nestjs/swagger';
import { IsDefined, IsIn, IsOptional, IsString } from 'class-validator';
import { readableRepository } from './readable-repository';
import { serializeRelease, serializeTag } from './tag.serializer';

export class TagsDto extends PaginationDto {
  @IsOptional() @IsIn(['name', 'updated']) order_by?: 'name' | 'updated';
  @IsOptional() @IsIn(['asc', 'desc']) sort?: 'asc' | 'desc';
  @IsOptional() @IsString() search?: string;
}

export class TagReleaseDto {
  @IsDefined() @IsString() description: string;
}

/** Runs of digits compare as numbers (`v1.10` after `v1.9`), as GitLab's VersionSorter orders tag names. */
function compareVersions(a: string, b: string): number {
  const split = (s: string) => s.match(/\d+|\D+/g) ?? [];
  const x = split(a);
  const y = split(b);
  for (let i = 0; i < Math.min(x.length, y.length); i++) {
    const numeric = /^\d/.test(x[i]) && /^\d/.test(y[i]);
    const c = numeric ? Number(x[i]) - Number(y[i]) : x[i] < y[i] ? -1 : x[i] > y[i] ? 1 : 0;
    if (c) return c;
  }
  return x.length - y.length || (a < b ? -1 : a > b ? 1 : 0);
}

/**
 * Later GitLab's tag `search` (10.x has none): a case-insensitive substring, `^v1` for a prefix and
 * `rc$` for a suffix.
 */
function matches(name: string, search: string): boolean {
  const n = name.toLowerCase();
  const s = search.toLowerCase();
  if (s.startsWith('^')) return n.startsWith(s.slice(1));
  if (s.endsWith('$')) return n.endsWith(s.slice(0, -1));
  return n.includes(s);
}

/** GitLab's tags API (`lib/api/tags.rb`), its reads. A tag name with a slash is URL-encoded. */
@Controller('projects/:id/repository/tags')
export class RepositoryTagsController {
  constructor(
    private readonly projects: ProjectQueries,
    private readonly git: GitRepositories,
    private readonly releases: ReleaseQueries,
    private readonly commands: CommandBus,
  ) {}

  /**
   * GitLab 10.x's TagsFinder: `order_by` `updated` (the tagged commit's date, the default) or `name`
   * (version order), `sort` `desc` (the default) or `asc`.
   */
  @Get()
  async list(@Param('id') id: string, @GitlabParams() q: TagsDto, @CurrentActor() actor?: Actor) {
    const { project, repo } = await readableRepository(this.projects, id, actor);
    const search = q.search;
    const tags = (await this.git.tags(repo)).filter((t) => !search || matches(t.name, search));
    const byDate = (a: Tag, b: Tag) => Date.parse(a.commit.committedDate) - Date.parse(b.commit.committedDate);
    tags.sort(q.order_by === 'name' ? (a, b) => compareVersions(a.name, b.name) : byDate);
    if ((q.sort ?? 'desc') === 'desc') tags.reverse();
    const page = pageParams(q);
    const shown = tags.slice(page.offset, page.offset + page.perPage);
    const releases = await this.releases.forTags(
      project.id,
      shown.map((t) => t.name),
    );
    return new Page(
      shown.map((t) => serializeTag(t, releases.get(t.name))),
      tags.length,
      page,
    );
  }

  @Get(':tag_name')
  async get(@Param('id') id: string, @Param('tag_name') name: string, @CurrentActor() actor?: Actor) {
    const { project, repo } = await readableRepository(this.projects, id, actor);
    const tag = await this.git.tag(repo, name);
    if (!tag) throw new NotFound('Tag');
    const releases = await this.releases.forTags(project.id, [tag.name]);
    return serializeTag(tag, releases.get(tag.name));
  }

  /**
   * Adds release notes to a tag (10.x `CreateReleaseService`): 201 with the Release entity; a tag the
   * repository lacks is 404 `Tag does not exist`, a tag with notes 409 `Release already exists`.
   */
  @Post(':tag_name/release')
  @HttpCode(201)
  @ApiBody({ type: TagReleaseDto })
  createRelease(
    @Param('id') id: string,
    @Param('tag_name') name: string,
    @GitlabParams() params: Record<string, unknown>,
    @CurrentActor() actor?: Actor,
  ) {
    return this.changeRelease('create', id, name, params, actor);
  }

  /** Replaces a tag's release notes (10.x `UpdateReleaseService`): 404 `Release does not exist` without them. */
  @Put(':tag_name/release')
  @ApiBody({ type: TagReleaseDto })
  updateRelease(
    @Param('id') id: string,
    @Param('tag_name') name: string,
    @GitlabParams() params: Record<string, unknown>,
    @CurrentActor() actor?: Actor,
  ) {
    return this.changeRelease('update', id, name, params, actor);
  }

  /**
   * In Grape's order: the tags API's `before` (`download_code`: 404 for an invisible project, 403 for
   * code the caller may not read), then the parameters (400 `description is missing`), then the
   * command's `authorize_push_project` and the tag and release checks.
   */
  private async changeRelease(
    kind: 'create' | 'update',
    id: string,
    tagName: string,
    params: Record<string, unknown>,
    actor: Actor | undefined,
  ) {
    const { project } = await readableRepository(this.projects, id, actor);
    const { description } = await validateParams(TagReleaseDto, params);
    const release = await this.commands.execute(
      kind === 'create'
        ? new CreateTagRelease(project.id, { tagName, description }, actor)
        : new UpdateTagRelease(project.id, { tagName, description }, actor),
    );
    return serializeRelease(release);
  }
}
