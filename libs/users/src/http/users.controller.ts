import {
  AcceptsFiles,
  AdminOnly,
  BadParameter,
  CurrentActor,
  decodeCursor,
  encodeCursor,
  Forbidden,
  GitlabParams,
  KeysetPage,
  KeysetUnavailable,
  keysetPerPage,
  LodeConfig,
  Page,
  pageParams,
  RouteIntPipe,
  Unauthorized,
  type Actor,
} from '@app/platform';
import { Controller, Delete, Get, HttpCode, Param, Post, Put, Req, UseInterceptors } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import type { Request } from 'express';
import { ChangeUserBlock } from '../commands/block-user.command';
import { ChangeUserState } from '../commands/change-user-state.command';
import { CreateUser } from '../commands/create-user.command';
import { DeleteUser } from '../commands/delete-user.command';
import { RemoveIdentity } from '../commands/remove-identity.command';
import { UpdateUser } from '../commands/update-user.command';
import { newUserProfile, type Identity, type UserProfile } from '../domain/user';
import { UserQueries, type UserListFilters } from '../queries/user.queries';
import { ReadUserScope } from './private-token.guard';
import { avatarParam, parseDateTime, uploadedFile } from './request-files';
import { newUserSettings, userSettingChanges } from './user-settings';
import { serializeUser, serializeUserAdmin, serializeUserBasic, serializeUserPublic } from './user.serializer';
import {
  CreateUserDto,
  DeleteUserDto,
  IGNORED_USER_FIELDS,
  ListUsersDto,
  UPDATABLE_USER_FIELDS,
  UpdateUserDto,
} from './users.dto';

@Controller('users')
@ReadUserScope()
export class UsersController {
  constructor(
    private readonly commands: CommandBus,
    private readonly users: UserQueries,
    private readonly config: LodeConfig,
  ) {}

  private get urls() {
    return { externalUrl: this.config.externalUrl, gravatar: this.config.gravatar };
  }

  @Get()
  async list(@GitlabParams() q: ListUsersDto, @CurrentActor() actor?: Actor) {
    const admin = actor?.isAdmin === true;
    if (!admin && (q.external || (q.extern_uid !== undefined && q.provider !== undefined))) {
      throw actor ? new Forbidden() : new Unauthorized();
    }
    // Without a caller, only an exact `username` look-up (0 or 1 result) is allowed: no list of every user.
    if (!actor && !q.username) throw new Forbidden('Not authorized to access /api/v4/users');
    const filters: UserListFilters = {
      username: q.username,
      search: q.search,
      searchEmail: admin,
      active: q.active,
      blocked: q.blocked,
      external: q.external,
      externUid: q.extern_uid,
      provider: q.provider,
      // GitLab ignores these for everyone but administrators.
      createdBefore: admin ? dateParam(q.created_before, 'created_before') : undefined,
      createdAfter: admin ? dateParam(q.created_after, 'created_after') : undefined,
      customAttributes: admin ? customAttributes(q.custom_attributes) : undefined,
    };
    if (q.pagination === 'keyset') return this.keysetList(q, filters, admin);
    const page = pageParams(q);
    const { rows, total } = await this.users.list(filters, page);
    if (!admin)
      return new Page(
        rows.map((u) => serializeUserBasic(u, this.urls)),
        total,
        page,
      );
    const identities = await this.users.identities(rows.map((u) => u.id));
    return new Page(
      rows.map((u) => serializeUserAdmin(u, identities.get(u.id) ?? [], this.urls)),
      total,
      page,
    );
  }

  /**
   * GitLab 16.5's keyset pages of users (cursor-based: `cursor=` in the next link, base64 of the last
   * row's position as GitLab writes it), ordered by `id` (the default), `name` or `username`, newest or
   * highest first unless `sort=asc`; another order is 405. A user created or deleted between two pages
   * moves no other across the boundary.
   */
  private async keysetList(q: ListUsersDto, filters: UserListFilters, admin: boolean) {
    const column = q.order_by ?? 'id';
    if (column !== 'id' && column !== 'name' && column !== 'username') throw new KeysetUnavailable();
    const order = { column, sort: q.sort ?? 'desc' } as const;
    const perPage = keysetPerPage(q.per_page);
    const found = await this.users.listAfter(filters, order, cursorPosition(q.cursor, column), perPage + 1);
    const shown = found.slice(0, perPage);
    const last = shown.at(-1);
    const next =
      found.length > perPage && last
        ? { cursor: encodeCursor({ ...(column === 'id' ? {} : { [column]: last[column] }), id: String(last.id) }) }
        : undefined;
    if (!admin)
      return new KeysetPage(
        shown.map((u) => serializeUserBasic(u, this.urls)),
        perPage,
        next,
      );
    const identities = await this.users.identities(shown.map((u) => u.id));
    return new KeysetPage(
      shown.map((u) => serializeUserAdmin(u, identities.get(u.id) ?? [], this.urls)),
      perPage,
      next,
    );
  }

  @Get(':id')
  async get(@Param('id', RouteIntPipe) id: number, @CurrentActor() actor?: Actor) {
    const user = await this.users.get(id);
    if (!actor?.isAdmin) return serializeUser(user, this.urls);
    return serializeUserAdmin(user, (await this.users.identities([id])).get(id) ?? [], this.urls);
  }

