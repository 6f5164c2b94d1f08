import type { EntityManager } from 'typeorm';

/**
 * The `members` table is shared by groups (`namespace`) and projects (`project`); the groups
 * context owns it and both projections write memberships through this one statement.
 */
export async function upsertMember(
  db: EntityManager,
  m: {
    sourceType: 'namespace' | 'project';
    sourceId: number;
    userId: number;
    accessLevel: number;
    expiresAt: string | null;
    createdBy: number | null;
    at: string;
  },
): Promise<void> {
  await db.query(
    `insert into members (source_type, source_id, user_id, access_level, expires_at, created_by, created_at, updated_at)
     values ($1, $2, $3, $4, $5, $6, $7, $7)
     on conflict (source_type, source_id, user_id)
     do update set access_level = excluded.access_level, expires_at = excluded.expires_at, updated_at = excluded.updated_at`,
    [m.sourceType, m.sourceId, m.userId, m.accessLevel, m.expiresAt, m.createdBy, m.at],
  );
}

/** Removes one membership of a group or project. */
export async function removeMember(
  db: EntityManager,
  sourceType: 'namespace' | 'project',
  sourceId: number,
  userId: number,
): Promise<void> {
  await db.query(`delete from members where source_type = $1 and source_id = $2 and user_id = $3`, [
    sourceType,
    sourceId,
    userId,
  ]);
}

/** Removes every membership of a group or project. */
export async function removeMembers(
  db: EntityManager,
  sourceType: 'namespace' | 'project',
  sourceId: number,
): Promise<void> {
  await db.query(`delete from members where source_type = $1 and source_id = $2`, [sourceType, sourceId]);
}

/**
 * Removes the memberships of `sourceType` whose source matches `condition`, SQL given the source
 * id expression (the owner of the sources names its own table there): one statement for many.
 */
export async function removeMembersWhere(
  db: EntityManager,
  sourceType: 'namespace' | 'project',
  condition: (sourceIdSql: string) => string,
): Promise<void> {
  await db.query(`delete from members m where m.source_type = $1 and ${condition('m.source_id')}`, [sourceType]);
}
