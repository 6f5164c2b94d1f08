import 'reflect-metadata';
import { Command } from 'commander';
import { registerBackupCommands } from './cli/backup';
import { registerCheckCommand } from './cli/check';
import { EXIT, failureOf, type ExitCode } from './cli/exit-codes';
import { registerHookCommands } from './cli/hooks';
import { registerJobCommands } from './cli/jobs';
import { LodeRun } from './cli/lode-run';
import { cliConfig, openLode } from './cli/open-lode';
import { registerOutboxCommands } from './cli/outbox';
import { registerProjectionCommands } from './cli/projections';
import { registerUserCommands } from './cli/users';

/**
 * The administrator's command line (`lode <command>`, `npm run lode -- <command>`): the whole of Lode
 * without HTTP or workers, on the database the environment names. Results go to stdout, errors to
 * stderr as `lode: <message>`; exit codes are in cli/exit-codes.ts (0 done, 1 failed or found
 * problems, 2 usage, 3 database unusable).
 */
function program(run: LodeRun): Command {
  const lode = new Command('lode')
    .description(
      "Lode's administration: users and tokens, read models, consistency checks, jobs, hooks, backup and restore",
    )
    .addHelpText(
      'after',
      '\nSettings come from the environment, as for the server (DATABASE_URL, REDIS_URL, LODE_DATA_DIR, ...).\n' +
        'Exit codes: 0 done, 1 the command failed or found problems, 2 usage error, 3 the database cannot be used.',
    )
    // Inherited by every command added below.
    .exitOverride()
    .showHelpAfterError('(lode <command> --help shows its usage)')
    .configureOutput({ outputError: (text, write) => write(`lode: ${text.replace(/^error: /, '')}`) });
  lode.helpCommand(true);
  registerUserCommands(lode, run);
  registerProjectionCommands(lode, run);
  registerCheckCommand(lode, run);
  registerJobCommands(lode, run);
  registerOutboxCommands(lode, run);
  registerHookCommands(lode, run);
  registerBackupCommands(lode, run);
  return lode;
}

async function main(argv: string[]): Promise<ExitCode> {
  const run = new LodeRun(() => openLode(cliConfig()));
  try {
    await program(run).parseAsync(argv, { from: 'user' });
    return run.exitCode;
  } catch (err) {
    const { code, message } = failureOf(err);
    if (message) process.stderr.write(`lode: ${message}\n`);
    return code;
  }
}

// A reader that stops early (`lode jobs list | head`) is no error of the command.
process.stdout.on('error', (err: NodeJS.ErrnoException) => {
  if (err.code === 'EPIPE') process.exit(EXIT.ok);
  throw err;
});

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err) => {
    process.stderr.write(`lode: ${String(err)}\n`);
    process.exit(EXIT.failed);
  },
);
