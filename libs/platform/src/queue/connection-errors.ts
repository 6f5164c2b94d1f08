import type { Logger } from '@nestjs/common';

/**
 * BullMQ prints every connection error of a queue or worker without an `error` listener to the
 * console. While Redis is away that is one line per retry; this logs each distinct error once,
 * until the connection is back.
 */
export function logConnectionErrors(
  emitter: { on(event: 'error', fn: (err: Error) => void): unknown },
  logger: Logger,
  what: string,
): void {
  let last = '';
  emitter.on('error', (err: Error) => {
    const message = err?.message ?? String(err);
    if (message === last) return;
    last = message;
    logger.warn(`${what}: ${message}`);
  });
}
