import { GroupQueries } from '@app/groups';
import { rows } from '@app/platform';
import type { DataSource, EntityManager } from 'typeorm';
import {
  apply,
  AT,
  groupCreated,
  openProjectionDb,
  projectCreated,
  recorded,
  userCreated,
  type ProjectionDb,
} from '../../../../test/support/projection-db';
import { FEATURE_DEFAULTS, type ProjectEvent } from './project';
import { ProjectProjection } from './project.projection';

const LATER = '2026-02-01T00:00:00.000Z';
const LATEST = '2026-03-01T00:00:00.000Z';
const projection = new ProjectProjection();

const project = async (db: EntityManager, id: number) =>
  (await rows<Record<string, unknown>>(db, `select * from projects where id = $1`, [id]))[0];
const projectIds = async (db: EntityManager) =>
  (await rows<{ id: number }>(db, `select id from projects order by id`)).map((p) => p.id);
const counts = async (db: EntityManager) =>
  rows<{ id: number; forked_from_id: number | null; forks_count: number; star_count: number }>(
    db,
    `select id, forked_from_id, forks_count, star_count from projects order by id`,
  );
/** Memberships through their owner's query service (the groups context owns the table). */
const projectMembers = async (db: EntityManager, projectId: number) =>
  (
    await new GroupQueries(db as unknown as DataSource).members('project', projectId, undefined, {
      page: 1,
      perPage: 100,
      offset: 0,
    })
  ).rows.map((m) => [m.id, m.access_level, m.expires_at]);

type Of<T extends ProjectEvent['type']> = Extract<ProjectEvent, { type: T }>;

const forked = (projectId: number, forkedFromId: number, namespaceId = 101): Of<'ProjectForked'> => {
  const { data } = projectCreated(projectId, namespaceId);
  return { type: 'ProjectForked', data: { ...data, forkedFromId, at: LATER } };
};
const deleted = (projectId: number, namespaceId = 101): Of<'ProjectDeleted'> => ({
  type: 'ProjectDeleted',
  data: { projectId, namespaceId, at: LATEST },
});
const starred = (projectId: number, userId: number) => ({
  type: 'ProjectStarred' as const,
  data: { projectId, userId, at: LATER },
});

