import { EVERY_EVENT, type Projector, type ProjectorReplay, type Recorded } from '@app/platform';
import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { audited, describe, namespacePath, SECRET_KEYS, type AuditEntry, type Recall } from './audit-log';
import { HeldAuditMemory, type AuditMemory } from './audit-memory';

/** How many entries one event may make: an entry's id is the event's position * 100 + its ordinal. */
export const ENTRIES_PER_EVENT = 100;

/**
 * What a rebuild's audit memory may hold in the process before it writes back and drops entries:
 * some 100,000 users, groups and projects, so a rebuild of most instances never reads it back.
 */
const REPLAY_MEMORY_BYTES = 64 * 1024 * 1024;
/** What one append's audit memory may hold (a decision of thousands of events writes back as it goes). */
const APPEND_MEMORY_BYTES = 4 * 1024 * 1024;
/** Entries kept for one insert: an append's are written together, a longer run in pages of this many. */
const INSERT_PAGE = 500;

/**
 * The audit log: every write event of every context (EVERY_EVENT), as `audit_events` rows, and the
 * projector's own memory (`audit_entities`) of names, paths, current values and members, which gives
 * a change its `from`. It reads only the event and its own tables, so a rebuild gives the same rows.
 * Both a rebuild and one append's events keep that memory in the process (HeldAuditMemory) and write
 * it back at the end: an append's second event (a creator's membership after the project's creation)
 * reads nothing its first just wrote, and the append's entries and memory go in one statement each.
 */
@Injectable()
export class AuditEventProjection implements Projector {
  readonly name = 'audit_events';
  readonly tables = ['audit_events', 'audit_entities'];
  readonly eventTypes = [EVERY_EVENT];

  async apply(e: Recorded, db: EntityManager): Promise<void> {
    const batch = this.appendBatch();
    await batch.apply(e, db);
    await batch.finish(db);
  }

  appendBatch(): ProjectorReplay {
    return heldBatch(new HeldAuditMemory(APPEND_MEMORY_BYTES, { startsEmpty: false }));
  }

  /** `budgetBytes`: for the tests, which make the memory write back and drop what it holds. */
  replay(budgetBytes = REPLAY_MEMORY_BYTES): ProjectorReplay {
    return heldBatch(new HeldAuditMemory(budgetBytes));
  }
}

/** Events recorded with `memory` and their entries kept for one insert; `finish` writes both. */
function heldBatch(memory: HeldAuditMemory): ProjectorReplay {
  const entries = new AuditEntries();
  return {
    apply: (e, db) => record(e, db, memory.over(db), entries),
    finish: async (db) => {
      await entries.flush(db);
      await memory.finish(db);
    },
  };
}

/** `audit_events` rows waiting for one insert: written at the end, or a page at a time. */
class AuditEntries {
  private rows: Record<string, unknown>[] = [];

  async add(db: EntityManager, e: Recorded, entries: readonly AuditEntry[]): Promise<void> {
    for (const [ordinal, entry] of entries.entries())
      this.rows.push({
        global_position: e.globalPosition,
        ordinal,
        author_id: entry.authorId,
        entity_type: entry.entityType,
        entity_id: entry.entityId,
        details: entry.details,
        created_at: e.recordedAt,
      });
    if (this.rows.length >= INSERT_PAGE) await this.flush(db);
  }

  async flush(db: EntityManager): Promise<void> {
    if (!this.rows.length) return;
    const rows = this.rows;
    this.rows = [];
    // An entry's id is its event's position * ENTRIES_PER_EVENT + its ordinal (positions are bigints,
    // kept as strings: the arithmetic is PostgreSQL's).
    await db.query(
      `insert into audit_events (id, global_position, author_id, entity_type, entity_id, details, created_at)
       select global_position * ${ENTRIES_PER_EVENT} + ordinal, global_position, author_id, entity_type, entity_id,
              details, created_at
         from jsonb_to_recordset($1::jsonb) as x(global_position bigint, ordinal int, author_id int,
              entity_type text, entity_id int, details jsonb, created_at timestamptz)`,
      [JSON.stringify(rows)],
    );
  }
}

async function record(e: Recorded, db: EntityManager, memory: AuditMemory, entries: AuditEntries): Promise<void> {
  const recall: Recall = (type, id) => memory.recall(type, id);
  if (audited(e))
    await entries.add(
      db,
      e,
      (await describe(e, recall, (keys) => memory.recallMany(keys))).slice(0, ENTRIES_PER_EVENT),
    );
  await remember(e, memory);
}

type Data = Record<string, unknown>;

/** The settings worth remembering: a creation's data without ids, times and secrets. */
function settingsOf(d: Data): Data {
  const out: Data = {};
  for (const [k, v] of Object.entries(d))
    if (!SECRET_KEYS.has(k) && !/Id$/.test(k) && k !== 'at' && k !== 'ghost') out[k] = v;
  return out;
}

const joined = (parent: string | null, path: string) => (parent ? `${parent}/${path}` : path);

/** The ids that key what the projector remembers; an event without its id changes nothing here. */
const KEYED_BY: Record<string, 'userId' | 'groupId' | 'projectId' | 'tokenId'> = {
  UserCreated: 'userId',
  UserUpdated: 'userId',
  UserDeleted: 'userId',
  AccessTokenCreated: 'tokenId',
  AccessTokenRevoked: 'tokenId',
  GroupCreated: 'groupId',
  GroupUpdated: 'groupId',
  GroupTransferred: 'groupId',
  GroupDeleted: 'groupId',
  GroupMemberAdded: 'groupId',
  GroupMemberUpdated: 'groupId',
  GroupMemberRemoved: 'groupId',
};

