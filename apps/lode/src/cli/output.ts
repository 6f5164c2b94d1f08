import { SingleBar } from 'cli-progress';

/** Results go to stdout, one `write` per line; errors and progress go to stderr. */
export function print(line = ''): void {
  process.stdout.write(`${line}\n`);
}

/** A note on stderr that is no result (what a command is doing, a summary of progress). */
export function note(line: string): void {
  process.stderr.write(`${line}\n`);
}

/** Rows as aligned columns under a header; the last column is not padded. */
export function table(header: string[], rows: string[][]): string[] {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i])))
      .join('  ')
      .trimEnd();
  return [line(header), ...rows.map(line)];
}

/** An age in seconds, for people: `42 s`, `7 min`, `3 h`, `2 d`. */
export function age(seconds: number | null | undefined): string {
  if (seconds === null || seconds === undefined) return '-';
  if (seconds < 120) return `${Math.round(seconds)} s`;
  if (seconds < 7200) return `${Math.round(seconds / 60)} min`;
  if (seconds < 172_800) return `${Math.round(seconds / 3600)} h`;
  return `${Math.round(seconds / 86_400)} d`;
}

/** Seconds since `date`. */
export function secondsSince(date: Date | number | null | undefined): number | null {
  if (date === null || date === undefined) return null;
  return (Date.now() - new Date(date).getTime()) / 1000;
}

export interface Progress {
  update(done: number, total?: number): void;
  stop(): void;
}

/**
 * A progress bar on stderr, drawn only when stderr is a terminal: a script reading the output, or a
 * log file, never sees bar frames.
 */
export function progress(label: string, total: number): Progress {
  if (!process.stderr.isTTY) return { update: () => undefined, stop: () => undefined };
  const bar = new SingleBar({
    stream: process.stderr,
    format: `${label} [{bar}] {value}/{total}`,
    barsize: 30,
    hideCursor: true,
    clearOnComplete: true,
  });
  bar.start(total, 0);
  return {
    update: (done, newTotal) => {
      if (newTotal !== undefined) bar.setTotal(newTotal);
      bar.update(done);
    },
    stop: () => bar.stop(),
  };
}
