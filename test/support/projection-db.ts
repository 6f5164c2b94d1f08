import {
  ProjectionRegistry,
  runMigrations,
  type Actor,
  type DomainEvent,
  type PageParams,
  type Projector,
  type Recorded,
} from '@app/platform';
import { Logger } from '@nestjs/common';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DataSource, type EntityManager } from 'typeorm';
import { groupSettingsFrom, type GroupEvent } from '@app/groups';
import type { ProjectEvent } from '@app/projects';
import { newUserProfile, type UserEvent } from '@app/users';
import { MIGRATIONS } from '../../apps/lode/src/lode.module';
import { settingsFrom } from '../../libs/projects/src/projects/project-settings';
import { NamespaceProjection } from '../../libs/groups/src/projections/namespace.projection';
import { ProjectHookProjection } from '../../libs/hooks/src/projections/project-hook.projection';
import { SystemHookProjection } from '../../libs/hooks/src/projections/system-hook.projection';
import { ActivityProjection } from '../../libs/projects/src/activity/activity.projection';
import { DeployKeyProjection } from '../../libs/projects/src/deploy-keys/deploy-key.projection';
import { ProjectProjection } from '../../libs/projects/src/projects/project.projection';
import { ProtectedBranchProjection } from '../../libs/projects/src/protected-refs/protected-branch.projection';
import { ProtectedTagProjection } from '../../libs/projects/src/protected-refs/protected-tag.projection';
import { ReleaseProjection } from '../../libs/projects/src/releases/release.projection';
import { UserProjection } from '../../libs/users/src/projections/user.projection';
import { dropDatabase, testConfig } from './test-app';

/** A throwaway database with every context's tables, for the projectors' and the query services' specs (`*.int-spec.ts`). */
export interface ProjectionDb {
  /**
   * Runs `test` in a transaction that is rolled back afterwards, so the tests of a file share one
   * database and never see each other's rows.
   */
  rollingBack(test: (db: EntityManager) => Promise<void>): Promise<void>;
  /**
   * Applies events as the app does: each through every projector that handles it, in the order the
   * modules register them (users, groups, projects, hooks). For the facts a spec starts from (a user,
   * a group, a project) and for another context's events that reach the projector under test.
   */
  given(db: EntityManager, ...events: Recorded[]): Promise<void>;
  /** `given`, the events as one append (one command's decision): each projector's `appendBatch` where it has one. */
  givenAppend(db: EntityManager, ...events: Recorded[]): Promise<void>;
  /** Drops the database. */
  drop(): Promise<void>;
}

/** Every projector, in the order the modules register them with the ProjectionRegistry. */
export const allProjectors = (): Projector[] =>
  [
    new UserProjection(),
    new NamespaceProjection(),
    new ProjectProjection(),
    new DeployKeyProjection(),
    new ProtectedBranchProjection(),
    new ProtectedTagProjection(),
    new ReleaseProjection(),
    new ActivityProjection(),
    new ProjectHookProjection(),
    new SystemHookProjection(),
  ] as Projector[];

/** Creates a database on the tests' PostgreSQL (TEST_DATABASE_URL) and runs every migration on it. */
export async function openProjectionDb(): Promise<ProjectionDb> {
  Logger.overrideLogger(['error']);
  const config = testConfig({ dataDir: await mkdtemp(join(tmpdir(), 'lode-projection-')) });
  await runMigrations(config, MIGRATIONS);
  // Every query service reads with SQL into typed rows: the DataSource needs no entities.
  const dataSource = new DataSource({
    type: 'postgres',
    url: config.databaseUrl,
    extra: { max: 2 },
  });
  await dataSource.initialize();
  const registry = new ProjectionRegistry();
  registry.register(...allProjectors());
  const rollback = new Error('roll back');
  return {
    rollingBack: async (test) => {
      await dataSource
        .transaction(async (db) => {
          await test(db);
          throw rollback;
        })
        .catch((err: unknown) => {
          if (err !== rollback) throw err;
        });
    },
    given: async (db, ...events) => {
      for (const e of events) await registry.apply(e, db);
    },
    givenAppend: async (db, ...events) => {
      const batch = registry.appendBatch();
      for (const e of events) await batch.apply(e, db);
      await batch.finish(db);
    },
    drop: async () => {
      await dataSource.destroy();
      await dropDatabase(config.databaseUrl);
      await rm(config.dataDir, { recursive: true, force: true });
    },
  };
}

/**
 * Hands events to one projector's `apply`, in order, as the registry would: each stored (see `recorded`)
 * unless it is already. An event type the projector does not handle fails.
 */
export async function apply<E extends DomainEvent>(
  projector: Projector<E>,
  db: EntityManager,
  ...events: (NoInfer<E> | Recorded<NoInfer<E>>)[]
): Promise<void> {
  for (const e of events) await projector.apply('globalPosition' in e ? e : recorded(e), db);
}

let position = 0;

