import { rows, type DomainEvent, type EventMetadata, type Recorded } from '@app/platform';
import type { EntityManager } from 'typeorm';
import { apply, openProjectionDb, recorded, type ProjectionDb } from '../../../test/support/projection-db';
import { AuditEventProjection } from './audit-event.projection';

const projection = new AuditEventProjection();
const AT = '2026-01-01T00:00:00.000Z';

/** An event as a request by `actorId` through token 7 from 192.0.2.1 would store it. */
const by = (actorId: number, event: DomainEvent, more: EventMetadata = {}) =>
  recorded(event, { metadata: { requestId: 'r', actorId, tokenId: 7, ipAddress: '192.0.2.1', ...more } });

const entries = (db: EntityManager) =>
  rows<{
    id: string;
    global_position: string;
    author_id: number;
    entity_type: string;
    entity_id: number;
    details: Record<string, unknown>;
  }>(
    db,
    `select id::text, global_position::text, author_id, entity_type, entity_id, details from audit_events order by id`,
  );
/** `audit_entities` as text, state included: a replay must build the very rows (keys in jsonb's order). */
const rememberedText = (db: EntityManager) =>
  rows<{ row: string }>(db, `select x::text as row from audit_entities x order by entity_type, entity_id`);
const entriesText = (db: EntityManager) =>
  rows<{ row: string }>(db, `select x::text as row from audit_events x order by id`);
const remembered = (db: EntityManager) =>
  rows<{ entity_type: string; entity_id: number; path: string; name: string; state: Record<string, unknown> }>(
    db,
    `select entity_type, entity_id, path, name, state from audit_entities order by entity_type, entity_id`,
  );

const userCreated = (userId: number, username: string, name: string) => ({
  type: 'UserCreated',
  data: {
    userId,
    namespaceId: 100 + userId,
    username,
    name,
    email: `${username}@example.com`,
    passwordDigest: 'SECRET-DIGEST',
    identities: [],
    at: AT,
  },
});

