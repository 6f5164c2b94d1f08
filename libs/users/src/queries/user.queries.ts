import { NotFound, execute, firstRow, oneRow, rows, type PageParams, type Sql } from '@app/platform';
import { Injectable } from '@nestjs/common';
import { DataSource, type EntityManager } from 'typeorm';
import { USER_SETTING_LIST } from '../domain/user-settings';
import {
  USER_CUSTOM_ATTRIBUTES,
  type AccessTokenRecord,
  type EmailRecord,
  type GpgKeyRecord,
  type SshKeyRecord,
  type UserStatusRecord,
} from '../projections/credential.record';
import type { UserIdentityRecord, UserRecord } from '../projections/user.record';

/** The orders of `GET /users?pagination=keyset` (GitLab 16.5's cursor-based keyset has these and more). */
export interface UserKeysetOrder {
  column: 'id' | 'name' | 'username';
  sort: 'asc' | 'desc';
}

export interface UserListFilters {
  username?: string;
  search?: string;
  /** Administrators' searches also match e-mail addresses; others' never do. */
  searchEmail: boolean;
  active?: boolean;
  blocked?: boolean;
  external?: boolean;
  externUid?: string;
  provider?: string;
  createdBefore?: Date;
  createdAfter?: Date;
  customAttributes?: Record<string, string>;
}

/** GET /personal_access_tokens' filters (GitLab's PersonalAccessTokensFinder). */
export interface PersonalAccessTokenFilters {
  /** Whose tokens; undefined for every user's (an administrator without `user_id`). */
  userId?: number;
  /** False leaves impersonation tokens out: a user who is not an administrator never lists them. */
  withImpersonation: boolean;
  revoked?: boolean;
  state?: 'active' | 'inactive';
  createdBefore?: Date;
  createdAfter?: Date;
  /** `last_used_before`/`last_used_after` given: Lode records no use, so no token was ever used. */
  lastUsedFilter: boolean;
  search?: string;
  /** `YYYY-MM-DD`: a token expiring today or earlier is inactive. */
  today: string;
}

