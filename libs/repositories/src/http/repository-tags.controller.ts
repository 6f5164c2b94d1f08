import { GitRepositories, type Tag } from '@app/git';
import { CurrentActor, GitlabParams, NotFound, Page, pageParams, PaginationDto, type Actor } from '@app/platform';
import { ProjectQueries } from '@app/projects';
import { Controller, Get, Param } from '@nestjs/common';
import { IsIn, IsOptional, IsString } from 'class-validator';
import { readableRepository } from './readable-repository';
import { serializeTag } from './tag.serializer';

export class TagsDto extends PaginationDto {
  @IsOptional() @IsIn(['name', 'updated']) order_by?: 'name' | 'updated';
  @IsOptional() @IsIn(['asc', 'desc']) sort?: 'asc' | 'desc';
  @IsOptional() @IsString() search?: string;
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
  ) {}

  /**
   * GitLab 10.x's TagsFinder: `order_by` `updated` (the tagged commit's date, the default) or `name`
   * (version order), `sort` `desc` (the default) or `asc`.
   */
  @Get()
  async list(@Param('id') id: string, @GitlabParams() q: TagsDto, @CurrentActor() actor?: Actor) {
    const { repo } = await readableRepository(this.projects, id, actor);
    const search = q.search;
    const tags = (await this.git.tags(repo)).filter((t) => !search || matches(t.name, search));
    const byDate = (a: Tag, b: Tag) => Date.parse(a.commit.committedDate) - Date.parse(b.commit.committedDate);
    tags.sort(q.order_by === 'name' ? (a, b) => compareVersions(a.name, b.name) : byDate);
    if ((q.sort ?? 'desc') === 'desc') tags.reverse();
    const page = pageParams(q);
    return new Page(tags.slice(page.offset, page.offset + page.perPage).map(serializeTag), tags.length, page);
  }

  @Get(':tag_name')
  async get(@Param('id') id: string, @Param('tag_name') name: string, @CurrentActor() actor?: Actor) {
    const { repo } = await readableRepository(this.projects, id, actor);
    const tag = await this.git.tag(repo, name);
    if (!tag) throw new NotFound('Tag');
    return serializeTag(tag);
  }
}