describe('ProjectProjection', () => {
  let pg: ProjectionDb;
  beforeAll(async () => {
    pg = await openProjectionDb();
  });
  afterAll(() => pg.drop());

  // Users 1 and 2 (personal namespaces 101 and 102), group 50.
  const withOwners = (test: (db: EntityManager) => Promise<void>) =>
    pg.rollingBack(async (db) => {
      await pg.given(db, userCreated(1), userCreated(2), groupCreated(50));
      await test(db);
    });

  it('handles every project event but releases, protected branches and housekeeping requests, and stars', () => {
    expect([...projection.eventTypes].sort()).toEqual([
      'GroupDeleted',
      'ProjectArchived',
      'ProjectAvatarChanged',
      'ProjectCreated',
      'ProjectCustomAttributeRemoved',
      'ProjectCustomAttributeSet',
      'ProjectDeleted',
      'ProjectForkRelationCreated',
      'ProjectForkRelationRemoved',
      'ProjectForked',
      'ProjectHousekeepingFinished',
      'ProjectImportStatusChanged',
      'ProjectMemberAdded',
      'ProjectMemberRemoved',
      'ProjectMemberUpdated',
      'ProjectSharedWithGroup',
      'ProjectStarred',
      'ProjectTransferred',
      'ProjectUnarchived',
      'ProjectUnsharedWithGroup',
      'ProjectUnstarred',
      'ProjectUpdated',
      'RepositoryPushed',
      'UserDeleted',
    ]);
  });

  it('creates a project with its settings, switches and times', () =>
    withOwners(async (db) => {
      await apply(
        projection,
        db,
        projectCreated(10, 50, {
          description: 'd',
          visibility: 'internal',
          defaultBranch: 'main',
          tagList: ['a', 'b'],
          ciConfigPath: 'ci.yml',
          importUrl: 'https://example.com/x.git',
          mergeMethod: 'rebase_merge',
          wikiAccessLevel: 'disabled',
          features: { ...FEATURE_DEFAULTS, wikiEnabled: false, requestAccessEnabled: true },
        }),
      );
      expect(await project(db, 10)).toEqual({
        id: 10,
        namespace_id: 50,
        name: 'Project 10',
        path: 'project10',
        description: 'd',
        default_branch: 'main',
        visibility: 'internal',
        archived: false,
        creator_id: 1,
        issues_enabled: true,
        merge_requests_enabled: true,
        wiki_enabled: false,
        jobs_enabled: true,
        snippets_enabled: true,
        container_registry_enabled: true,
        shared_runners_enabled: true,
        public_jobs: true,
        lfs_enabled: true,
        request_access_enabled: true,
        only_allow_merge_if_pipeline_succeeds: false,
        only_allow_merge_if_all_discussions_are_resolved: false,
        resolve_outdated_diff_discussions: false,
        printing_merge_request_link_enabled: true,
        ci_config_path: 'ci.yml',
        import_url: 'https://example.com/x.git',
        import_status: 'none',
        import_error: null,
        tag_list: ['a', 'b'],
        forked_from_id: null,
        star_count: 0,
        forks_count: 0,
        runners_token: 'runners-10',
        repository_size: '0',
        commit_count: 0,
        created_at: new Date(AT),
        updated_at: new Date(AT),
        last_activity_at: new Date(AT),
        avatar: null,
        merge_method: 'rebase_merge',
        squash_option: 'default_off',
        issues_access_level: 'enabled',
        repository_access_level: 'enabled',
        merge_requests_access_level: 'enabled',
        forking_access_level: 'enabled',
        wiki_access_level: 'disabled',
        builds_access_level: 'enabled',
        snippets_access_level: 'enabled',
        pages_access_level: 'private',
        operations_access_level: 'enabled',
        analytics_access_level: 'enabled',
        requirements_access_level: 'enabled',
        security_and_compliance_access_level: 'private',
        container_registry_access_level: 'enabled',
        packages_enabled: true,
        remove_source_branch_after_merge: true,
        allow_merge_on_skipped_pipeline: false,
        autoclose_referenced_issues: true,
        ci_forward_deployment_enabled: true,
        merge_pipelines_enabled: false,
        merge_trains_enabled: false,
      });
    }));

  it('reads an event older than the access levels by its switches, as the migration does', () =>
    withOwners(async (db) => {
      const old = projectCreated(13, 50, { features: { ...FEATURE_DEFAULTS, issuesEnabled: false } });
      const data = old.data as unknown as Record<string, unknown>;
      delete data.issuesAccessLevel;
      delete data.mergeMethod;
      await apply(projection, db, old);
      expect(await project(db, 13)).toMatchObject({
        issues_enabled: false,
        issues_access_level: 'disabled',
        wiki_access_level: 'enabled',
        merge_method: 'merge',
      });
    }));

  it('creates a fork scheduled for import and counts the forks of its source', () =>
    withOwners(async (db) => {
      await apply(projection, db, projectCreated(10, 101), forked(11, 10, 102), forked(12, 10, 50));
      expect(await project(db, 11)).toMatchObject({
        namespace_id: 102,
        forked_from_id: 10,
        import_status: 'scheduled',
        created_at: new Date(LATER),
      });
      expect(await counts(db)).toEqual([
        { id: 10, forked_from_id: null, forks_count: 2, star_count: 0 },
        { id: 11, forked_from_id: 10, forks_count: 0, star_count: 0 },
        { id: 12, forked_from_id: 10, forks_count: 0, star_count: 0 },
      ]);
    }));

  it('records the import status and error, and the statistics an import or housekeeping brings', () =>
    withOwners(async (db) => {
      await apply(projection, db, projectCreated(10, 101), forked(11, 10), forked(12, 10));
      await apply(
        projection,
        db,
        { type: 'ProjectImportStatusChanged', data: { projectId: 11, status: 'started', error: null, at: LATER } },
        {
          type: 'ProjectImportStatusChanged',
          data: {
            projectId: 11,
            status: 'finished',
            error: null,
            at: LATER,
            statistics: { commitCount: 3, repositorySize: 4096 },
          },
        },
        { type: 'ProjectImportStatusChanged', data: { projectId: 12, status: 'failed', error: 'no space', at: LATER } },
        { type: 'ProjectHousekeepingFinished', data: { projectId: 10, at: LATER } },
      );
      const stats = async (id: number) => {
        const p = await project(db, id);
        return [p.import_status, p.import_error, p.commit_count, p.repository_size, p.updated_at];
      };
      expect(await stats(11)).toEqual(['finished', null, 3, '4096', new Date(LATER)]);
      expect(await stats(12)).toEqual(['failed', 'no space', 0, '0', new Date(LATER)]);
      expect(await stats(10)).toEqual(['none', null, 0, '0', new Date(AT)]);
      await apply(projection, db, {
        type: 'ProjectHousekeepingFinished',
        data: { projectId: 10, at: LATEST, statistics: { commitCount: 7, repositorySize: 9000 } },
      });
      expect(await stats(10)).toEqual(['none', null, 7, '9000', new Date(AT)]);
    }));

  it('moves last activity, statistics and a first default branch on a push, keyed on the project in its data', () =>
    withOwners(async (db) => {
      await apply(projection, db, projectCreated(10, 101), projectCreated(11, 101, { defaultBranch: 'main' }));
      const pushed = (projectId: number, defaultBranch: string | null, at: string) =>
        recorded(
          {
            type: 'RepositoryPushed' as const,
            data: {
              projectId,
              userId: 1,
              updates: [],
              defaultBranch,
              statistics: { commitCount: 5, repositorySize: 1234 },
              at,
            },
          },
          // Pushes may be appended on a stream of their own: the projector never reads the stream.
          { streamId: `project-${projectId}-pushes` },
        );
      await apply(projection, db, pushed(10, 'master', LATER), pushed(11, null, LATEST));
      const pushState = async (id: number) => {
        const p = await project(db, id);
        return [p.default_branch, p.commit_count, p.repository_size, p.last_activity_at, p.updated_at];
      };
      expect(await pushState(10)).toEqual(['master', 5, '1234', new Date(LATER), new Date(AT)]);
      expect(await pushState(11)).toEqual(['main', 5, '1234', new Date(LATEST), new Date(AT)]);
    }));

  it('relates a project to a fork source and undoes it, counting forks both ways', () =>
    withOwners(async (db) => {
      await apply(projection, db, projectCreated(10, 101), projectCreated(11, 101), {
        type: 'ProjectForkRelationCreated',
        data: { projectId: 11, forkedFromId: 10, at: LATER },
      });
      expect((await counts(db)).map((c) => [c.id, c.forked_from_id, c.forks_count])).toEqual([
        [10, null, 1],
        [11, 10, 0],
      ]);
      await apply(projection, db, {
        type: 'ProjectForkRelationRemoved',
        data: { projectId: 11, forkedFromId: 10, at: LATEST },
      });
      expect((await counts(db)).map((c) => [c.id, c.forked_from_id, c.forks_count])).toEqual([
        [10, null, 0],
        [11, null, 0],
      ]);
    }));

  it('updates only the changed settings and switches, moving updated_at and last activity', () =>
    withOwners(async (db) => {
      await apply(projection, db, projectCreated(10, 101), {
        type: 'ProjectUpdated',
        data: {
          projectId: 10,
          changes: {
            name: 'Renamed',
            path: 'renamed',
            tagList: ['x'],
            defaultBranch: 'dev',
            ciConfigPath: null,
            features: { issuesEnabled: false, resolveOutdatedDiscussions: true },
          },
          at: LATER,
        },
      });
      expect(await project(db, 10)).toMatchObject({
        name: 'Renamed',
        path: 'renamed',
        tag_list: ['x'],
        default_branch: 'dev',
        description: null,
        issues_enabled: false,
        resolve_outdated_diff_discussions: true,
        wiki_enabled: true,
        created_at: new Date(AT),
        updated_at: new Date(LATER),
        last_activity_at: new Date(LATER),
      });
    }));

  it('changes the avatar, archives, unarchives and transfers', () =>
    withOwners(async (db) => {
      await apply(projection, db, projectCreated(10, 101));
      const state = async () => {
        const p = await project(db, 10);
        return [p.avatar, p.archived, p.namespace_id, p.updated_at, p.last_activity_at];
      };
      await apply(projection, db, {
        type: 'ProjectAvatarChanged',
        data: { projectId: 10, avatar: 'logo.png', at: LATER },
      });
      expect(await state()).toEqual(['logo.png', false, 101, new Date(LATER), new Date(LATER)]);
      await apply(projection, db, { type: 'ProjectArchived', data: { projectId: 10, at: LATEST } });
      expect(await state()).toEqual(['logo.png', true, 101, new Date(LATEST), new Date(LATEST)]);
      await apply(
        projection,
        db,
        { type: 'ProjectUnarchived', data: { projectId: 10, at: LATER } },
        { type: 'ProjectAvatarChanged', data: { projectId: 10, avatar: null, at: LATER } },
      );
      expect(await state()).toEqual([null, false, 101, new Date(LATER), new Date(LATER)]);
      await apply(projection, db, {
        type: 'ProjectTransferred',
        data: { projectId: 10, fromNamespaceId: 101, namespaceId: 50, at: LATEST },
      });
      expect(await state()).toEqual([null, false, 50, new Date(LATEST), new Date(LATEST)]);
    }));

  it('adds, changes and removes project members through the shared membership statements', () =>
    withOwners(async (db) => {
      await apply(
        projection,
        db,
        projectCreated(10, 101),
        projectCreated(11, 101),
        recorded(
          {
            type: 'ProjectMemberAdded' as const,
            data: { projectId: 10, userId: 1, accessLevel: 40, expiresAt: null, at: AT },
          },
          { metadata: { actorId: 1 } },
        ),
        { type: 'ProjectMemberAdded', data: { projectId: 10, userId: 2, accessLevel: 30, expiresAt: null, at: LATER } },
        { type: 'ProjectMemberAdded', data: { projectId: 11, userId: 2, accessLevel: 20, expiresAt: null, at: LATER } },
        {
          type: 'ProjectMemberUpdated',
          data: { projectId: 10, userId: 2, accessLevel: 20, expiresAt: '2027-05-06', at: LATEST },
        },
      );
      expect(await projectMembers(db, 10)).toEqual([
        [1, 40, null],
        [2, 20, '2027-05-06'],
      ]);
      await apply(projection, db, { type: 'ProjectMemberRemoved', data: { projectId: 10, userId: 1, at: LATEST } });
      expect(await projectMembers(db, 10)).toEqual([[2, 20, '2027-05-06']]);
      expect(await projectMembers(db, 11)).toEqual([[2, 20, null]]);
    }));

  it('shares a project with groups and unshares it', () =>
    withOwners(async (db) => {
      await pg.given(db, groupCreated(51));
      await apply(
        projection,
        db,
        projectCreated(10, 101),
        {
          type: 'ProjectSharedWithGroup',
          data: { projectId: 10, linkId: 3, groupId: 50, groupAccess: 30, expiresAt: '2027-01-01', at: LATER },
        },
        {
          type: 'ProjectSharedWithGroup',
          data: { projectId: 10, linkId: 4, groupId: 51, groupAccess: 20, expiresAt: null, at: LATER },
        },
        { type: 'ProjectUnsharedWithGroup', data: { projectId: 10, groupId: 51, at: LATEST } },
      );
      expect(
        await rows(
          db,
          `select id, project_id, group_id, group_access, to_char(expires_at, 'YYYY-MM-DD') as expires_at, created_at
             from project_group_links order by id`,
        ),
      ).toEqual([
        {
          id: 3,
          project_id: 10,
          group_id: 50,
          group_access: 30,
          expires_at: '2027-01-01',
          created_at: new Date(LATER),
        },
      ]);
    }));

  it('sets, replaces and removes custom attributes', () =>
    withOwners(async (db) => {
      await apply(
        projection,
        db,
        projectCreated(10, 101),
        { type: 'ProjectCustomAttributeSet', data: { projectId: 10, key: 'a', value: '1', at: AT } },
        { type: 'ProjectCustomAttributeSet', data: { projectId: 10, key: 'b', value: '2', at: AT } },
        { type: 'ProjectCustomAttributeSet', data: { projectId: 10, key: 'a', value: '3', at: AT } },
        { type: 'ProjectCustomAttributeRemoved', data: { projectId: 10, key: 'b', at: LATER } },
      );
      expect(await rows(db, `select project_id, key, value from project_custom_attributes`)).toEqual([
        { project_id: 10, key: 'a', value: '3' },
      ]);
    }));

  it('stars once per user and keeps the count', () =>
    withOwners(async (db) => {
      await apply(projection, db, projectCreated(10, 101), projectCreated(11, 101));
      await apply(projection, db, starred(10, 1), starred(10, 2), starred(10, 2), starred(11, 2));
      expect(
        await rows(db, `select project_id, user_id, created_at from project_stars order by project_id, user_id`),
      ).toEqual([
        { project_id: 10, user_id: 1, created_at: new Date(LATER) },
        { project_id: 10, user_id: 2, created_at: new Date(LATER) },
        { project_id: 11, user_id: 2, created_at: new Date(LATER) },
      ]);
      await apply(projection, db, { type: 'ProjectUnstarred', data: { projectId: 10, userId: 1, at: LATEST } });
      expect((await counts(db)).map((c) => [c.id, c.star_count])).toEqual([
        [10, 1],
        [11, 1],
      ]);
    }));

  it("deletes a project with its members, and recounts its source's forks", () =>
    withOwners(async (db) => {
      await apply(
        projection,
        db,
        projectCreated(10, 101),
        forked(11, 10),
        forked(12, 10),
        { type: 'ProjectMemberAdded', data: { projectId: 11, userId: 2, accessLevel: 30, expiresAt: null, at: AT } },
        starred(11, 2),
      );
      await apply(projection, db, deleted(11));
      expect(await projectIds(db)).toEqual([10, 12]);
      expect((await counts(db)).find((c) => c.id === 10)?.forks_count).toBe(1);
      expect(await projectMembers(db, 11)).toEqual([]);
      expect(await rows(db, `select project_id from project_stars`)).toEqual([]);
    }));

  it("recounts stars and hands a deleted user's projects to the ghost user, or to nobody", () =>
    withOwners(async (db) => {
      await pg.given(db, userCreated(3, { ghost: true }));
      await apply(
        projection,
        db,
        projectCreated(10, 50, { creatorId: 1 }),
        projectCreated(11, 50, { creatorId: 2 }),
        projectCreated(12, 50, { creatorId: 2 }),
        starred(10, 1),
        starred(10, 2),
        starred(11, 2),
      );
      await pg.given(
        db,
        recorded({
          type: 'UserDeleted' as const,
          data: { userId: 2, username: 'user2', hardDelete: false, ghostUserId: 3, at: LATER },
        }),
      );
      expect((await counts(db)).map((c) => [c.id, c.star_count])).toEqual([
        [10, 1],
        [11, 0],
        [12, 0],
      ]);
      await pg.given(
        db,
        recorded({ type: 'UserDeleted' as const, data: { userId: 1, username: 'user1', hardDelete: true, at: LATER } }),
      );
      expect(
        await rows<{ id: number; creator_id: number | null; star_count: number }>(
          db,
          `select id, creator_id, star_count from projects order by id`,
        ),
      ).toEqual([
        { id: 10, creator_id: null, star_count: 0 },
        { id: 11, creator_id: 3, star_count: 0 },
        { id: 12, creator_id: 3, star_count: 0 },
      ]);
    }));

  it("drops the memberships of a deleted group's projects, which went with the group", () =>
    withOwners(async (db) => {
      await apply(
        projection,
        db,
        projectCreated(10, 50),
        projectCreated(11, 101),
        { type: 'ProjectMemberAdded', data: { projectId: 10, userId: 2, accessLevel: 30, expiresAt: null, at: AT } },
        { type: 'ProjectMemberAdded', data: { projectId: 11, userId: 2, accessLevel: 30, expiresAt: null, at: AT } },
      );
      await pg.given(db, recorded({ type: 'GroupDeleted' as const, data: { groupId: 50, at: LATER } }));
      expect(await projectIds(db)).toEqual([11]);
      expect(await projectMembers(db, 10)).toEqual([]);
      expect(await projectMembers(db, 11)).toEqual([[2, 30, null]]);
    }));
});