  @Post()
  @AdminOnly()
  @UseInterceptors(AcceptsFiles)
  async create(@GitlabParams() p: CreateUserDto, @Req() req: Request) {
    const profile = newUserProfile({ ...newUserSettings(p), username: p.username, email: p.email });
    // reset_password takes priority: GitLab would mail a reset link; Lode has no mail, so no password is set.
    const password = p.reset_password ? undefined : p.password;
    const id = await this.commands.execute(
      new CreateUser(profile, {
        password,
        identity: identity(p),
        skipConfirmation: p.skip_confirmation ?? false,
        avatar: uploadedFile(req, 'avatar'),
      }),
    );
    return this.publicView(id);
  }

  @Put(':id')
  @AdminOnly()
  @UseInterceptors(AcceptsFiles)
  async update(@Param('id', RouteIntPipe) id: number, @GitlabParams() p: UpdateUserDto, @Req() req: Request) {
    const avatar = avatarParam(req);
    const given = p as unknown as Record<string, unknown>;
    const anyGiven = (fields: readonly string[]) => fields.some((f) => given[f] !== undefined);
    if (avatar === undefined && !anyGiven(UPDATABLE_USER_FIELDS) && !anyGiven(IGNORED_USER_FIELDS))
      throw new BadParameter(
        `${UPDATABLE_USER_FIELDS.join(', ')} are missing, at least one parameter must be provided`,
      );
    await this.users.get(id);
    const changes: Partial<UserProfile> = userSettingChanges(p);
    if (p.username !== undefined) changes.username = p.username;
    if (p.email !== undefined) changes.email = p.email;
    await this.commands.execute(new UpdateUser(id, changes, { password: p.password, identity: identity(p), avatar }));
    return this.publicView(id);
  }

  @Delete(':id')
  @AdminOnly()
  @HttpCode(204)
  async remove(@Param('id', RouteIntPipe) id: number, @GitlabParams() p: DeleteUserDto): Promise<void> {
    await this.commands.execute(new DeleteUser(id, p.hard_delete ?? false));
  }

  /**
   * 201 with `true`, or `null` when the user was blocked already (the route's `break if user.blocked?`,
   * which python-gitlab's own test_block_user expects).
   */
  @Post(':id/block')
  @AdminOnly()
  async block(@Param('id', RouteIntPipe) id: number): Promise<true | null> {
    return (await this.commands.execute(new ChangeUserBlock(id, 'block'))) ? true : null;
  }

  @Post(':id/unblock')
  @AdminOnly()
  async unblock(@Param('id', RouteIntPipe) id: number): Promise<boolean> {
    return this.commands.execute(new ChangeUserBlock(id, 'unblock'));
  }

  /** 204; 404 User, or 404 Identity when the user has none of that provider (its exact name). */
  @Delete(':id/identities/:provider')
  @AdminOnly()
  @HttpCode(204)
  async removeIdentity(@Param('id', RouteIntPipe) id: number, @Param('provider') provider: string): Promise<void> {
    await this.users.get(id);
    await this.commands.execute(new RemoveIdentity(id, provider));
  }

  /** GitLab 12.4: 201 `true`, or `false` when the user was active already (the state machine's answer). */
  @Post(':id/activate')
  @AdminOnly()
  async activate(@Param('id', RouteIntPipe) id: number): Promise<boolean> {
    return this.commands.execute(new ChangeUserState(id, 'activate'));
  }

  /** GitLab 12.4: 201 `true`, or `null` when the user was deactivated already (the route's `break`). */
  @Post(':id/deactivate')
  @AdminOnly()
  async deactivate(@Param('id', RouteIntPipe) id: number): Promise<true | null> {
    return (await this.commands.execute(new ChangeUserState(id, 'deactivate'))) ? true : null;
  }

  /** GitLab 14.3: 201 `true` (python-gitlab sets `state` only on exactly `true`). */
  @Post(':id/ban')
  @AdminOnly()
  async ban(@Param('id', RouteIntPipe) id: number): Promise<boolean> {
    return this.commands.execute(new ChangeUserState(id, 'ban'));
  }

  @Post(':id/unban')
  @AdminOnly()
  async unban(@Param('id', RouteIntPipe) id: number): Promise<boolean> {
    return this.commands.execute(new ChangeUserState(id, 'unban'));
  }

  private async publicView(id: number) {
    const user = await this.users.get(id);
    return serializeUserPublic(user, (await this.users.identities([id])).get(id) ?? [], this.urls);
  }
}

function identity(p: { extern_uid?: string; provider?: string }): Identity | undefined {
  return p.extern_uid !== undefined && p.provider !== undefined
    ? { provider: p.provider, externUid: p.extern_uid }
    : undefined;
}

function dateParam(value: string | undefined, name: string): Date | undefined {
  if (value === undefined) return undefined;
  const d = parseDateTime(value);
  if (!d) throw new BadParameter(`${name} is invalid`);
  return d;
}

/** `custom_attributes[key]=value`: string pairs only. */
function customAttributes(value: Record<string, unknown> | undefined): Record<string, string> | undefined {
  if (!value) return undefined;
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(value)) {
    if (typeof v !== 'string') throw new BadParameter('custom_attributes is invalid');
    out[k] = v;
  }
  return out;
}

/** The position a `cursor` names for this order; 400 for one Lode did not write for it. */
function cursorPosition(cursor: string | undefined, column: 'id' | 'name' | 'username') {
  if (cursor === undefined) return undefined;
  const position = decodeCursor(cursor);
  const id = Number(position?.id);
  const value = column === 'id' ? id : position?.[column];
  if (!Number.isInteger(id) || id < 0 || id > 2_147_483_647 || (typeof value !== 'string' && column !== 'id'))
    throw new BadParameter('cursor is invalid');
  return { value: value as string | number, id };
}
