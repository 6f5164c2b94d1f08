import type { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Deploy keys (GitLab's `keys` rows of type DeployKey) and the projects they are enabled on, each link
 * with its own `can_push` (GitLab 10.3.4 moved it from the key to the link).
 */
export class DeployKeys1763780001100 implements MigrationInterface {
  name = 'DeployKeys1763780001100';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`create sequence deploy_key_id_seq`);
    // `user_id` has no foreign key: a user's deletion hands the key to the ghost user (or to nobody)
    // through the projector, as `projects.creator_id`, and the key keeps working for its projects.
    await q.query(`
      create table deploy_keys (
        id int primary key,
        user_id int,
        title text not null,
        key text not null,
        key_type text not null,
        fingerprint text not null constraint deploy_keys_fingerprint_key unique,
        fingerprint_sha256 text not null,
        created_at timestamptz not null,
        updated_at timestamptz not null
      )`);
    // The SSH server's look-up of an offered key: one probe of this index.
    await q.query(`create unique index deploy_keys_fingerprint_sha256_key on deploy_keys (fingerprint_sha256)`);
    await q.query(`create index deploy_keys_user_idx on deploy_keys (user_id)`);
    // A project's deletion (its own, or its group's) takes its links with it, as GitLab's dependent destroy.
    await q.query(`
      create table deploy_keys_projects (
        deploy_key_id int not null references deploy_keys (id) on delete cascade,
        project_id int not null references projects (id) on delete cascade,
        can_push boolean not null,
        created_at timestamptz not null,
        updated_at timestamptz not null,
        primary key (deploy_key_id, project_id)
      )`);
    await q.query(
      `create index deploy_keys_projects_project_idx on deploy_keys_projects (project_id, created_at, deploy_key_id)`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`drop table deploy_keys_projects`);
    await q.query(`drop table deploy_keys`);
    await q.query(`drop sequence deploy_key_id_seq`);
  }
}
