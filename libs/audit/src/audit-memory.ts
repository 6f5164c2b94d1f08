import type { EntityManager } from 'typeorm';
import type { Remembered, RememberedType } from './audit-log';

/**
 * What the audit projector remembers (`audit_entities`): names, paths, current values and members,
 * which give a change its `from`. Held in the process (`HeldAuditMemory`) for one append's events or
 * a whole rebuild, and written back to the table at its end: the events would otherwise read back
 * what the one before had just written.
 */
export interface AuditMemory {
  recall(type: RememberedType, id: number): Promise<Remembered | undefined>;
  /** `recall` of each key, in order. */
  recallMany(keys: readonly (readonly [RememberedType, number])[]): Promise<(Remembered | undefined)[]>;
  put(type: RememberedType, id: number, path: string | null, name: string | null, state: State): Promise<void>;
  forget(type: RememberedType, id: number): Promise<void>;
  /**
   * A group or personal namespace moved: the groups and projects below `from` take the prefix `to`
   * (nothing when either is unknown or they are the same).
   */
  movePrefix(from: string | null, to: string | null): Promise<void>;
}

type State = Record<string, unknown>;

const RECALL_SQL = `select path, name, state from audit_entities where entity_type = $1 and entity_id = $2`;
const RECALL_MANY_SQL = `select entity_type, entity_id, path, name, state from audit_entities
  where (entity_type, entity_id) in (select * from unnest($1::text[], $2::int[]))`;
const MOVE_PREFIX_SQL = `update audit_entities set path = $2 || substr(path, length($1) + 1)
  where entity_type in ('Group', 'Project') and path like $3 escape '\\'`;
/** A page of held entries written back in one statement (a JSON array of rows). */
const PUT_MANY_SQL = `insert into audit_entities (entity_type, entity_id, path, name, state)
  select entity_type, entity_id, path, name, state
    from jsonb_to_recordset($1::jsonb) as x(entity_type text, entity_id int, path text, name text, state jsonb)
  on conflict (entity_type, entity_id) do update set path = excluded.path, name = excluded.name, state = excluded.state`;
const FORGET_MANY_SQL = `delete from audit_entities where (entity_type, entity_id) in
  (select * from unnest($1::text[], $2::int[]))`;

const likePrefix = (from: string) => `${from.replace(/[\\%_]/g, (c) => `\\${c}`)}/%`;
const MOVES_WITH_PREFIX = new Set<RememberedType>(['Group', 'Project']);

/** The table's entries for `keys`, in their order (undefined where it holds none): one statement. */
async function readEntries(
  db: EntityManager,
  keys: readonly (readonly [RememberedType, number])[],
): Promise<(Remembered | undefined)[]> {
  if (keys.length === 1) return [((await db.query(RECALL_SQL, [...keys[0]])) as Remembered[])[0]];
  const rows = (await db.query(RECALL_MANY_SQL, [
    keys.map(([type]) => type),
    keys.map(([, id]) => id),
  ])) as (Remembered & {
    entity_type: RememberedType;
    entity_id: number;
  })[];
  const byKey = new Map(
    rows.map(({ entity_type, entity_id, path, name, state }) => [`${entity_type}:${entity_id}`, { path, name, state }]),
  );
  return keys.map(([type, id]) => byKey.get(`${type}:${id}`));
}

interface Held {
  type: RememberedType;
  id: number;
  /** undefined: not remembered (forgotten: when dirty, still to be deleted from the table). */
  value: Remembered | undefined;
  /** Differs from the table: written back before it is dropped, and at the end. */
  dirty: boolean;
  bytes: number;
}

/** Rows per statement when held entries are written back. */
const WRITE_BACK_PAGE = 2000;
/**
 * What an entry is counted for beyond its JSON text's length: the key, the object, the Map's slot. The
 * count is an estimate of the heap it takes (JavaScript objects take more than their JSON).
 */
const ENTRY_OVERHEAD = 200;

/**
 * An audit memory held in the process and bounded by bytes, written back to the table at `finish`
 * (or past the budget: everything written back, one statement a page, and the least recently used
 * dropped). Two uses:
 * - a rebuild's (`startsEmpty`): the table is empty when the replay starts and only this projector
 *   writes it, so while nothing has been dropped a miss means "never remembered" and no statement is
 *   sent at all; once something was dropped a miss reads the table as the live projector does;
 * - one append's events (a command's decision: a project's creation and its creator's membership),
 *   which would otherwise each read back what the one before had just written: a miss reads the
 *   table, and what the events leave in mind is written in one statement at the end.
 * The values are kept as the table would give them back (`asJsonb`), so either builds the rows the
 * other does. A value handed out by `recall` is shared: the projector copies before it changes one
 * (it always has).
 */
export class HeldAuditMemory {
  private readonly held = new Map<string, Held>();
  private bytes = 0;
  /** Nothing was dropped: what is not held is not in the table either. */
  private complete: boolean;

  constructor(
    private readonly budgetBytes: number,
    { startsEmpty = true }: { startsEmpty?: boolean } = {},
  ) {
    this.complete = startsEmpty;
  }

