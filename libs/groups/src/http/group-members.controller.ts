import {
  Authenticated,
  BadParameter,
  CurrentActor,
  GitlabParams,
  intParam,
  LodeConfig,
  Page,
  pageParams,
  RouteIntPipe,
  type Actor,
} from '@app/platform';
import { Controller, Delete, Get, HttpCode, Param, Post, Put } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import { ChangeGroupMember } from '../commands/group-member.commands';
import { groupMembershipsSql } from '../queries/group-sql';
import { GroupQueries } from '../queries/group.queries';
import { NamespaceAccess } from '../queries/namespace-access';
import { serializeMember } from './group.serializer';
import { AddMemberDto, ListMembersDto, UpdateMemberDto } from './groups.dto';

/** `YYYY-MM-DD`, null to clear, or 400 naming the parameter. */
export function expiresAt(value: string | null | undefined): string | null {
  if (value === undefined || value === null || value === '') return null;
  const d = new Date(`${value}T00:00:00Z`);
  if (!/^\d{4}-\d{2}-\d{2}$/.test(value) || Number.isNaN(d.getTime()) || d.toISOString().slice(0, 10) !== value)
    throw new BadParameter('expires_at is invalid');
  return value;
}

/**
 * GitLab's group members API: signed-in callers who see the group see its direct members (the whole
 * members API authenticates first, so anonymous callers get 401 even on public groups); owners change them.
 */
@Controller('groups/:id/members')
@Authenticated()
export class GroupMembersController {
  constructor(
    private readonly commands: CommandBus,
    private readonly access: NamespaceAccess,
    private readonly groups: GroupQueries,
    private readonly config: LodeConfig,
  ) {}

  private get urls() {
    return { externalUrl: this.config.externalUrl, gravatar: this.config.gravatar };
  }

  @Get()
  async list(@Param('id') id: string, @GitlabParams() q: ListMembersDto, @CurrentActor() actor: Actor) {
    const group = await this.access.visibleGroup(id, actor);
    const page = pageParams(q);
    const { rows, total } = await this.groups.members('namespace', group.id, q.query, page, q.user_ids);
    return new Page(
      rows.map((m) => serializeMember(m, this.urls)),
      total,
      page,
    );
  }

  /**
   * GitLab's `members/all` (13.11+ semantics): the members of the group and of its ancestors, and those
   * of the groups it or an ancestor is shared with (their level capped by the share), once each with
   * their highest level. Declared before `:user_id`, so `all` is never read as a user id.
   */
  @Get('all')
  async listAll(@Param('id') id: string, @GitlabParams() q: ListMembersDto, @CurrentActor() actor: Actor) {
    const group = await this.access.visibleGroup(id, actor);
    const page = pageParams(q);
    const { rows, total } = await this.groups.allMembers(
      groupMembershipsSql('$1::int'),
      group.id,
      q.query,
      page,
      q.user_ids,
    );
    return new Page(
      rows.map((m) => serializeMember(m, this.urls)),
      total,
      page,
    );
  }

  /** GitLab 12.4+: one user's effective membership; 404 `404 Not found` for a user with none, 400 for a non-integer (Grape's `Integer`). */
  @Get('all/:user_id')
  async getAll(
    @Param('id') id: string,
    @Param('user_id', intParam('user_id')) userId: number,
    @CurrentActor() actor: Actor,
  ) {
    const group = await this.access.visibleGroup(id, actor);
    return serializeMember(await this.groups.allMember(groupMembershipsSql('$1::int'), group.id, userId), this.urls);
  }

  @Get(':user_id')
  async get(@Param('id') id: string, @Param('user_id', RouteIntPipe) userId: number, @CurrentActor() actor: Actor) {
    const group = await this.access.visibleGroup(id, actor);
    return serializeMember(await this.groups.member('namespace', group.id, userId), this.urls);
  }

  @Post()
  async add(@Param('id') id: string, @GitlabParams() p: AddMemberDto, @CurrentActor() actor: Actor) {
    const group = await this.access.visibleGroup(id, actor);
    await this.commands.execute(
      new ChangeGroupMember(
        group.id,
        { kind: 'add', userId: p.user_id, accessLevel: p.access_level, expiresAt: expiresAt(p.expires_at) },
        actor,
      ),
    );
    return serializeMember(await this.groups.member('namespace', group.id, p.user_id), this.urls);
  }

  @Put(':user_id')
  async update(
    @Param('id') id: string,
    @Param('user_id', RouteIntPipe) userId: number,
    @GitlabParams() p: UpdateMemberDto,
    @CurrentActor() actor: Actor,
  ) {
    const group = await this.access.visibleGroup(id, actor);
    await this.commands.execute(
      new ChangeGroupMember(
        group.id,
        { kind: 'update', userId, accessLevel: p.access_level, expiresAt: expiresAt(p.expires_at) },
        actor,
      ),
    );
    return serializeMember(await this.groups.member('namespace', group.id, userId), this.urls);
  }

  @Delete(':user_id')
  @HttpCode(204)
  async remove(
    @Param('id') id: string,
    @Param('user_id', RouteIntPipe) userId: number,
    @CurrentActor() actor: Actor,
  ): Promise<void> {
    const group = await this.access.visibleGroup(id, actor);
    await this.commands.execute(new ChangeGroupMember(group.id, { kind: 'remove', userId }, actor));
  }
}
