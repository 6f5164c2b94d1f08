import { NotFound, execute, firstRow, oneRow, rows, type PageParams } from '@app/platform';
import { Injectable } from '@nestjs/common';
import { DataSource, In, type EntityManager } from 'typeorm';
import {
  AccessTokenRecord,
  USER_CUSTOM_ATTRIBUTES,
  EmailRecord,
  GpgKeyRecord,
  SshKeyRecord,
} from '../projections/credential.record';
import { UserIdentityRecord, UserRecord } from '../projections/user.record';

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

const likeEscape = (s: string) => `%${s.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;

/** Ids are Postgres `int`s: a larger number names no row (GitLab's `find_by` answers nil), it must not reach SQL. */
const MAX_ROW_ID = 2_147_483_647;

/** Reads of the users context's read models. Every list costs a count and a page, whatever `per_page` is. */
@Injectable()
export class UserQueries {
  constructor(private readonly dataSource: DataSource) {}

  private get users() {
    return this.dataSource.getRepository(UserRecord);
  }

  async get(id: number): Promise<UserRecord> {
    const user = await this.find(id);
    if (!user) throw new NotFound('User');
    return user;
  }

  async find(id: number): Promise<UserRecord | null> {
    return id > MAX_ROW_ID ? null : this.users.findOneBy({ id });
  }

  /** `:user_id` paths that take an id or a username (case-insensitive, as GitLab's `find_by_username`). */
  async findByIdOrUsername(idOrUsername: string): Promise<UserRecord | null> {
    if (/^\d{1,15}$/.test(idOrUsername)) return this.find(Number(idOrUsername));
    return this.users
      .createQueryBuilder('u')
      .where('lower(u.username) = lower(:name)', { name: idOrUsername })
      .getOne();
  }

  async list(f: UserListFilters, page: PageParams): Promise<{ rows: UserRecord[]; total: number }> {
    const qb = this.users.createQueryBuilder('u');
    if (f.username !== undefined) qb.andWhere('lower(u.username) = lower(:username)', { username: f.username });
    if (f.search) {
      qb.andWhere(
        f.searchEmail
          ? '(u.name ilike :term or u.username ilike :term or u.email ilike :term)'
          : '(u.name ilike :term or u.username ilike :term)',
        { term: likeEscape(f.search) },
      );
    }
    if (f.active) qb.andWhere(`u.state = 'active'`);
    if (f.blocked) qb.andWhere(`u.state in ('blocked', 'ldap_blocked')`);
    if (f.external) qb.andWhere('u.external');
    if (f.externUid !== undefined && f.provider !== undefined)
      qb.andWhere(
        'exists (select 1 from user_identities i where i.user_id = u.id and i.provider = :provider and lower(i.extern_uid) = lower(:externUid))',
        { provider: f.provider, externUid: f.externUid },
      );
    if (f.createdBefore) qb.andWhere('u.created_at < :before', { before: f.createdBefore });
    if (f.createdAfter) qb.andWhere('u.created_at > :after', { after: f.createdAfter });
    Object.entries(f.customAttributes ?? {}).forEach(([key, value], i) =>
      qb.andWhere(
        `exists (select 1 from user_custom_attributes c where c.user_id = u.id and c.key = :ck${i} and c.value = :cv${i})`,
        {
          [`ck${i}`]: key,
          [`cv${i}`]: value,
        },
      ),
    );
    // GitLab 10.x's UsersFinder orders newest first.
    const [rows, total] = await qb.orderBy('u.id', 'DESC').skip(page.offset).take(page.perPage).getManyAndCount();
    return { rows, total };
  }

  /** Identities of many users in one statement. */
  async identities(userIds: number[]): Promise<Map<number, UserIdentityRecord[]>> {
    const map = new Map<number, UserIdentityRecord[]>();
    if (!userIds.length) return map;
    const rows = await this.dataSource
      .getRepository(UserIdentityRecord)
      .createQueryBuilder('i')
      .where('i.user_id in (:...ids)', { ids: userIds })
      .orderBy('i.provider')
      .getMany();
    for (const r of rows) map.set(r.userId, [...(map.get(r.userId) ?? []), r]);
    return map;
  }

  customAttributes(userId: number): Promise<{ key: string; value: string }[]> {
    return USER_CUSTOM_ATTRIBUTES.list(this.dataSource, userId);
  }

  customAttribute(userId: number, key: string): Promise<{ key: string; value: string }> {
    return USER_CUSTOM_ATTRIBUTES.get(this.dataSource, userId, key);
  }

  async sshKeys(userId: number, page: PageParams): Promise<{ rows: SshKeyRecord[]; total: number }> {
    const [rows, total] = await this.dataSource
      .getRepository(SshKeyRecord)
      .findAndCount({ where: { userId }, order: { id: 'ASC' }, skip: page.offset, take: page.perPage });
    return { rows, total };
  }

  async sshKey(userId: number, keyId: number): Promise<SshKeyRecord> {
    const key =
      keyId > MAX_ROW_ID ? null : await this.dataSource.getRepository(SshKeyRecord).findOneBy({ id: keyId, userId });
    if (!key) throw new NotFound('Key');
    return key;
  }

  async gpgKeys(userId: number, page: PageParams): Promise<{ rows: GpgKeyRecord[]; total: number }> {
    const [rows, total] = await this.dataSource
      .getRepository(GpgKeyRecord)
      .findAndCount({ where: { userId }, order: { id: 'ASC' }, skip: page.offset, take: page.perPage });
    return { rows, total };
  }

  async gpgKey(userId: number, keyId: number): Promise<GpgKeyRecord> {
    const key =
      keyId > MAX_ROW_ID ? null : await this.dataSource.getRepository(GpgKeyRecord).findOneBy({ id: keyId, userId });
    if (!key) throw new NotFound('GPG Key');
    return key;
  }

  async emails(userId: number, page: PageParams): Promise<{ rows: EmailRecord[]; total: number }> {
    const [rows, total] = await this.dataSource
      .getRepository(EmailRecord)
      .findAndCount({ where: { userId }, order: { id: 'ASC' }, skip: page.offset, take: page.perPage });
    return { rows, total };
  }

  async email(userId: number, emailId: number): Promise<EmailRecord> {
    const email =
      emailId > MAX_ROW_ID ? null : await this.dataSource.getRepository(EmailRecord).findOneBy({ id: emailId, userId });
    if (!email) throw new NotFound('Email');
    return email;
  }

  /** `state`: `active` is neither revoked nor expired, `inactive` the rest (GitLab's PersonalAccessTokensFinder). */
  async impersonationTokens(userId: number, state: 'all' | 'active' | 'inactive', page: PageParams, today: string) {
    const active = `(not t.revoked and (t.expires_at is null or t.expires_at > :today))`;
    const qb = this.dataSource
      .getRepository(AccessTokenRecord)
      .createQueryBuilder('t')
      .where('t.user_id = :userId and t.impersonation', { userId, today });
    if (state === 'active') qb.andWhere(active);
    if (state === 'inactive') qb.andWhere(`not ${active}`);
    const [rows, total] = await qb.orderBy('t.id', 'ASC').skip(page.offset).take(page.perPage).getManyAndCount();
    return { rows, total };
  }

  async impersonationToken(userId: number, tokenId: number): Promise<AccessTokenRecord> {
    const t =
      tokenId > MAX_ROW_ID
        ? null
        : await this.dataSource
            .getRepository(AccessTokenRecord)
            .findOneBy({ id: tokenId, userId, impersonation: true });
    if (!t) throw new NotFound('Impersonation Token');
    return t;
  }

  /** How many of these users still exist. */
  async countExisting(ids: number[]): Promise<number> {
    if (!ids.length) return 0;
    return this.users.countBy({ id: In(ids) });
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
export async function userIn(db: EntityManager, userId: number): Promise<UserRecord | null> {
  return db.getRepository(UserRecord).findOneBy({ id: userId });
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