  /** The memory for one event's statements, written back (when it must) through `db`. */
  over(db: EntityManager): AuditMemory {
    const recall = (type: RememberedType, id: number) => this.recall(db, type, id);
    return {
      recall,
      recallMany: (keys) => this.recallMany(db, keys),
      put: async (type, id, path, name, state) => {
        this.hold(type, id, { path: asText(path), name: asText(name), state: asJsonb(state) as State }, true);
        await this.keepWithinBudget(db);
      },
      forget: async (type, id) => {
        this.hold(type, id, undefined, true);
        await this.keepWithinBudget(db);
      },
      movePrefix: (from, to) => this.movePrefix(db, from, to),
    };
  }

  /** Writes back every entry that differs from the table. */
  async finish(db: EntityManager): Promise<void> {
    await this.writeBack(db);
  }

  private async recall(db: EntityManager, type: RememberedType, id: number): Promise<Remembered | undefined> {
    const key = `${type}:${id}`;
    const entry = this.held.get(key);
    if (entry) {
      // Most recently used last: the Map's order is the order entries are dropped in.
      this.held.delete(key);
      this.held.set(key, entry);
      return entry.value;
    }
    if (this.complete) return undefined;
    const [found] = await readEntries(db, [[type, id]]);
    this.hold(type, id, found, false);
    await this.keepWithinBudget(db);
    return found;
  }

  /** `recall` of each key, what is not held read from the table in one statement. */
  private async recallMany(
    db: EntityManager,
    keys: readonly (readonly [RememberedType, number])[],
  ): Promise<(Remembered | undefined)[]> {
    const missing = keys.filter(([type, id]) => !this.held.has(`${type}:${id}`));
    if (missing.length > 1 && !this.complete) {
      const found = await readEntries(db, missing);
      missing.forEach(([type, id], i) => this.hold(type, id, found[i], false));
      await this.keepWithinBudget(db);
    }
    const recalled: (Remembered | undefined)[] = [];
    for (const [type, id] of keys) recalled.push(await this.recall(db, type, id));
    return recalled;
  }

  private async movePrefix(db: EntityManager, from: string | null, to: string | null): Promise<void> {
    if (!from || !to || from === to) return;
    const below = `${from}/`;
    const moved = (path: string) => to + path.slice(from.length);
    if (!this.complete) {
      // The table holds entries this memory does not: bring it up to date, move them there, and
      // move the held ones (then equal to the table's again) the same way.
      await this.writeBack(db);
      await db.query(MOVE_PREFIX_SQL, [from, to, likePrefix(from)]);
    }
    for (const entry of this.held.values()) {
      const path = entry.value?.path;
      if (!MOVES_WITH_PREFIX.has(entry.type) || !path?.startsWith(below)) continue;
      entry.value = { ...entry.value!, path: moved(path) };
      // While complete, every held entry is dirty already (nothing was written back yet).
      if (this.complete) entry.dirty = true;
    }
  }

  private hold(type: RememberedType, id: number, value: Remembered | undefined, dirty: boolean): void {
    const key = `${type}:${id}`;
    const was = this.held.get(key);
    if (was) {
      this.bytes -= was.bytes;
      this.held.delete(key);
    }
    const bytes = ENTRY_OVERHEAD + (value ? JSON.stringify(value).length : 0);
    this.held.set(key, { type, id, value, dirty: dirty || (was?.dirty ?? false), bytes });
    this.bytes += bytes;
  }

  /** Past the budget: everything written back, then the least recently used dropped down to half of it. */
  private async keepWithinBudget(db: EntityManager): Promise<void> {
    if (this.bytes <= this.budgetBytes) return;
    await this.writeBack(db);
    for (const [key, entry] of this.held) {
      if (this.bytes <= this.budgetBytes / 2) break;
      this.held.delete(key);
      this.bytes -= entry.bytes;
    }
    this.complete = false;
  }

  private async writeBack(db: EntityManager): Promise<void> {
    const dirty = [...this.held.values()].filter((e) => e.dirty);
    const kept = dirty.filter((e) => e.value);
    const gone = dirty.filter((e) => !e.value);
    for (let i = 0; i < kept.length; i += WRITE_BACK_PAGE)
      await db.query(PUT_MANY_SQL, [
        JSON.stringify(
          kept.slice(i, i + WRITE_BACK_PAGE).map((e) => ({
            entity_type: e.type,
            entity_id: e.id,
            path: e.value!.path,
            name: e.value!.name,
            state: e.value!.state,
          })),
        ),
      ]);
    for (let i = 0; i < gone.length; i += WRITE_BACK_PAGE) {
      const page = gone.slice(i, i + WRITE_BACK_PAGE);
      await db.query(FORGET_MANY_SQL, [page.map((e) => e.type), page.map((e) => e.id)]);
    }
    for (const e of dirty) e.dirty = false;
  }
}

/** A `text` column's value as the table gives it back (pg sends a number or boolean as its text). */
function asText(value: unknown): string | null {
  return value === null || value === undefined ? null : typeof value === 'string' ? value : String(value);
}

/**
 * `value` as the table gives it back: JSON, so undefined members are gone and every value is a copy.
 * (jsonb also orders an object's keys, which no entry the projector writes depends on: its details
 * come from the event's keys, and a remembered object is only ever copied or read by key.)
 */
function asJsonb(value: unknown): unknown {
  return JSON.parse(JSON.stringify(value)) as unknown;
}
