import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The group settings GitLab added after 10.x that clients write and read back (domain/group-settings.ts),
 * each with the table's default, so a group created before reads as a new one would.
 */
export class GroupSettings1763780002300 implements MigrationInterface {
  name = 'GroupSettings1763780002300';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      alter table namespaces
        add column share_with_group_lock boolean not null default false,
        add column require_two_factor_authentication boolean not null default false,
        add column two_factor_grace_period int not null default 48,
        add column project_creation_level text not null default 'maintainer',
        add column auto_devops_enabled boolean not null default false,
        add column subgroup_creation_level text not null default 'owner',
        add column emails_disabled boolean not null default false,
        add column mentions_disabled boolean not null default false,
        add column default_branch_protection int not null default 2,
        add column prevent_forking_outside_group boolean not null default false`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`
      alter table namespaces
        drop column share_with_group_lock,
        drop column require_two_factor_authentication,
        drop column two_factor_grace_period,
        drop column project_creation_level,
        drop column auto_devops_enabled,
        drop column subgroup_creation_level,
        drop column emails_disabled,
        drop column mentions_disabled,
        drop column default_branch_protection,
        drop column prevent_forking_outside_group`);
  }
}
