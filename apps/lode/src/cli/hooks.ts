import { HookQueries } from '@app/hooks';
import type { Command } from 'commander';
import { CliFailure } from './exit-codes';
import { intArg } from './int-arg';
import type { LodeRun } from './lode-run';
import { print, table } from './output';

/** `hooks deliveries`: a hook's recent delivery attempts, newest first; URLs without credentials, never a token. */
export function registerHookCommands(program: Command, run: LodeRun): void {
  program
    .command('hooks')
    .description('project hooks and their delivery log')
    .command('deliveries')
    .description('the recent delivery attempts of one hook, newest first')
    .requiredOption('--hook <id>', "the hook's id", intArg(1))
    .option('--limit <n>', 'how many attempts to show', intArg(1, 1000), 20)
    .option('--json', 'print one JSON document instead of a table')
    .action(
      run.withLode(async ({ app }, o: { hook: number; limit: number; json?: boolean }) => {
        const hooks = app.get(HookQueries);
        const hook = await hooks.findForSystem(o.hook);
        if (!hook) throw new CliFailure(`no hook ${o.hook}`);
        const { rows, total } = await hooks.deliveries(o.hook, { offset: 0, perPage: o.limit, page: 1 });
        if (o.json) {
          print(
            JSON.stringify(
              {
                hook: { id: hook.id, project_id: hook.project_id, url: hook.url },
                total,
                deliveries: rows.map((d) => ({
                  id: Number(d.id),
                  event_uuid: d.event_uuid,
                  event: d.event,
                  url: d.url,
                  attempt: d.attempt,
                  response_status: d.response_status,
                  error: d.error,
                  duration_ms: d.duration_ms,
                  skipped: d.skipped,
                  created_at: new Date(d.created_at).toISOString(),
                })),
              },
              null,
              2,
            ),
          );
          return;
        }
        print(`hook ${hook.id} of project ${hook.project_id}: ${hook.url} (${total} attempts logged)`);
        for (const line of table(
          ['WHEN', 'EVENT', 'ATTEMPT', 'RESULT', 'DURATION', 'EVENT UUID'],
          rows.map((d) => [
            new Date(d.created_at).toISOString(),
            d.event,
            String(d.attempt),
            d.skipped ? 'skipped' : d.response_status !== null ? `HTTP ${d.response_status}` : (d.error ?? 'no answer'),
            `${d.duration_ms} ms`,
            d.event_uuid,
          ]),
        ))
          print(line);
      }),
    );
}
