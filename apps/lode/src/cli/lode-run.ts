import { EXIT, type ExitCode } from './exit-codes';
import type { Lode } from './open-lode';

/**
 * One run of the command line: how commands reach an open Lode, and the exit code the command chose.
 * Lode is opened only by a command that needs it, after its arguments parsed: `--help` and usage
 * errors never touch the database.
 */
export class LodeRun {
  exitCode: ExitCode = EXIT.ok;

  constructor(private readonly open: () => Promise<Lode>) {}

  /** A commander action that opens what it needs itself (backup, restore): keeps the code `work` answers. */
  withConfig<A extends unknown[]>(work: (...args: A) => Promise<ExitCode | void>): (...args: A) => Promise<void> {
    return async (...args: A) => {
      this.exitCode = (await work(...args)) ?? EXIT.ok;
    };
  }

  /** A commander action that runs `work` on an open Lode, closes it, and keeps the code `work` answers. */
  withLode<A extends unknown[]>(
    work: (lode: Lode, ...args: A) => Promise<ExitCode | void>,
  ): (...args: A) => Promise<void> {
    return async (...args: A) => {
      const lode = await this.open();
      try {
        this.exitCode = (await work(lode, ...args)) ?? EXIT.ok;
      } finally {
        await lode.close();
      }
    };
  }
}