describe('AuditEventProjection', () => {
  let pg: ProjectionDb;
  beforeAll(async () => {
    pg = await openProjectionDb();
  });
  afterAll(() => pg.drop());

  it('is handed every event', () => {
    expect([...projection.eventTypes]).toEqual(['*']);
  });

  it('records writes with from/to, ids from the position, and keeps no secret', () =>
    pg.rollingBack(async (db) => {
      const root = recorded(userCreated(1, 'root', 'Administrator'), { metadata: { origin: 'startup' } });
      const token = recorded(
        {
          type: 'AccessTokenCreated',
          data: {
            tokenId: 7,
            userId: 1,
            name: 'ci',
            digest: 'SECRET-TOKEN-DIGEST',
            scopes: ['api'],
            impersonation: false,
            expiresAt: null,
            at: AT,
          },
        },
        { metadata: { origin: 'startup' } },
      );
      const group = by(1, {
        type: 'GroupCreated',
        data: { groupId: 10, parentId: null, creatorId: 1, path: 'g', name: 'G', visibility: 'private', at: AT },
      });
      const project = by(1, {
        type: 'ProjectCreated',
        data: {
          projectId: 20,
          namespaceId: 10,
          creatorId: 1,
          path: 'p',
          name: 'P',
          visibility: 'private',
          description: null,
          runnersToken: 'SECRET-RUNNERS',
          at: AT,
        },
      });
      const update = by(
        1,
        {
          type: 'ProjectUpdated',
          data: { projectId: 20, changes: { visibility: 'public', description: 'd' }, at: AT },
        },
        { sudoBy: 1 },
      );
      const job = recorded(
        { type: 'ProjectUpdated', data: { projectId: 20, changes: { name: 'Q' }, at: AT } },
        { metadata: { actorId: 1, origin: 'worker' } },
      );
      const rename = by(1, { type: 'GroupUpdated', data: { groupId: 10, changes: { path: 'h' }, at: AT } });
      await apply(projection, db, root, token, group, project, update, job, rename);

      const found = await entries(db);
      // startup's events and the worker's report are no one's write.
      expect(found.map((e) => [e.entity_type, e.entity_id, e.details.change])).toEqual([
        ['Group', 10, 'created'],
        ['Project', 20, 'created'],
        ['Project', 20, 'visibility'],
        ['Project', 20, 'description'],
        ['Group', 10, 'path'],
      ]);
      expect(found[2].id).toBe(String(Number(update.globalPosition) * 100));
      expect(found[3].id).toBe(String(Number(update.globalPosition) * 100 + 1));
      expect(found[2].details).toEqual({
        change: 'visibility',
        from: 'Private',
        to: 'Public',
        author_name: 'Administrator',
        target_id: 20,
        target_type: 'Project',
        target_details: 'g/p',
        entity_path: 'g/p',
        ip_address: '192.0.2.1',
        token_id: 7,
        token_name: 'ci',
        sudo_by_id: 1,
        sudo_by_username: 'root',
        sudo_by_name: 'Administrator',
      });
      expect(found[4].details).toMatchObject({ from: 'g', to: 'h', entity_path: 'g' });

      const memory = await remembered(db);
      // The group's new path reached its project.
      expect(memory.find((r) => r.entity_type === 'Project')).toMatchObject({ path: 'h/p', name: 'Q' });
      expect(JSON.stringify(memory) + JSON.stringify(found)).not.toMatch(/SECRET/);
    }));

  it('follows transfers and renames, and forgets revoked tokens and deleted things', () =>
    pg.rollingBack(async (db) => {
      await apply(
        projection,
        db,
        recorded(userCreated(2, 'ann', 'Ann')),
        recorded({
          type: 'AccessTokenCreated',
          data: {
            tokenId: 8,
            userId: 2,
            name: 't',
            digest: 'x',
            scopes: [],
            impersonation: false,
            expiresAt: null,
            at: AT,
          },
        }),
        by(2, {
          type: 'ProjectCreated',
          data: {
            projectId: 30,
            namespaceId: 102,
            creatorId: 2,
            path: 'mine',
            name: 'Mine',
            visibility: 'private',
            at: AT,
          },
        }),
        by(2, {
          type: 'GroupCreated',
          data: { groupId: 11, parentId: null, creatorId: 2, path: 'top', name: 'Top', at: AT },
        }),
        by(2, {
          type: 'GroupCreated',
          data: { groupId: 12, parentId: 11, creatorId: 2, path: 'sub', name: 'Sub', at: AT },
        }),
        by(2, {
          type: 'UserUpdated',
          data: { userId: 2, changes: { username: 'anne' }, passwordDigest: 'SECRET', at: AT },
        }),
        by(2, { type: 'ProjectTransferred', data: { projectId: 30, fromNamespaceId: 102, namespaceId: 12, at: AT } }),
        by(2, { type: 'GroupTransferred', data: { groupId: 11, parentId: null, at: AT } }),
        by(2, { type: 'AccessTokenRevoked', data: { tokenId: 8, userId: 2, at: AT } }),
      );
      const memory = await remembered(db);
      expect(memory.map((r) => [r.entity_type, r.entity_id, r.path])).toEqual([
        ['Group', 11, 'top'],
        ['Group', 12, 'top/sub'],
        ['Namespace', 102, 'anne'],
        ['Project', 30, 'top/sub/mine'],
        ['User', 2, 'anne'],
      ]);
      const found = await entries(db);
      expect(found.find((e) => e.details.change === 'namespace')?.details).toMatchObject({
        from: 'anne/mine',
        to: 'top/sub/mine',
      });
      expect(found.filter((e) => e.entity_type === 'User').map((e) => e.details.change)).toEqual([
        'username',
        'password',
        'personal access token revoked',
      ]);
      expect(found.find((e) => e.details.change === 'password')?.details).not.toHaveProperty('to');
      await apply(projection, db, by(2, { type: 'ProjectDeleted', data: { projectId: 30, namespaceId: 12, at: AT } }));
      expect((await remembered(db)).some((r) => r.entity_type === 'Project')).toBe(false);
      expect((await entries(db)).pop()?.details).toMatchObject({ change: 'destroyed', entity_path: 'top/sub/mine' });
    }));

  it("replays a rebuild from the process's memory to the rows live appends build, within its budget or past it", () =>
    pg.rollingBack(async (db) => {
      const events = story();
      await apply(projection, db, ...events);
      const live = { entries: await entriesText(db), memory: await rememberedText(db) };
      expect(live.entries.length).toBeGreaterThan(10);
      // Ample, one entry (every put writes back and drops), a few entries (drops and reads back).
      for (const budget of [undefined, 1, 700]) {
        await db.query(`truncate audit_events, audit_entities`);
        const statements: string[] = [];
        const counted = new Proxy(db, {
          get: (target, key) =>
            key === 'query'
              ? (sql: string, params?: unknown[]) => (
                  statements.push(sql.trim().split(/\s+/)[0]),
                  target.query(sql, params)
                )
              : Reflect.get(target, key, target),
        });
        const replay = projection.replay(budget);
        for (const e of events) await replay.apply(e, counted);
        await replay.finish(counted);
        expect({ budget, entries: await entriesText(db), memory: await rememberedText(db) }).toEqual({
          budget,
          ...live,
        });
        const reads = statements.filter((s) => /^select$/i.test(s)).length;
        if (budget === undefined) expect(reads).toBe(0);
        else expect(reads).toBeGreaterThan(0);
      }
    }));

  it("takes one append's events as a batch: the rows one-at-a-time appends build, nothing read back that it wrote", () =>
    pg.rollingBack(async (db) => {
      const events = story();
      const countingSelects = (selects: { n: number }) =>
        new Proxy(db, {
          get: (target, key) =>
            key === 'query'
              ? (sql: string, params?: unknown[]) => {
                  if (/^\s*select\b/i.test(sql)) selects.n++;
                  return target.query(sql, params);
                }
              : Reflect.get(target, key, target),
        });
      const oneByOne = { n: 0 };
      for (const e of events) await projection.apply(e, countingSelects(oneByOne));
      const live = { entries: await entriesText(db), memory: await rememberedText(db) };
      // The whole story as one append, then as appends of three events (a batch starts on a table
      // others wrote: what it does not hold it reads there).
      for (const size of [events.length, 3]) {
        await db.query(`truncate audit_events, audit_entities`);
        const batched = { n: 0 };
        for (let i = 0; i < events.length; i += size) {
          const batch = projection.appendBatch();
          for (const e of events.slice(i, i + size)) await batch.apply(e, countingSelects(batched));
          await batch.finish(countingSelects(batched));
        }
        expect({ size, entries: await entriesText(db), memory: await rememberedText(db) }).toEqual({ size, ...live });
        expect(batched.n).toBeLessThan(oneByOne.n);
      }
    }));
});

