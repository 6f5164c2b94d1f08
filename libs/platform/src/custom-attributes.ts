import type { Actor } from './context';
import { type Sql, execute, firstRow, rows } from './database/sql';
import { BadParameter, FieldErrors, NotFound } from './errors';

/**
 * GitLab's CustomAttribute model, shared by users, groups and projects: a key and a value, each
 * present and at most 255 characters. Throws `Invalid` with GitLab's field messages.
 */
export function checkCustomAttribute(key: string, value: string): void {
  const errors = new FieldErrors();
  const tooLong = 'is too long (maximum is 255 characters)';
  if (!key) errors.add('key', "can't be blank");
  else if (key.length > 255) errors.add('key', tooLong);
  if (!value) errors.add('value', "can't be blank");
  else if (value.length > 255) errors.add('value', tooLong);
  errors.throwIfAny();
}

/** Whether the attribute already holds this value (own keys only: `constructor` is no attribute). */
export const holdsCustomAttribute = (attributes: Record<string, string>, key: string, value: string): boolean =>
  Object.hasOwn(attributes, key) && attributes[key] === value;

/** `custom_attributes[key]=value` list filters: string pairs only, honoured for administrators. */
export function customAttributeFilter(
  value: Record<string, unknown> | undefined,
  actor?: Actor,
): Record<string, string> | undefined {
  if (!value || !actor?.isAdmin) return undefined;
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(value)) {
    if (typeof v !== 'string') throw new BadParameter('custom_attributes is invalid');
    out[k] = v;
  }
  return out;
}

type CustomAttribute = { key: string; value: string };

/**
 * Where one kind of owner (user, group, project) keeps its custom attributes: the same table shape,
 * written by its projection and read by its queries. Table and column names are constants, never input.
 */
export class CustomAttributeTable {
  constructor(
    private readonly table: string,
    private readonly ownerColumn: string,
  ) {}

  async set(db: Sql, ownerId: number, key: string, value: string): Promise<void> {
    await execute(
      db,
      `insert into ${this.table} (${this.ownerColumn}, key, value) values ($1, $2, $3)
       on conflict (${this.ownerColumn}, key) do update set value = excluded.value`,
      [ownerId, key, value],
    );
  }

  async remove(db: Sql, ownerId: number, key: string): Promise<void> {
    await execute(db, `delete from ${this.table} where ${this.ownerColumn} = $1 and key = $2`, [ownerId, key]);
  }

  list(db: Sql, ownerId: number): Promise<CustomAttribute[]> {
    return rows<CustomAttribute>(
      db,
      `select key, value from ${this.table} where ${this.ownerColumn} = $1 order by key`,
      [ownerId],
    );
  }

  /** GitLab's `custom_attributes.find_by!` miss is an ActiveRecord::RecordNotFound: `404 Not found`. */
  async get(db: Sql, ownerId: number, key: string): Promise<CustomAttribute> {
    const row = await firstRow<CustomAttribute>(
      db,
      `select key, value from ${this.table} where ${this.ownerColumn} = $1 and key = $2`,
      [ownerId, key],
    );
    if (!row) throw new NotFound();
    return row;
  }
}