const likeEscape = (s: string) => `%${s.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;

/** Ids are Postgres `int`s: a larger number names no row (GitLab's `find_by` answers nil), it must not reach SQL. */
const MAX_ROW_ID = 2_147_483_647;

/** `users u` as a UserRecord: every column but `password_digest` and `ghost`, the settings' from their entries. */
const USER_COLUMNS = [
  'u.id, u.username, u.email, u.state, u.avatar, u.theme_id as "themeId", u.color_scheme_id as "colorSchemeId"',
  'u.confirmed_at as "confirmedAt", u.created_at as "createdAt", u.updated_at as "updatedAt"',
  `to_char(u.last_activity_on, 'YYYY-MM-DD') as "lastActivityOn"`,
  ...USER_SETTING_LIST.map((s) => `u.${s.column} as "${s.key}"`),
].join(', ');
const SSH_KEY_COLUMNS = `id, user_id as "userId", title, key, key_type as "keyType", fingerprint,
  fingerprint_sha256 as "fingerprintSha256", expires_at as "expiresAt", created_at as "createdAt"`;
const GPG_KEY_COLUMNS = `id, user_id as "userId", key, fingerprint, primary_keyid as "primaryKeyId", created_at as "createdAt"`;
const EMAIL_COLUMNS = `id, user_id as "userId", email, created_at as "createdAt"`;
/** Without `digest`, which no answer shows. */
const ACCESS_TOKEN_COLUMNS = `t.id, t.user_id as "userId", t.name, t.scopes, t.impersonation, t.revoked,
  to_char(t.expires_at, 'YYYY-MM-DD') as "expiresAt", t.created_by as "createdBy", t.created_at as "createdAt"`;

/** A page of `rows` and the count of all, read with the same `from ... where` and parameters. */
async function pageOf<T>(
  db: Sql,
  select: string,
  fromWhere: string,
  params: unknown[],
  orderBy: string,
  page: PageParams,
): Promise<{ rows: T[]; total: number }> {
  const { total } = await oneRow<{ total: number }>(db, `select count(*)::int as total ${fromWhere}`, params);
  const n = params.length;
  const found = await rows<T>(
    db,
    `select ${select} ${fromWhere} order by ${orderBy} offset $${n + 1} limit $${n + 2}`,
    [...params, page.offset, page.perPage],
  );
  return { rows: found, total };
}

/** The conditions on `users u` of a list's filters, and their parameters. */
function listConditions(f: UserListFilters): { where: string[]; params: unknown[] } {
  const where: string[] = [];
  const params: unknown[] = [];
  const param = (value: unknown) => `$${params.push(value)}`;
  if (f.username !== undefined) where.push(`lower(u.username) = lower(${param(f.username)})`);
  if (f.search) {
    const term = param(likeEscape(f.search));
    where.push(
      f.searchEmail
        ? `(u.name ilike ${term} or u.username ilike ${term} or u.email ilike ${term})`
        : `(u.name ilike ${term} or u.username ilike ${term})`,
    );
  }
  if (f.active) where.push(`u.state = 'active'`);
  if (f.blocked) where.push(`u.state in ('blocked', 'ldap_blocked')`);
  if (f.external) where.push('u.external');
  if (f.externUid !== undefined && f.provider !== undefined)
    where.push(
      `exists (select 1 from user_identities i where i.user_id = u.id and i.provider = ${param(f.provider)}
                   and lower(i.extern_uid) = lower(${param(f.externUid)}))`,
    );
  if (f.createdBefore) where.push(`u.created_at < ${param(f.createdBefore)}`);
  if (f.createdAfter) where.push(`u.created_at > ${param(f.createdAfter)}`);
  for (const [key, value] of Object.entries(f.customAttributes ?? {}))
    where.push(
      `exists (select 1 from user_custom_attributes c where c.user_id = u.id and c.key = ${param(key)} and c.value = ${param(value)})`,
    );
  return { where, params };
}

const fromUsers = (where: string[]) => `from users u${where.length ? ` where ${where.join(' and ')}` : ''}`;

/** Reads of the users context's read models. Every list costs a count and a page, whatever `per_page` is. */
@Injectable()
export class UserQueries {
  constructor(private readonly dataSource: DataSource) {}

  async get(id: number): Promise<UserRecord> {
    const user = await this.find(id);
    if (!user) throw new NotFound('User');
    return user;
  }

  async find(id: number): Promise<UserRecord | null> {
    return id > MAX_ROW_ID ? null : userIn(this.dataSource, id);
  }

  /** `:user_id` paths that take an id or a username (case-insensitive, as GitLab's `find_by_username`). */
  async findByIdOrUsername(idOrUsername: string): Promise<UserRecord | null> {
    if (/^\d{1,15}$/.test(idOrUsername)) return this.find(Number(idOrUsername));
    const user = await firstRow<UserRecord>(
      this.dataSource,
      `select ${USER_COLUMNS} from users u where lower(u.username) = lower($1)`,
      [idOrUsername],
    );
    return user ?? null;
  }

  async list(f: UserListFilters, page: PageParams): Promise<{ rows: UserRecord[]; total: number }> {
    const { where, params } = listConditions(f);
    // GitLab 10.x's UsersFinder orders newest first.
    return pageOf<UserRecord>(this.dataSource, USER_COLUMNS, fromUsers(where), params, 'u.id desc', page);
  }

  /**
   * Up to `limit` users in `order` (the column, then the id, both one way), after `position` (the last
   * row of the page before) when given: the keyset form of `list`, with no count.
   */
  async listAfter(
    f: UserListFilters,
    order: UserKeysetOrder,
    position: { value: string | number; id: number } | undefined,
    limit: number,
  ): Promise<UserRecord[]> {
    const { where, params } = listConditions(f);
    const column = `u.${order.column}`;
    const direction = order.sort === 'asc' ? 'asc' : 'desc';
    const past = order.sort === 'asc' ? '>' : '<';
    if (position) {
      const id = `$${params.push(position.id)}::int`;
      where.push(
        order.column === 'id'
          ? `u.id ${past} ${id}`
          : `(${column}, u.id) ${past} ($${params.push(position.value)}::text, ${id})`,
      );
    }
    const orderBy = order.column === 'id' ? `u.id ${direction}` : `${column} ${direction}, u.id ${direction}`;
    return rows<UserRecord>(
      this.dataSource,
      `select ${USER_COLUMNS} ${fromUsers(where)} order by ${orderBy} limit $${params.push(limit)}`,
      params,
    );
  }

  /** Identities of many users in one statement. */
  async identities(userIds: number[]): Promise<Map<number, UserIdentityRecord[]>> {
    const map = new Map<number, UserIdentityRecord[]>();
    if (!userIds.length) return map;
    const found = await rows<UserIdentityRecord>(
      this.dataSource,
      `select user_id as "userId", provider, extern_uid as "externUid" from user_identities
        where user_id = any($1::int[]) order by provider`,
      [userIds],
    );
    for (const r of found) map.set(r.userId, [...(map.get(r.userId) ?? []), r]);
    return map;
  }

  customAttributes(userId: number): Promise<{ key: string; value: string }[]> {
    return USER_CUSTOM_ATTRIBUTES.list(this.dataSource, userId);
  }

  customAttribute(userId: number, key: string): Promise<{ key: string; value: string }> {
    return USER_CUSTOM_ATTRIBUTES.get(this.dataSource, userId, key);
  }

  sshKeys(userId: number, page: PageParams): Promise<{ rows: SshKeyRecord[]; total: number }> {
    return pageOf<SshKeyRecord>(
      this.dataSource,
      SSH_KEY_COLUMNS,
      'from ssh_keys where user_id = $1',
      [userId],
      'id',
      page,
    );
  }

  async sshKey(userId: number, keyId: number): Promise<SshKeyRecord> {
    const key =
      keyId > MAX_ROW_ID
        ? undefined
        : await firstRow<SshKeyRecord>(
            this.dataSource,
            `select ${SSH_KEY_COLUMNS} from ssh_keys where id = $1 and user_id = $2`,
            [keyId, userId],
          );
    if (!key) throw new NotFound('Key');
    return key;
  }

  /** Anyone's SSH key by its id (`GET /keys/:id`); undefined when there is none. */
  async sshKeyById(keyId: number): Promise<SshKeyRecord | undefined> {
    if (keyId > MAX_ROW_ID) return undefined;
    return firstRow<SshKeyRecord>(this.dataSource, `select ${SSH_KEY_COLUMNS} from ssh_keys where id = $1`, [keyId]);
  }

  /** Anyone's SSH key by its MD5 (`aa:bb:...`, any case) or SHA256 (`SHA256:<base64>`) fingerprint. */
  async sshKeyByFingerprint(fingerprint: { md5: string } | { sha256: string }): Promise<SshKeyRecord | undefined> {
    return 'md5' in fingerprint
      ? firstRow<SshKeyRecord>(this.dataSource, `select ${SSH_KEY_COLUMNS} from ssh_keys where fingerprint = $1`, [
          fingerprint.md5.toLowerCase(),
        ])
      : firstRow<SshKeyRecord>(
          this.dataSource,
          `select ${SSH_KEY_COLUMNS} from ssh_keys where fingerprint_sha256 = $1`,
          [fingerprint.sha256],
        );
  }

  /** The user's status unless it has cleared itself by `now` (GitLab's worker clears it then). */
  async status(userId: number, now: Date): Promise<UserStatusRecord | undefined> {
    return firstRow<UserStatusRecord>(
      this.dataSource,
      `select emoji, message, availability, clear_status_at as "clearStatusAt" from user_statuses
        where user_id = $1 and (clear_status_at is null or clear_status_at > $2)`,
      [userId, now],
    );
  }

  gpgKeys(userId: number, page: PageParams): Promise<{ rows: GpgKeyRecord[]; total: number }> {
    return pageOf<GpgKeyRecord>(
      this.dataSource,
      GPG_KEY_COLUMNS,
      'from gpg_keys where user_id = $1',
      [userId],
      'id',
      page,
    );
  }

  async gpgKey(userId: number, keyId: number): Promise<GpgKeyRecord> {
    const key =
      keyId > MAX_ROW_ID
        ? undefined
        : await firstRow<GpgKeyRecord>(
            this.dataSource,
            `select ${GPG_KEY_COLUMNS} from gpg_keys where id = $1 and user_id = $2`,
            [keyId, userId],
          );
    if (!key) throw new NotFound('GPG Key');
    return key;
  }

  emails(userId: number, page: PageParams): Promise<{ rows: EmailRecord[]; total: number }> {
    return pageOf<EmailRecord>(this.dataSource, EMAIL_COLUMNS, 'from emails where user_id = $1', [userId], 'id', page);
  }

  async email(userId: number, emailId: number): Promise<EmailRecord> {
    const email =
      emailId > MAX_ROW_ID
        ? undefined
        : await firstRow<EmailRecord>(
            this.dataSource,
            `select ${EMAIL_COLUMNS} from emails where id = $1 and user_id = $2`,
            [emailId, userId],
          );
    if (!email) throw new NotFound('Email');
    return email;
  }

  /** `state`: `active` is neither revoked nor expired, `inactive` the rest (GitLab's PersonalAccessTokensFinder). */
  impersonationTokens(userId: number, state: 'all' | 'active' | 'inactive', page: PageParams, today: string) {
    const active = `(not t.revoked and (t.expires_at is null or t.expires_at > $2))`;
    const where = 'from access_tokens t where t.user_id = $1 and t.impersonation';
    const [fromWhere, params] =
      state === 'all'
        ? [where, [userId]]
        : [`${where} and ${state === 'active' ? active : `not ${active}`}`, [userId, today]];
    return pageOf<AccessTokenRecord>(this.dataSource, ACCESS_TOKEN_COLUMNS, fromWhere, params, 't.id', page);
  }

  async impersonationToken(userId: number, tokenId: number): Promise<AccessTokenRecord> {
    const t =
      tokenId > MAX_ROW_ID
        ? undefined
        : await firstRow<AccessTokenRecord>(
            this.dataSource,
            `select ${ACCESS_TOKEN_COLUMNS} from access_tokens t where t.id = $1 and t.user_id = $2 and t.impersonation`,
            [tokenId, userId],
          );
    if (!t) throw new NotFound('Impersonation Token');
    return t;
  }

  /** Ordered by id, as GitLab's `paginate` orders a finder's relation that has no order of its own. */
  personalAccessTokens(f: PersonalAccessTokenFilters, page: PageParams) {
    const where: string[] = [];
    const params: unknown[] = [];
    const param = (value: unknown) => `$${params.push(value)}`;
    if (f.userId !== undefined) where.push(`t.user_id = ${param(f.userId)}`);
    if (!f.withImpersonation) where.push('not t.impersonation');
    if (f.revoked !== undefined) where.push(f.revoked ? 't.revoked' : 'not t.revoked');
    if (f.state) {
      const active = `(not t.revoked and (t.expires_at is null or t.expires_at > ${param(f.today)}))`;
      where.push(f.state === 'active' ? active : `not ${active}`);
    }
    // GitLab's `created_before`/`created_after` include the instant given.
    if (f.createdBefore) where.push(`t.created_at <= ${param(f.createdBefore)}`);
    if (f.createdAfter) where.push(`t.created_at >= ${param(f.createdAfter)}`);
    // A never-used token matches neither `last_used_before` nor `last_used_after` in GitLab either.
    if (f.lastUsedFilter) where.push('false');
    if (f.search) where.push(`t.name ilike ${param(likeEscape(f.search))}`);
    const fromWhere = `from access_tokens t${where.length ? ` where ${where.join(' and ')}` : ''}`;
    return pageOf<AccessTokenRecord>(this.dataSource, ACCESS_TOKEN_COLUMNS, fromWhere, params, 't.id', page);
  }

  /** Any user's token, personal or impersonation; undefined for an unknown id. */
  async accessToken(tokenId: number): Promise<AccessTokenRecord | undefined> {
    if (tokenId > MAX_ROW_ID) return undefined;
    return firstRow<AccessTokenRecord>(
      this.dataSource,
      `select ${ACCESS_TOKEN_COLUMNS} from access_tokens t where t.id = $1`,
      [tokenId],
    );
  }

  /** How many of these users still exist. */
  async countExisting(ids: number[]): Promise<number> {
    if (!ids.length) return 0;
    return (
      await oneRow<{ n: number }>(this.dataSource, `select count(*)::int as n from users where id = any($1::int[])`, [
        ids,
      ])
    ).n;
  }

  /** Users active on or after `from`, least recently active first. */
  async activities(from: string, page: PageParams) {
    const { total } = await oneRow<{ total: number }>(
      this.dataSource,
      `select count(*)::int as total from users where last_activity_on >= $1`,
      [from],
    );
    const active = await rows<{ username: string; last_activity_on: string }>(
      this.dataSource,
      `select username, to_char(last_activity_on, 'YYYY-MM-DD') as last_activity_on from users
        where last_activity_on >= $1 order by last_activity_on, id offset $2 limit $3`,
      [from, page.offset, page.perPage],
    );
    return { rows: active, total };
  }

  /**
   * Whether a user other than `userId` holds the e-mail (as any of their addresses) or the username,
   * case-insensitively: POST and PUT /users answer those with 409 before other validation errors.
   */
  async taken(wanted: {
    userId?: number;
    email?: string;
    username?: string;
  }): Promise<{ email: boolean; username: boolean }> {
    return oneRow<{ email: boolean; username: boolean }>(
      this.dataSource,
      `select exists (select 1 from user_email_claims where email_lower = lower($2) and user_id is distinct from $1) as email,
              exists (select 1 from users where lower(username) = lower($3) and id is distinct from $1) as username`,
      [wanted.userId ?? null, wanted.email ?? null, wanted.username ?? null],
    );
  }
}

/** The user's avatar file name in the read model (null without one, undefined without the user), read in `db`'s transaction. */
export async function currentAvatar(db: EntityManager, userId: number): Promise<string | null | undefined> {
  return (await firstRow<{ avatar: string | null }>(db, `select avatar from users where id = $1`, [userId]))?.avatar;
}

/** The user's row as `db`'s transaction sees it (a PUT records only the fields it changes). */
export async function userIn(db: Sql, userId: number): Promise<UserRecord | null> {
  return (await firstRow<UserRecord>(db, `select ${USER_COLUMNS} from users u where u.id = $1`, [userId])) ?? null;
}

/** Taken before seeding root: an API and a worker starting at the same moment seed one after the other. */
const SEED_LOCK = 7_402_114;
/** Taken before making the ghost user, so two deletions make one. */
const GHOST_LOCK = 7_402_115;

/** Waits for any other process seeding root, until `db`'s transaction ends. */
export async function lockRootSeeding(db: EntityManager): Promise<void> {
  await execute(db, `select pg_advisory_xact_lock($1)`, [SEED_LOCK]);
}

/** Waits for any other command making the ghost user, until `db`'s transaction ends. */
export async function lockGhostCreation(db: EntityManager): Promise<void> {
  await execute(db, `select pg_advisory_xact_lock($1)`, [GHOST_LOCK]);
}

export async function userCount(db: EntityManager): Promise<number> {
  return (await oneRow<{ users: number }>(db, `select count(*)::int as users from users`)).users;
}

/** Whether a token with this digest was ever registered. */
export async function tokenDigestKnown(db: EntityManager, digest: string): Promise<boolean> {
  return (
    (await firstRow<{ one: number }>(db, `select 1 as one from access_tokens where digest = $1`, [digest])) !==
    undefined
  );
}

/** The administrator `root` seeded on the first start, if it is still there and still an administrator. */
export async function rootUserId(db: EntityManager): Promise<number | undefined> {
  return (await firstRow<{ id: number }>(db, `select id from users where username = 'root' and is_admin`))?.id;
}

export async function ghostUserId(db: EntityManager): Promise<number | undefined> {
  return (await firstRow<{ id: number }>(db, `select id from users where ghost`))?.id;
}

/** The next id of `sequence`, taken on `db`'s connection. */
export async function nextIdOn(db: EntityManager, sequence: 'user_id_seq' | 'namespace_id_seq'): Promise<number> {
  return (await oneRow<{ id: number }>(db, `select nextval('${sequence}')::int as id`)).id;
}

/**
 * Whether the user is an administrator (undefined without the user), the row held `for share` until
 * `db`'s transaction ends so the user cannot change or go meanwhile.
 */
export async function isAdminHeld(db: EntityManager, userId: number): Promise<boolean | undefined> {
  return (await firstRow<{ is_admin: boolean }>(db, `select is_admin from users where id = $1 for share`, [userId]))
    ?.is_admin;
}