/** A history touching every kind of memory: settings, features, members, renames, moves, deletions. */
function story(): Recorded[] {
  const created = (projectId: number, namespaceId: number, path: string) =>
    by(1, {
      type: 'ProjectCreated',
      data: { projectId, namespaceId, creatorId: 1, path, name: path.toUpperCase(), visibility: 'private', at: AT },
    });
  return [
    recorded(userCreated(1, 'root', 'Administrator'), { metadata: { origin: 'startup' } }),
    recorded(
      {
        type: 'AccessTokenCreated',
        data: {
          tokenId: 7,
          userId: 1,
          name: 'ci',
          digest: 'x',
          scopes: ['api'],
          impersonation: false,
          expiresAt: null,
          at: AT,
        },
      },
      { metadata: { origin: 'startup' } },
    ),
    by(1, userCreated(2, 'ann', 'Ann')),
    by(1, { type: 'GroupCreated', data: { groupId: 10, parentId: null, creatorId: 1, path: 'g', name: 'G', at: AT } }),
    by(1, {
      type: 'GroupCreated',
      data: { groupId: 11, parentId: 10, creatorId: 1, path: 'sub', name: 'Sub', at: AT },
    }),
    created(20, 10, 'p'),
    created(21, 11, 'q'),
    created(22, 102, 'mine'),
    by(1, {
      type: 'ProjectUpdated',
      data: { projectId: 20, changes: { visibility: 'public', description: 'd', topics: ['b', 'a'] }, at: AT },
    }),
    by(1, {
      type: 'ProjectUpdated',
      data: { projectId: 20, changes: { features: { wiki: false, issues: true } }, at: AT },
    }),
    by(1, {
      type: 'ProjectUpdated',
      data: { projectId: 20, changes: { features: { wiki: true }, description: 'e' }, at: AT },
    }),
    by(1, { type: 'ProjectMemberAdded', data: { projectId: 20, userId: 2, accessLevel: 30, at: AT } }),
    by(1, { type: 'ProjectMemberUpdated', data: { projectId: 20, userId: 2, accessLevel: 40, at: AT } }),
    by(1, { type: 'GroupMemberAdded', data: { groupId: 10, userId: 2, accessLevel: 20, at: AT } }),
    by(1, { type: 'GroupMemberRemoved', data: { groupId: 10, userId: 2, at: AT } }),
    by(1, { type: 'GroupUpdated', data: { groupId: 10, changes: { path: 'h', name: 'H' }, at: AT } }),
    by(2, { type: 'UserUpdated', data: { userId: 2, changes: { username: 'anne' }, at: AT } }),
    by(1, { type: 'ProjectTransferred', data: { projectId: 22, fromNamespaceId: 102, namespaceId: 11, at: AT } }),
    by(1, { type: 'GroupTransferred', data: { groupId: 11, parentId: null, at: AT } }),
    by(1, { type: 'ProjectArchived', data: { projectId: 21, at: AT } }),
    by(1, { type: 'ProjectUpdated', data: { projectId: 21, changes: { name: 'Q2' }, at: AT } }),
    by(1, { type: 'ProjectDeleted', data: { projectId: 20, namespaceId: 10, at: AT } }),
    by(1, { type: 'AccessTokenRevoked', data: { tokenId: 7, userId: 1, at: AT } }),
    // An older event's numbers where names are text now: the table keeps their text, and so must the replay.
    by(1, { type: 'GroupCreated', data: { groupId: 13, parentId: null, creatorId: 1, path: 2024, name: 7, at: AT } }),
    created(23, 13, 'n'),
    by(1, { type: 'GroupUpdated', data: { groupId: 13, changes: { path: 'y2024' }, at: AT } }),
    by(1, { type: 'UserUpdated', data: { userId: 2, changes: { name: 'Anne' }, at: AT } }),
  ];
}