/**
 * A stored event as the event store hands it to projectors: on stream `test-1` unless told, with a
 * global position above every earlier one's. Name the union to check the data: `recorded<UserEvent>({...})`.
 */
export function recorded<E extends DomainEvent>(
  event: E,
  stored: Partial<Omit<Recorded<E>, 'type' | 'data'>> = {},
): Recorded<E> {
  position += 1;
  return {
    streamId: 'test-1',
    streamVersion: position,
    globalPosition: String(position),
    metadata: {},
    recordedAt: new Date('2026-01-01T00:00:00Z'),
    ...stored,
    ...event,
  } as Recorded<E>;
}

type UserCreated = Extract<UserEvent, { type: 'UserCreated' }>;
type GroupCreated = Extract<GroupEvent, { type: 'GroupCreated' }>;
type GroupMemberAdded = Extract<GroupEvent, { type: 'GroupMemberAdded' }>;
type ProjectMemberAdded = Extract<ProjectEvent, { type: 'ProjectMemberAdded' }>;
type ProjectCreated = Extract<ProjectEvent, { type: 'ProjectCreated' }>;

/** When the facts below happened, unless told. */
export const AT = '2026-01-01T00:00:00.000Z';

/** A user `user<id>` with a personal namespace of id `namespaceId` (100 + the user's id unless told). */
export function userCreated(userId: number, data: Partial<UserCreated['data']> = {}): Recorded<UserCreated> {
  const username = data.username ?? `user${userId}`;
  return recorded<UserCreated>(
    {
      type: 'UserCreated',
      data: {
        ...newUserProfile({ name: `User ${userId}`, username, email: `${username}@example.com` }),
        userId,
        namespaceId: 100 + userId,
        passwordDigest: null,
        identities: [],
        confirmedAt: AT,
        at: AT,
        ...data,
      },
    },
    { streamId: `user-${userId}` },
  );
}

/** A public group `group<id>`, top-level unless a parent is given. */
export function groupCreated(groupId: number, data: Partial<GroupCreated['data']> = {}): Recorded<GroupCreated> {
  return recorded<GroupCreated>(
    {
      type: 'GroupCreated',
      data: {
        groupId,
        parentId: null,
        creatorId: 1,
        // The other settings at the table's defaults (libs/groups/src/domain/group-settings.ts).
        ...groupSettingsFrom({
          name: `Group ${groupId}`,
          path: `group${groupId}`,
          visibility: 'public',
          requestAccessEnabled: true,
        }),
        at: AT,
        ...data,
      },
    },
    { streamId: `group-${groupId}` },
  );
}

/** A private project `project<id>` in a namespace, with GitLab's default switches. */
export function projectCreated(
  projectId: number,
  namespaceId: number,
  data: Partial<ProjectCreated['data']> = {},
): Recorded<ProjectCreated> {
  return recorded<ProjectCreated>(
    {
      type: 'ProjectCreated',
      data: {
        projectId,
        namespaceId,
        creatorId: 1,
        ...settingsFrom({ name: `Project ${projectId}`, path: `project${projectId}` }),
        runnersToken: `runners-${projectId}`,
        at: AT,
        ...data,
      },
    },
    { streamId: `project-${projectId}` },
  );
}

/** A direct member of a group at `accessLevel`, until `expiresAt` (a date) if given. */
export function groupMemberAdded(
  groupId: number,
  userId: number,
  accessLevel: number,
  expiresAt: string | null = null,
): Recorded<GroupMemberAdded> {
  return recorded<GroupMemberAdded>(
    { type: 'GroupMemberAdded', data: { groupId, userId, accessLevel, expiresAt, at: AT } },
    { streamId: `group-${groupId}` },
  );
}

/** A direct member of a project at `accessLevel`, until `expiresAt` (a date) if given. */
export function projectMemberAdded(
  projectId: number,
  userId: number,
  accessLevel: number,
  expiresAt: string | null = null,
): Recorded<ProjectMemberAdded> {
  return recorded<ProjectMemberAdded>(
    { type: 'ProjectMemberAdded', data: { projectId, userId, accessLevel, expiresAt, at: AT } },
    { streamId: `project-${projectId}` },
  );
}

/**
 * The rolled-back transaction as the DataSource a query service takes, for the queries' specs
 * (`*.queries.int-spec.ts`): the services read through `rows`, `firstRow` and `oneRow` (which need
 * only `query`) or through `getRepository`, and the transaction's EntityManager has both.
 */
export const asDataSource = (db: EntityManager): DataSource => db as unknown as DataSource;

/** A signed-in caller as the API resolves one: user `id`, neither administrator nor external unless told. */
export function actor(id: number, over: Partial<Actor> = {}): Actor {
  return { id, username: `user${id}`, isAdmin: false, external: false, scopes: ['api'], impersonation: false, ...over };
}

/** Page `page` (from 1) of `perPage` rows, as `pageParams` makes it. */
export const pageOf = (page = 1, perPage = 100): PageParams => ({ page, perPage, offset: (page - 1) * perPage });
