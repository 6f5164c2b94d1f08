import {
  BadParameter,
  Conflict,
  Invalid,
  NotFound,
  RecordInvalid,
  Unprocessable,
  isDatabaseUnavailable,
} from '@app/platform';
import { CommanderError } from 'commander';

/** What `lode` exits with, for scripts (README, The command line). */
export const EXIT = {
  /** The command did what it was asked, or found nothing wrong. */
  ok: 0,
  /** The command ran and failed, or found something wrong (`check`'s problems, a job that could not be retried). */
  failed: 1,
  /** The command line was wrong: an unknown command or option, a missing or bad value. */
  usage: 2,
  /** The database cannot be used: unreachable, absent, or holding no Lode. */
  database: 3,
} as const;
export type ExitCode = (typeof EXIT)[keyof typeof EXIT];

/** A failure the command reports in a sentence of its own, with the code it exits with. */
export class CliFailure extends Error {
  constructor(
    message: string,
    readonly exitCode: ExitCode = EXIT.failed,
  ) {
    super(message);
  }
}

/** A bad value found after parsing (a date in the past, a validation message of the domain). */
export class UsageError extends CliFailure {
  constructor(message: string) {
    super(message, EXIT.usage);
  }
}

/** The database the settings name cannot be used: nothing was done. */
export class DatabaseUnusable extends CliFailure {
  constructor(message: string) {
    super(message, EXIT.database);
  }
}

/**
 * The exit code for an error that ended a command, and the message to print (none when it was printed
 * already: commander writes its own). Domain errors keep their words: a field validation reads
 * `email is invalid`, a conflict `Email has already been taken`.
 */
export function failureOf(err: unknown): { code: ExitCode; message?: string } {
  // Commander ends with exit code 0 for help asked for (`--help`, `help <command>`), 1 for its errors
  // and for help shown because a command was missing; those are usage errors here.
  if (err instanceof CommanderError) return { code: err.exitCode === 0 ? EXIT.ok : EXIT.usage };
  if (err instanceof CliFailure) return { code: err.exitCode, message: err.message };
  if (err instanceof Invalid)
    return {
      code: EXIT.usage,
      message: Object.entries(err.fields)
        .flatMap(([field, messages]) => messages.map((m) => `${field} ${m}`))
        .join('; '),
    };
  if (err instanceof BadParameter) return { code: EXIT.usage, message: err.error };
  if (err instanceof Conflict)
    return { code: EXIT.failed, message: typeof err.body === 'string' ? err.body : err.message };
  if (err instanceof RecordInvalid) return { code: EXIT.failed, message: err.messages.join('; ') };
  if (err instanceof Unprocessable) return { code: EXIT.failed, message: err.error };
  if (err instanceof NotFound) return { code: EXIT.failed, message: err.message };
  if (isDatabaseUnavailable(err))
    return { code: EXIT.database, message: `the database stopped answering: ${String((err as Error).message)}` };
  return { code: EXIT.failed, message: err instanceof Error ? err.message : String(err) };
}
