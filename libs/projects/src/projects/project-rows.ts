import type { EntityManager } from 'typeorm';
import type { RepositoryStatistics } from '../pushes/repository-push';
import { SETTINGS, settingsFrom, settingValue, type ProjectSettings } from './project-settings';

/*
 * Writes to the `projects` row that more than one capability's projection part makes: the row's
 * insertion (a project created, or forked), its repository statistics (a push, a fork's copy, a
 * housekeeping run) and its forks count. Imports no capability, so each part can use it.
 */

/** A new `projects` row; an event older than a setting has its default (settingsFrom), as the migration adding the column does. */
export async function insertProjectRow(
  db: EntityManager,
  d: ProjectSettings & { projectId: number; namespaceId: number; creatorId: number; runnersToken: string; at: string },
  forkedFromId: number | null,
): Promise<void> {
  const settings = settingsFrom(d);
  const columns = [
    'id',
    'namespace_id',
    'creator_id',
    'runners_token',
    'created_at',
    'updated_at',
    'last_activity_at',
    'forked_from_id',
    'import_status',
    ...SETTINGS.map((s) => s.wire),
  ];
  const values = [
    d.projectId,
    d.namespaceId,
    d.creatorId,
    d.runnersToken,
    d.at,
    d.at,
    d.at,
    forkedFromId,
    forkedFromId === null ? 'none' : 'scheduled',
    ...SETTINGS.map((s) => settingValue(s, settings)),
  ];
  await db.query(
    `insert into projects (${columns.join(', ')}) values (${values.map((_, i) => `$${i + 1}`).join(', ')})`,
    values,
  );
}

export async function setStatistics(db: EntityManager, projectId: number, s: RepositoryStatistics): Promise<void> {
  await db.query(`update projects set commit_count = $2, repository_size = $3 where id = $1`, [
    projectId,
    s.commitCount,
    s.repositorySize,
  ]);
}

/** `forks_count` of a source, counted again after a fork appears, is related, unrelated or deleted. */
export async function recountForks(db: EntityManager, projectId: number): Promise<void> {
  await db.query(
    `update projects set forks_count = (select count(*) from projects f where f.forked_from_id = $1) where id = $1`,
    [projectId],
  );
}
