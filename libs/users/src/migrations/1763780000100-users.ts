import type { MigrationInterface, QueryRunner } from 'typeorm';

/** Read models of the users context, and the sequences its aggregates take ids from. */
export class Users1763780000100 implements MigrationInterface {
  name = 'Users1763780000100';

  async up(q: QueryRunner): Promise<void> {
    // namespace_id_seq: personal namespaces (named in UserCreated) and groups share GitLab's namespace ids.
    for (const seq of [
      'user_id_seq',
      'namespace_id_seq',
      'ssh_key_id_seq',
      'gpg_key_id_seq',
      'email_id_seq',
      'access_token_id_seq',
    ]) {
      await q.query(`create sequence ${seq}`);
    }
    await q.query(`
      create table users (
        id int primary key,
        username text not null,
        email text not null,
        name text not null,
        state text not null,
        is_admin boolean not null,
        ghost boolean not null default false,
        bio text,
        location text,
        messenger text not null default '',
        career_profile text not null default '',
        social_account text not null default '',
        website_url text not null default '',
        organization text,
        projects_limit int not null,
        can_create_group boolean not null,
        external boolean not null,
        avatar text,
        password_digest text,
        theme_id int not null default 1,
        color_scheme_id int not null default 1,
        confirmed_at timestamptz,
        created_at timestamptz not null,
        updated_at timestamptz not null,
        last_activity_on date
      )`);
    await q.query(`create unique index users_username_key on users (lower(username))`);
    await q.query(`create index users_state_idx on users (state)`);
    await q.query(`create index users_created_at_idx on users (created_at)`);
    await q.query(
      `create index users_last_activity_on_idx on users (last_activity_on) where last_activity_on is not null`,
    );
    await q.query(`
      create table user_identities (
        user_id int not null references users (id) on delete cascade,
        provider text not null,
        extern_uid text not null,
        primary key (user_id, provider)
      )`);
    await q.query(
      `create unique index user_identities_extern_uid_key on user_identities (provider, lower(extern_uid))`,
    );
    // Every address, primary or secondary, of every user: GitLab keeps them unique across both kinds.
    await q.query(`
      create table user_email_claims (
        email_lower text not null constraint user_email_claims_pkey primary key,
        user_id int not null references users (id) on delete cascade,
        email_id int
      )`);
    await q.query(`create index user_email_claims_user_idx on user_email_claims (user_id)`);
    await q.query(`
      create table emails (
        id int primary key,
        user_id int not null references users (id) on delete cascade,
        email text not null,
        created_at timestamptz not null
      )`);
    await q.query(`create index emails_user_idx on emails (user_id, id)`);
    await q.query(`
      create table ssh_keys (
        id int primary key,
        user_id int not null references users (id) on delete cascade,
        title text not null,
        key text not null,
        key_type text not null,
        fingerprint text not null constraint ssh_keys_fingerprint_key unique,
        fingerprint_sha256 text not null,
        created_at timestamptz not null
      )`);
    await q.query(`create index ssh_keys_user_idx on ssh_keys (user_id, id)`);
    await q.query(`
      create table gpg_keys (
        id int primary key,
        user_id int not null references users (id) on delete cascade,
        key text not null,
        fingerprint text not null constraint gpg_keys_fingerprint_key unique,
        primary_keyid text not null,
        created_at timestamptz not null
      )`);
    await q.query(`create index gpg_keys_user_idx on gpg_keys (user_id, id)`);
    await q.query(`
      create table access_tokens (
        id int primary key,
        user_id int not null references users (id) on delete cascade,
        name text not null,
        digest text not null constraint access_tokens_digest_key unique,
        scopes text[] not null,
        impersonation boolean not null,
        revoked boolean not null default false,
        expires_at date,
        created_by int,
        created_at timestamptz not null
      )`);
    await q.query(`create index access_tokens_user_idx on access_tokens (user_id, impersonation, id)`);
    await q.query(`
      create table user_custom_attributes (
        user_id int not null references users (id) on delete cascade,
        key text not null,
        value text not null,
        primary key (user_id, key)
      )`);
    await q.query(`create index user_custom_attributes_key_value_idx on user_custom_attributes (key, value)`);
  }

  async down(q: QueryRunner): Promise<void> {
    for (const t of [
      'user_custom_attributes',
      'access_tokens',
      'gpg_keys',
      'ssh_keys',
      'emails',
      'user_email_claims',
      'user_identities',
      'users',
    ]) {
      await q.query(`drop table ${t}`);
    }
    for (const seq of [
      'user_id_seq',
      'namespace_id_seq',
      'ssh_key_id_seq',
      'gpg_key_id_seq',
      'email_id_seq',
      'access_token_id_seq',
    ]) {
      await q.query(`drop sequence ${seq}`);
    }
  }
}
