import { pino, stdTimeFunctions, type Logger as Pino } from 'pino';
import { FILTERED, isSecretName, redactSecrets } from './redact';

export type LogFormat = 'json' | 'pretty';

/** LODE_LOG_LEVEL speaks Nest's level names; pino's equivalents. */
const PINO_LEVEL: Record<string, string> = {
  fatal: 'fatal',
  error: 'error',
  warn: 'warn',
  log: 'info',
  debug: 'debug',
  verbose: 'trace',
};

/**
 * A copy of a log call's argument with `redactSecrets` applied to every string in it (errors too),
 * and the values of fields named like credentials (`token`, `password`, `authorization`) replaced.
 */
export function redactValue(value: unknown, depth = 0): unknown {
  if (typeof value === 'string') return redactSecrets(value);
  if (value === null || typeof value !== 'object' || depth > 6) return value;
  if (value instanceof Error)
    return {
      type: value.name,
      message: redactSecrets(value.message),
      stack: value.stack && redactSecrets(value.stack),
    };
  if (Array.isArray(value)) return value.map((v) => redactValue(v, depth + 1));
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value))
    out[k] = isSecretName(k) && v != null ? FILTERED : redactValue(v, depth + 1);
  return out;
}

/**
 * One line for people: `12:00:01.234 INFO  [Context] message key=value ...`, from pino's JSON line
 * (already redacted when it was made).
 */
export function prettyLine(json: string): string {
  let entry: Record<string, unknown>;
  try {
    entry = JSON.parse(json) as Record<string, unknown>;
  } catch {
    return json;
  }
  const { time, level, msg, context, pid: _pid, err, ...rest } = entry;
  const clock = typeof time === 'string' ? time.slice(11, 23) : '';
  const label = String(level ?? '')
    .toUpperCase()
    .padEnd(5);
  const where = typeof context === 'string' ? ` [${context}]` : '';
  const fields = Object.entries(rest)
    .map(([k, v]) => `${k}=${typeof v === 'string' ? v : JSON.stringify(v)}`)
    .join(' ');
  const stack =
    err && typeof err === 'object' && 'stack' in err ? `\n${String((err as { stack: unknown }).stack)}` : '';
  return `${clock} ${label}${where} ${String(msg ?? '')}${fields ? ` ${fields}` : ''}${stack}\n`;
}

function build(level: string, format: LogFormat, to: 'stdout' | 'stderr'): Pino {
  return pino(
    {
      level: PINO_LEVEL[level] ?? 'info',
      timestamp: stdTimeFunctions.isoTime,
      base: { pid: process.pid },
      formatters: { level: (label) => ({ level: label }) },
      hooks: {
        // Every line passes through the one redaction (libs/platform/src/logging/redact.ts), whatever
        // its caller put in the message or the fields.
        logMethod(args, method) {
          const redacted = args.map((a) => redactValue(a)) as Parameters<typeof method>;
          method.apply(this, redacted);
        },
      },
    },
    // process.stdout.write at each call (not a file descriptor taken once): synchronous on Linux for
    // files, pipes and terminals, so nothing is lost at process.exit, and tests can capture it.
    { write: (line: string) => void process[to].write(format === 'pretty' ? prettyLine(line) : line) },
  );
}

let root = build('log', 'json', 'stdout');
let rootLevel = 'log';

/** The process's root logger (pino); LODE_LOG_LEVEL and LODE_LOG_FORMAT choose its level and its form. */
export const Logs = {
  /** The server logs to stdout; the command line to stderr, so its own output stays apart from its log. */
  configure(level: string, format: LogFormat, to: 'stdout' | 'stderr' = 'stdout'): void {
    root = build(level, format, to);
    rootLevel = level;
  },
  get root(): Pino {
    return root;
  },
  get level(): string {
    return rootLevel;
  },
};
