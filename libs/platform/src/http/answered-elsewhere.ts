import { STATUS_CODES, type ServerResponse } from 'node:http';

const ANSWERED_ELSEWHERE = Symbol('answeredElsewhere');

/**
 * The head of an answer whose body another process sends on the connection (an archive download
 * handed to the git helper): the status line, every header set on `res` so far (the request id,
 * the security headers, the route's own), `Date`, and `Connection: close`, since the connection
 * ends with that body. Header values were checked by `setHeader` (no CR or LF; Node writes them as
 * latin1, as this head is written).
 */
export function responseHead(res: ServerResponse, status: number): string {
  const lines = [`HTTP/1.1 ${status} ${STATUS_CODES[status] ?? ''}`, `Date: ${new Date().toUTCString()}`];
  // getRawHeaderNames keeps the names as set (Node 15.13+; not in the typings used here).
  for (const name of (res as ServerResponse & { getRawHeaderNames(): string[] }).getRawHeaderNames()) {
    const lower = name.toLowerCase();
    if (lower === 'connection' || lower === 'keep-alive' || lower === 'date' || lower === 'transfer-encoding') continue;
    const value = res.getHeader(name);
    for (const v of Array.isArray(value) ? value : [value]) if (v !== undefined) lines.push(`${name}: ${String(v)}`);
  }
  lines.push('Connection: close');
  return `${lines.join('\r\n')}\r\n\r\n`;
}

/**
 * For the request log: another process answers `res`, with `status` (responseHead's). Called as
 * the connection is handed over, which closes this process's side of it and so ends the request
 * for the log.
 */
export function markAnsweredElsewhere(res: ServerResponse, status: number): void {
  res.statusCode = status;
  (res as ServerResponse & { [ANSWERED_ELSEWHERE]?: true })[ANSWERED_ELSEWHERE] = true;
}

/** `res` was answered by another process (markAnsweredElsewhere). */
export function answeredElsewhere(res: ServerResponse): boolean {
  return (res as ServerResponse & { [ANSWERED_ELSEWHERE]?: true })[ANSWERED_ELSEWHERE] === true;
}
