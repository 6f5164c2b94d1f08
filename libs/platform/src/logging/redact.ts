import type { LoggerService, LogLevel } from '@nestjs/common';
import { RequestContexts } from '../context';
import { Logs } from './log-output';

/** What a secret is replaced with. */
export const FILTERED = '[FILTERED]';

/** Parameter and field names whose values are secrets: `private_token`, `X-Gitlab-Token`, `password`, `user[password]`... */
const SECRET_NAME = String.raw`[\w\-\[\]%]*?(?:token|password|passwd|secret|api[-_]?key)(?:[_-]\w+|\]|%5D)*`;
/** Headers whose values are credentials, whatever their name says. */
const SECRET_HEADER = String.raw`(?:proxy-)?authorization|cookie|set-cookie`;

const RULES: [RegExp, string][] = [
  // URL user info (`https://user:password@host`, `http://oauth2:<token>@host`): all of it.
  [/\b([a-z][a-z0-9+.-]*:\/\/)[^\s/?#@"'<>]+@/gi, `$1${FILTERED}@`],
  // Query strings and form bodies: `?private_token=...`, `&password=...`.
  [new RegExp(String.raw`((?:^|[?&;\s"'])${SECRET_NAME}=)[^&\s#"',;:]*`, 'gi'), `$1${FILTERED}`],
  // Headers and fields as logged: `PRIVATE-TOKEN: x`, `"token":"x"`, `authorization: 'Basic x'`.
  [
    new RegExp(
      String.raw`((?<![\w./\\-])(?:${SECRET_HEADER}|${SECRET_NAME})["']?\s*[:=]\s*["']?)((?:basic|bearer|token)\s+)?[^"'\s,;:&}]+`,
      'gi',
    ),
    `$1$2${FILTERED}`,
  ],
  // Credentials with no name before them: `Basic dXNlcjpwYXNz`, `Bearer abc`.
  [/\b(basic|bearer)\s+[A-Za-z0-9+/=._~-]{8,}/gi, `$1 ${FILTERED}`],
];

/**
 * The one place that strips credentials from text bound for a log: URL user info, `private_token`
 * and other secret-named parameters, `PRIVATE-TOKEN`, `Authorization` (Basic and Bearer),
 * `X-Gitlab-Token`, passwords. Every log line that may print a URL, headers or an error built from
 * them goes through it (and `RedactingLogger` applies it to every line as a last resort).
 */
export function redactSecrets(text: string): string {
  let out = text;
  for (const [pattern, replacement] of RULES) out = out.replace(pattern, replacement);
  return out;
}

const SECRET_HEADER_NAME = new RegExp(String.raw`^(?:${SECRET_HEADER}|${SECRET_NAME})$`, 'i');

/** Whether a header, parameter or field of that name holds a credential (`PRIVATE-TOKEN`, `password`, `authorization`...). */
export function isSecretName(name: string): boolean {
  return SECRET_HEADER_NAME.test(name);
}

/** A copy of request or response headers fit for a log: credential headers' values replaced. */
export function redactHeaders(headers: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(headers))
    out[name] = SECRET_HEADER_NAME.test(name) ? FILTERED : typeof value === 'string' ? redactSecrets(value) : value;
  return out;
}

/**
 * Nest's logger (every `new Logger(context).log(...)` and Nest's own lines) as pino lines: the
 * message, `context`, and for errors the stack, each through `redactSecrets`, at the levels given
 * (LODE_LOG_LEVEL's and every more severe one). Lines of a request carry its `request_id`.
 */
export class RedactingLogger implements LoggerService {
  private levels: Set<LogLevel>;

  constructor(logLevels: LogLevel[]) {
    this.levels = new Set(logLevels);
  }

  setLogLevels(levels: LogLevel[]): void {
    this.levels = new Set(levels);
  }

  log(message: unknown, ...params: unknown[]): void {
    this.write('log', 'info', message, params);
  }
  fatal(message: unknown, ...params: unknown[]): void {
    this.write('fatal', 'fatal', message, params, true);
  }
  error(message: unknown, ...params: unknown[]): void {
    this.write('error', 'error', message, params, true);
  }
  warn(message: unknown, ...params: unknown[]): void {
    this.write('warn', 'warn', message, params);
  }
  debug(message: unknown, ...params: unknown[]): void {
    this.write('debug', 'debug', message, params);
  }
  verbose(message: unknown, ...params: unknown[]): void {
    this.write('verbose', 'trace', message, params);
  }

  private write(
    level: LogLevel,
    pinoLevel: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace',
    message: unknown,
    params: unknown[],
    withStack = false,
  ): void {
    if (!this.levels.has(level)) return;
    const rest = [...params];
    // Nest's convention (ConsoleLogger): the last string argument is the context; for errors, a string before it is the stack.
    const context = rest.length && typeof rest[rest.length - 1] === 'string' ? (rest.pop() as string) : undefined;
    const stack = withStack && typeof rest[0] === 'string' ? (rest.shift() as string) : undefined;
    const fields: Record<string, unknown> = {};
    if (context) fields.context = context;
    const requestId = RequestContexts.current()?.requestId;
    if (requestId) fields.request_id = requestId;
    if (stack) fields.err = { stack };
    if (message instanceof Error) fields.err = message;
    if (rest.length) fields.details = rest;
    const text =
      message instanceof Error ? message.message : typeof message === 'string' ? message : JSON.stringify(message);
    // The logger level itself lets everything through: the levels above decide, as Nest's did.
    const root = Logs.root;
    if (!root.isLevelEnabled(pinoLevel)) {
      const forced = root.child({}, { level: 'trace' });
      forced[pinoLevel](fields, text);
    } else root[pinoLevel](fields, text);
  }
}
