import { firstRow, rows, SecretBox, type Sql } from '@app/platform';
import { Injectable, Logger } from '@nestjs/common';
import { DataSource, type EntityManager } from 'typeorm';
import { hasCredentials, MASK, maskCredentials } from '../domain/hook-url';
import type { HookSettings } from '../domain/project-hook';

/** What delivery needs that the events do not hold. */
export interface HookSecret {
  token: string | null;
  /** The URL as given, credentials included; null when it has none (the record's URL is then the URL). */
  url: string | null;
  /** The Standard Webhooks signing secret (`whsec_...`); absent in secrets sealed before it existed. */
  signingToken?: string | null;
}

/**
 * A hook's secrets, sealed (`SecretBox`, AES-256-GCM) in `project_hook_secrets`, one row per hook that
 * has any. Written in the command's transaction beside the hook's event and deleted with the hook, so
 * removing or rotating a secret removes it from the database. The table is not a projection: a rebuild
 * leaves it alone.
 */
@Injectable()
export class HookSecrets {
  private readonly logger = new Logger('HookSecrets');

  constructor(
    private readonly db: DataSource,
    private readonly box: SecretBox,
  ) {}

  /**
   * Keeps the secrets of `settings` for the hook, or none when it has none. Runs after the hook's
   * event was projected in the same transaction: a hook whose project was deleted meanwhile has no
   * row, and then no secret is kept either.
   */
  async save(db: EntityManager, hookId: number, projectId: number, settings: HookSettings): Promise<void> {
    // An update that does not give `signing_token` keeps the hook's (a receiver verifying it goes on working).
    const signingToken =
      settings.signingToken !== undefined
        ? settings.signingToken
        : ((await this.read(hookId, db))?.signingToken ?? null);
    const secret: HookSecret = {
      token: settings.token,
      url: hasCredentials(settings.url) ? settings.url : null,
      // Kept out of the sealed JSON when there is none: secrets read the same as before it existed.
      ...(signingToken ? { signingToken } : {}),
    };
    if (secret.token === null && secret.url === null && !secret.signingToken) return this.erase(db, hookId);
    await db.query(
      `insert into project_hook_secrets (hook_id, project_id, sealed)
       select $1, $2, $3 where exists (select 1 from project_hooks where id = $1)
       on conflict (hook_id) do update set sealed = excluded.sealed`,
      [hookId, projectId, this.box.seal(JSON.stringify(secret))],
    );
  }

  async erase(db: EntityManager, hookId: number): Promise<void> {
    await db.query(`delete from project_hook_secrets where hook_id = $1`, [hookId]);
  }

  async read(hookId: number, db: EntityManager = this.db.manager): Promise<HookSecret | undefined> {
    const row = await firstRow<{ sealed: string }>(db, `select sealed from project_hook_secrets where hook_id = $1`, [
      hookId,
    ]);
    return this.open(hookId, row);
  }

  /**
   * A system hook's secrets, in `system_hook_secrets`, written beside its `SystemHookAdded` or
   * `SystemHookUpdated`. An update that does not give `signing_token` keeps the hook's, as for project hooks.
   */
  async saveSystem(
    db: EntityManager,
    hookId: number,
    settings: Pick<HookSettings, 'url' | 'token' | 'signingToken'>,
  ): Promise<void> {
    const signingToken =
      settings.signingToken !== undefined
        ? settings.signingToken
        : ((await this.readSystem(hookId, db))?.signingToken ?? null);
    const secret: HookSecret = {
      token: settings.token,
      url: hasCredentials(settings.url) ? settings.url : null,
      ...(signingToken ? { signingToken } : {}),
    };
    if (secret.token === null && secret.url === null && !secret.signingToken) return this.eraseSystem(db, hookId);
    await db.query(
      `insert into system_hook_secrets (hook_id, sealed) values ($1, $2)
       on conflict (hook_id) do update set sealed = excluded.sealed`,
      [hookId, this.box.seal(JSON.stringify(secret))],
    );
  }

  async eraseSystem(db: EntityManager, hookId: number): Promise<void> {
    await db.query(`delete from system_hook_secrets where hook_id = $1`, [hookId]);
  }

  async readSystem(hookId: number, db: EntityManager = this.db.manager): Promise<HookSecret | undefined> {
    const row = await firstRow<{ sealed: string }>(db, `select sealed from system_hook_secrets where hook_id = $1`, [
      hookId,
    ]);
    return this.open(hookId, row);
  }

  /** `unmask` for a system hook: a PUT sending back the masked URL keeps the hook's own. */
  async unmaskSystem<S extends { url: string }>(hookId: number, settings: S): Promise<S> {
    if (!settings.url.includes(MASK)) return settings;
    const stored = (await this.readSystem(hookId))?.url;
    return stored && maskCredentials(stored) === settings.url ? { ...settings, url: stored } : settings;
  }

  /** A sealed row read elsewhere (a delivery reads its hook and secrets in one statement), opened. */
  open(hookId: number, row: { sealed: string } | undefined): HookSecret | undefined {
    if (!row) return undefined;
    try {
      return JSON.parse(this.box.open(row.sealed)) as HookSecret;
    } catch {
      // Sealed with another key (LODE_SECRET_KEY changed, or the key file lost): the hook delivers
      // without its secrets rather than not at all, and the operator is told which hook.
      this.logger.warn(`hook ${hookId}: its secrets do not open with this installation's key (LODE_SECRET_KEY)`);
      return undefined;
    }
  }

  /**
   * A PUT may send back the masked URL the API answered (clients that save a hook they read do):
   * then the hook keeps the URL it has, credentials included.
   */
  async unmask(hookId: number, settings: HookSettings): Promise<HookSettings> {
    if (!settings.url.includes(MASK)) return settings;
    const stored = (await this.read(hookId))?.url;
    return stored && maskCredentials(stored) === settings.url ? { ...settings, url: stored } : settings;
  }

  /**
   * Removes the secrets of hooks that no longer exist: a project's hooks go with it by the read
   * model's cascade when the project, its group or its owner is deleted. A hook's row and its secret
   * are committed together, so a secret without a row belongs to a hook that is gone.
   */
  async eraseGone(): Promise<number> {
    // A delete answers TypeORM's [rows, rowCount], not rows.
    const [, removed] = (await this.db.query(
      `delete from project_hook_secrets s where not exists (select 1 from project_hooks h where h.id = s.hook_id)`,
    )) as [unknown, number];
    return removed;
  }
}

/**
 * One sealed secret and how many hooks have one, or undefined when none has (or the table is not
 * there yet): a restore tries its key on the sample. `db` may be a plain `pg` client (`pgSql`).
 */
export async function sealedSecretSample(db: Sql): Promise<{ sealed: string; hooks: string } | undefined> {
  const [table] = await rows<{ present: boolean }>(
    db,
    `select to_regclass('public.project_hook_secrets') is not null as present`,
  );
  if (!table.present) return undefined;
  const [sample] = await rows<{ sealed: string; hooks: string }>(
    db,
    `select sealed, count(*) over ()::text as hooks from project_hook_secrets limit 1`,
  );
  return sample;
}
