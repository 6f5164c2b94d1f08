import { Logs } from '@app/platform';

/**
 * The lines the log writes while `act` runs, at `info` and as JSON whatever the test's own level,
 * kept out of the test's output. A request's line is written once its answer has finished, which
 * its client may see first: after `act`, this waits (up to a second) until `complete` holds.
 */
export async function loggedLines(
  act: () => Promise<unknown>,
  complete: (lines: readonly string[]) => boolean,
): Promise<string[]> {
  const level = Logs.level;
  const written: string[] = [];
  const stdout = process.stdout.write;
  Logs.configure('log', 'json');
  process.stdout.write = ((chunk: unknown) => {
    written.push(String(chunk));
    return true;
  }) as typeof process.stdout.write;
  try {
    await act();
    for (let i = 0; i < 100 && !complete(written); i += 1) await new Promise((r) => setTimeout(r, 10));
  } finally {
    process.stdout.write = stdout;
    Logs.configure(level, 'json');
  }
  return written;
}
