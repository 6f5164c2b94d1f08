import { rows, SecretBox, type ConfiguredMigration, type LodeConfig } from '@app/platform';
import type { MigrationInterface, QueryRunner } from 'typeorm';
import { hasCredentials, maskCredentials } from '../domain/hook-url';

interface HookRow {
  id: number;
  project_id: number;
  url: string;
  token: string | null;
}

interface HookEventRow {
  global_position: string;
  type: 'ProjectHookAdded' | 'ProjectHookUpdated';
  data: { url?: string; token?: string | null; settings?: { url?: string; token?: string | null } };
}

/**
 * Hook secrets leave the event log: `project_hook_secrets` holds each hook's token and URL credentials
 * sealed (AES-256-GCM), `project_hooks` loses its `token` column and keeps the URL masked.
 *
 * This is the one sanctioned rewrite of history. Events are otherwise never changed; but a secret in
 * an immutable log cannot be rotated or deleted, from the database or from any backup taken after
 * this. So `ProjectHookAdded` and `ProjectHookUpdated` lose their `token` and have their URL's
 * credentials masked, in place; nothing else in them changes, and no code reads the removed fields.
 * The secrets kept are the current ones of the hooks that exist (from the read model, which holds
 * exactly those); a removed hook's secrets are simply dropped. Backups taken before this migration
 * still hold the old events: rotate those secrets at the receivers.
 */
export const HookSecrets1763780000700: ConfiguredMigration = {
  withConfig: (config: LodeConfig) =>
    class HookSecrets1763780000700 implements MigrationInterface {
      name = 'HookSecrets1763780000700';

      async up(q: QueryRunner): Promise<void> {
        await q.query(`
          create table project_hook_secrets (
            hook_id int primary key,
            project_id int not null,
            sealed text not null
          )`);
        await q.query(`create index project_hook_secrets_project_idx on project_hook_secrets (project_id)`);

        const hooks = await rows<HookRow>(q, `select id, project_id, url, token from project_hooks`);
        if (hooks.some((h) => h.token || hasCredentials(h.url))) {
          // The key is needed only when there is something to seal: a fresh database creates no key file here.
          const box = SecretBox.forConfig(config);
          for (const h of hooks) {
            const secret = { token: h.token || null, url: hasCredentials(h.url) ? h.url : null };
            if (secret.token !== null || secret.url !== null)
              await q.query(`insert into project_hook_secrets (hook_id, project_id, sealed) values ($1, $2, $3)`, [
                h.id,
                h.project_id,
                box.seal(JSON.stringify(secret)),
              ]);
            if (secret.url !== null)
              await q.query(`update project_hooks set url = $2 where id = $1`, [h.id, maskCredentials(h.url)]);
          }
        }
        await q.query(`alter table project_hooks drop column token`);

        const events = await rows<HookEventRow>(
          q,
          `select global_position, type, data from events where type in ('ProjectHookAdded', 'ProjectHookUpdated')`,
        );
        for (const e of events) {
          const target = e.type === 'ProjectHookAdded' ? e.data : e.data.settings;
          if (!target) continue;
          delete target.token;
          if (typeof target.url === 'string') target.url = maskCredentials(target.url);
          await q.query(`update events set data = $2 where global_position = $1`, [
            e.global_position,
            JSON.stringify(e.data),
          ]);
        }
      }

      async down(q: QueryRunner): Promise<void> {
        // The removed secrets are not put back into the log; delivery without them sends no token.
        await q.query(`alter table project_hooks add column token text`);
        await q.query(`drop table project_hook_secrets`);
      }
    },
};
