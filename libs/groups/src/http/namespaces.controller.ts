import {
  Authenticated,
  CurrentActor,
  GitlabParams,
  LodeConfig,
  NotFound,
  Page,
  PaginationDto,
  pageParams,
  ToBool,
  ToInt,
  type Actor,
} from '@app/platform';
import { avatarUrl, ReadUserScope } from '@app/users';
import { Controller, Get, Param } from '@nestjs/common';
import { IsBoolean, IsInt, IsOptional, IsString } from 'class-validator';
import { NamespaceQueries, type NamespaceRow } from '../queries/namespace.queries';

export class ListNamespacesDto extends PaginationDto {
  @IsOptional() @IsString() search?: string;
  /** GitLab 14.2. */
  @IsOptional() @ToBool() @IsBoolean() owned_only?: boolean;
  @IsOptional() @ToBool() @IsBoolean() top_level_only?: boolean;
}

export class NamespaceExistsDto {
  @IsOptional() @ToInt() @IsInt() parent_id?: number;
}

/**
 * `/namespaces` (GitLab 10.x; `owned_only` 14.2, `top_level_only` later, `/exists` 13.x): personal
 * namespaces and groups alike, for signed-in callers only. The Namespace entity as GitLab 12.x and
 * later show it (`avatar_url`, `web_url`); GitLab.com's plan and seat fields are left out, as GitLab
 * CE does.
 */
@Controller('namespaces')
@ReadUserScope()
export class NamespacesController {
  constructor(
    private readonly namespaces: NamespaceQueries,
    private readonly config: LodeConfig,
  ) {}

  @Get()
  @Authenticated()
  async list(@GitlabParams() q: ListNamespacesDto, @CurrentActor() actor: Actor) {
    const page = pageParams(q);
    const { rows, total } = await this.namespaces.list(
      actor,
      { search: q.search, ownedOnly: q.owned_only, topLevelOnly: q.top_level_only },
      page,
    );
    return new Page(
      rows.map((n) => this.serialize(n)),
      total,
      page,
    );
  }

  /** `:namespace` is the path of the namespace looked for (URL-encoded when it holds a `/`), not an id. */
  @Get(':namespace/exists')
  @Authenticated()
  async exists(@Param('namespace') path: string, @GitlabParams() q: NamespaceExistsDto) {
    return this.namespaces.exists(path, q.parent_id ?? null);
  }

  /** By id or URL-encoded full path; 404 Namespace for what the caller may not read, never 403. */
  @Get(':id')
  @Authenticated()
  async get(@Param('id') id: string, @CurrentActor() actor: Actor) {
    const found = await this.namespaces.readable(actor, id);
    if (!found) throw new NotFound('Namespace');
    return this.serialize(found);
  }

  private serialize(n: NamespaceRow) {
    const urls = { externalUrl: this.config.externalUrl, gravatar: this.config.gravatar };
    const out: Record<string, unknown> = {
      id: n.id,
      name: n.name,
      path: n.path,
      kind: n.kind,
      full_path: n.fullPath,
      parent_id: n.parentId,
      avatar_url: n.owner ? avatarUrl(n.owner, urls) : null,
      web_url: n.owner ? `${urls.externalUrl}/${n.owner.username}` : `${urls.externalUrl}/groups/${n.fullPath}`,
    };
    // GitLab shows it only for groups the caller administers.
    if (n.membersCountWithDescendants !== null) out.members_count_with_descendants = n.membersCountWithDescendants;
    return out;
  }
}
