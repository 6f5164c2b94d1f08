import type { LoggerService, LogLevel } from '@nestjs/common';
import { RequestContexts } from '../context';
import { Logs } from './log-output';

/**
 * Nest's logger (every `new Logger(context).log(...)` and Nest's own lines) as pino lines: the
 * message, `context`, and for errors the stack, each through `redactSecrets`, at the levels given
 * (LODE_LOG_LEVEL's and every more severe one). Lines of a request carry its `request_id`.
 */
/**
 * Nest's own start-up chatter, one line per module, controller and route (about three lines in four of
 * a start): written at debug, so `info` shows what an operator reads (what listens where, what mode).
 */
const FRAMEWORK_CHATTER = new Set(['InstanceLoader', 'RoutesResolver', 'RouterExplorer', 'NestFactory']);

export class RedactingLogger implements LoggerService {
  private levels: Set<LogLevel>;

  constructor(logLevels: LogLevel[]) {
    this.levels = new Set(logLevels);
  }

  setLogLevels(levels: LogLevel[]): void {
    this.levels = new Set(levels);
  }

  log(message: unknown, ...params: unknown[]): void {
    const context = params[params.length - 1];
    if (typeof context === 'string' && FRAMEWORK_CHATTER.has(context)) this.write('debug', 'debug', message, params);
    else this.write('log', 'info', message, params);
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
