import { ProjectionRebuilder } from '@app/platform';
import type { Command } from 'commander';
import type { LodeRun } from './lode-run';
import type { Lode } from './open-lode';
import { note, print, progress } from './output';

async function rebuild({ app }: Lode): Promise<void> {
  const started = Date.now();
  let bar: ReturnType<typeof progress> | undefined;
  const result = await app.get(ProjectionRebuilder).rebuild(
    (p) => {
      bar ??= progress('events', p.total);
      bar.update(p.done, p.total);
    },
    (tables) => {
      bar?.stop();
      bar = undefined;
      // On a terminal only, as the bar: a script reads the one result line.
      if (process.stderr.isTTY) note(`replayed; vacuuming and analyzing the ${tables} rebuilt tables`);
    },
  );
  bar?.stop();
  const seconds = (Date.now() - started) / 1000;
  const vacuum = result.vacuumed
    ? `vacuum and analyze ${result.vacuumSeconds.toFixed(1)} s`
    : 'the vacuum failed, see the warning';
  print(
    `rebuilt the read models from ${result.total} events in ${seconds.toFixed(1)} s (replay ${result.replaySeconds.toFixed(1)} s, ${vacuum})`,
  );
}

const DESCRIPTION = 'empty every read model and replay all events (writers wait meanwhile)';

/** `projections rebuild`, and its older spelling `projections:rebuild`. */
export function registerProjectionCommands(program: Command, run: LodeRun): void {
  program.command('projections:rebuild').description(DESCRIPTION).action(run.withLode(rebuild));
  program
    .command('projections')
    .description('the read models built from the events')
    .command('rebuild')
    .description(DESCRIPTION)
    .action(run.withLode(rebuild));
}
