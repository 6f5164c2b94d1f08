import type { MigrationInterface, QueryRunner } from 'typeorm';

/** Each paired access level and the `*_enabled` switch GitLab keeps it as (project-settings.ts, `switchedBy`). */
const PAIRED: [level: string, switchColumn: string][] = [
  ['issues_access_level', 'issues_enabled'],
  ['merge_requests_access_level', 'merge_requests_enabled'],
  ['wiki_access_level', 'wiki_enabled'],
  ['builds_access_level', 'jobs_enabled'],
  ['snippets_access_level', 'snippets_enabled'],
  ['container_registry_access_level', 'container_registry_enabled'],
];
const UNPAIRED = [
  'repository_access_level',
  'forking_access_level',
  'operations_access_level',
  'analytics_access_level',
  'requirements_access_level',
];
const FLAGS: [column: string, byDefault: boolean][] = [
  ['packages_enabled', true],
  ['remove_source_branch_after_merge', true],
  ['allow_merge_on_skipped_pipeline', false],
  ['autoclose_referenced_issues', true],
  ['ci_forward_deployment_enabled', true],
  ['merge_pipelines_enabled', false],
  ['merge_trains_enabled', false],
];

/**
 * Settings clients write and read back (merge method, squash option, GitLab's `*_access_level`
 * family, later switches), kept as sent. Each column's default is the table's for a project whose
 * events predate it; a paired level of an existing project follows its switch, as `settingsFrom`
 * reads the old events, so a rebuild gives the same rows.
 */
export class ProjectSettingsKept1763780002400 implements MigrationInterface {
  name = 'ProjectSettingsKept1763780002400';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`alter table projects add column merge_method text not null default 'merge'`);
    await q.query(`alter table projects add column squash_option text not null default 'default_off'`);
    for (const [level, switchColumn] of PAIRED) {
      await q.query(`alter table projects add column ${level} text not null default 'enabled'`);
      await q.query(`update projects set ${level} = 'disabled' where not ${switchColumn}`);
    }
    for (const level of UNPAIRED)
      await q.query(`alter table projects add column ${level} text not null default 'enabled'`);
    await q.query(`alter table projects add column pages_access_level text not null default 'private'`);
    await q.query(`update projects set pages_access_level = 'enabled' where visibility = 'public'`);
    await q.query(
      `alter table projects add column security_and_compliance_access_level text not null default 'private'`,
    );
    for (const [column, byDefault] of FLAGS)
      await q.query(`alter table projects add column ${column} boolean not null default ${byDefault}`);
  }

  async down(q: QueryRunner): Promise<void> {
    const columns = [
      'merge_method',
      'squash_option',
      ...PAIRED.map(([level]) => level),
      ...UNPAIRED,
      'pages_access_level',
      'security_and_compliance_access_level',
      ...FLAGS.map(([column]) => column),
    ];
    await q.query(`alter table projects ${columns.map((c) => `drop column ${c}`).join(', ')}`);
  }
}