/** What the projector keeps in mind after the event. */
async function remember(e: Recorded, memory: AuditMemory): Promise<void> {
  const { recall, put, forget } = memory;
  const d = (e.data ?? {}) as Data;
  // Every write passes here: an event of an older shape must never fail the command that appends it.
  const key = KEYED_BY[e.type] ?? (e.type.startsWith('Project') ? 'projectId' : undefined);
  if (key && typeof d[key] !== 'number') return;
  switch (e.type) {
    case 'UserCreated': {
      const userId = d.userId as number;
      await put('User', userId, d.username as string, d.name as string, {
        ...settingsOf(d),
        namespaceId: d.namespaceId,
      });
      if (typeof d.namespaceId === 'number') await put('Namespace', d.namespaceId, d.username as string, null, {});
      return;
    }
    case 'UserUpdated': {
      const user = await recall('User', d.userId as number);
      if (!user) return;
      const changes = Object.fromEntries(
        Object.entries((d.changes ?? {}) as Data).filter(([k]) => !SECRET_KEYS.has(k)),
      );
      const state = { ...user.state, ...changes };
      const username = typeof changes.username === 'string' ? changes.username : user.path;
      const name = typeof changes.name === 'string' ? changes.name : user.name;
      await put('User', d.userId as number, username, name, state);
      if (username !== user.path && typeof state.namespaceId === 'number') {
        await put('Namespace', state.namespaceId, username, null, {});
        await memory.movePrefix(user.path, username);
      }
      return;
    }
    case 'UserDeleted': {
      const user = await recall('User', d.userId as number);
      if (typeof user?.state.namespaceId === 'number') await forget('Namespace', user.state.namespaceId);
      await forget('User', d.userId as number);
      return;
    }
    case 'AccessTokenCreated':
      await put('Token', d.tokenId as number, null, d.name as string, {});
      return;
    case 'AccessTokenRevoked':
      // A revoked token never acts again: nothing left to name.
      await forget('Token', d.tokenId as number);
      return;
    case 'GroupCreated': {
      const parent = typeof d.parentId === 'number' ? ((await recall('Group', d.parentId))?.path ?? null) : null;
      await put('Group', d.groupId as number, joined(parent, d.path as string), d.name as string, {
        ...settingsOf(d),
        members: {},
      });
      return;
    }
    case 'GroupUpdated':
    case 'ProjectUpdated': {
      const type = e.type === 'GroupUpdated' ? 'Group' : 'Project';
      const id = (type === 'Group' ? d.groupId : d.projectId) as number;
      const had = await recall(type, id);
      if (!had) return;
      const changes = (d.changes ?? {}) as Data;
      const state = { ...had.state };
      for (const [k, v] of Object.entries(changes)) {
        if (SECRET_KEYS.has(k)) continue;
        state[k] =
          v !== null && typeof v === 'object' && !Array.isArray(v) ? { ...((state[k] ?? {}) as Data), ...v } : v;
      }
      const path =
        typeof changes.path === 'string' && had.path
          ? joined(had.path.split('/').slice(0, -1).join('/') || null, changes.path)
          : had.path;
      await put(type, id, path, typeof changes.name === 'string' ? changes.name : had.name, state);
      if (type === 'Group') await memory.movePrefix(had.path, path);
      return;
    }
    case 'GroupTransferred': {
      const had = await recall('Group', d.groupId as number);
      if (!had?.path) return;
      const parent = typeof d.parentId === 'number' ? ((await recall('Group', d.parentId))?.path ?? null) : null;
      const path = joined(parent, had.path.split('/').pop()!);
      await put('Group', d.groupId as number, path, had.name, had.state);
      await memory.movePrefix(had.path, path);
      return;
    }
    case 'GroupDeleted':
      await forget('Group', d.groupId as number);
      return;
    case 'ProjectCreated':
    case 'ProjectForked': {
      const parent = await namespacePath(d.namespaceId as number, memory.recallMany);
      await put('Project', d.projectId as number, joined(parent, d.path as string), d.name as string, {
        ...settingsOf(d),
        members: {},
      });
      return;
    }
    case 'ProjectTransferred': {
      const had = await recall('Project', d.projectId as number);
      if (!had?.path) return;
      const parent = await namespacePath(d.namespaceId as number, memory.recallMany);
      await put('Project', d.projectId as number, joined(parent, had.path.split('/').pop()!), had.name, had.state);
      return;
    }
    case 'ProjectArchived':
    case 'ProjectUnarchived': {
      const had = await recall('Project', d.projectId as number);
      if (had)
        await put('Project', d.projectId as number, had.path, had.name, {
          ...had.state,
          archived: e.type === 'ProjectArchived',
        });
      return;
    }
    case 'ProjectDeleted':
      await forget('Project', d.projectId as number);
      return;
    case 'GroupMemberAdded':
    case 'GroupMemberUpdated':
    case 'GroupMemberRemoved':
    case 'ProjectMemberAdded':
    case 'ProjectMemberUpdated':
    case 'ProjectMemberRemoved': {
      const type = e.type.startsWith('Group') ? 'Group' : 'Project';
      const id = (type === 'Group' ? d.groupId : d.projectId) as number;
      const had = await recall(type, id);
      if (!had) return;
      const members = { ...((had.state.members ?? {}) as Record<string, number>) };
      if (e.type.endsWith('Removed')) delete members[String(d.userId)];
      else members[String(d.userId)] = d.accessLevel as number;
      await put(type, id, had.path, had.name, { ...had.state, members });
      return;
    }
  }
}
