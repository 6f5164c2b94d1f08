import type { Readable } from 'node:stream';
import { createGunzip, type Gunzip } from 'node:zlib';

/** One ref update a client asked receive-pack for: `<old> <new> <ref>`. */
export interface PushCommand {
  before: string;
  after: string;
  ref: string;
}

const COMMAND = /^([0-9a-f]{40}|[0-9a-f]{64}) ([0-9a-f]{40}|[0-9a-f]{64}) (refs\/\S+)$/;
/** The command list is a few pkt-lines; a client sending more than this before the flush is not git. */
const MAX_HEAD = 4 * 1024 * 1024;

/**
 * Reads the command list at the start of a `git-receive-pack` request body (pkt-lines up to the
 * first flush-pkt, before the pack), without consuming the stream: it listens beside whatever pipes
 * the body to `git http-backend`. Inflates a gzip body as git sends it for large requests. Resolves
 * with the commands (empty when the body ended early or was not understood); never rejects.
 */
export function readPushCommands(body: Readable, gzip: boolean): Promise<PushCommand[]> {
  return new Promise((resolve) => {
    let buffered: Buffer = Buffer.alloc(0);
    let done = false;
    let inflater: Gunzip | undefined;
    const finish = (commands: PushCommand[]) => {
      if (done) return;
      done = true;
      body.off('data', onRaw);
      body.off('end', onEnd);
      body.off('error', onEnd);
      if (inflater) {
        inflater.removeAllListeners('data');
        inflater.on('error', () => undefined);
        inflater.destroy();
      }
      resolve(commands);
    };
    const onPlain = (chunk: Buffer) => {
      buffered = buffered.length ? Buffer.concat([buffered, chunk]) : chunk;
      const parsed = parseCommands(buffered);
      if (parsed) finish(parsed);
      else if (buffered.length > MAX_HEAD) finish([]);
    };
    const onRaw = (chunk: Buffer) => (inflater ? inflater.write(chunk) : onPlain(chunk));
    const onEnd = () => {
      if (inflater) inflater.end();
      else finish(parseCommands(buffered) ?? []);
    };
    if (gzip) {
      inflater = createGunzip();
      inflater.on('data', onPlain);
      inflater.on('end', () => finish(parseCommands(buffered) ?? []));
      inflater.on('error', () => finish([]));
    }
    body.on('data', onRaw);
    body.on('end', onEnd);
    body.on('error', onEnd);
  });
}

/**
 * The commands of a complete command list, or undefined while the flush-pkt has not arrived.
 * The first line carries the capabilities after a NUL; a signed push's certificate block
 * (`push-cert`) and `shallow` lines are skipped.
 */
export function parseCommands(buf: Buffer): PushCommand[] | undefined {
  const commands: PushCommand[] = [];
  let at = 0;
  while (at + 4 <= buf.length) {
    const len = parseInt(buf.toString('latin1', at, at + 4), 16);
    if (Number.isNaN(len)) return [];
    if (len === 0) return commands;
    if (len < 4) return [];
    if (at + len > buf.length) return undefined;
    let line = buf.toString('utf8', at + 4, at + len);
    const nul = line.indexOf('\0');
    if (nul >= 0) line = line.slice(0, nul);
    const m = COMMAND.exec(line.replace(/\n$/, ''));
    if (m) commands.push({ before: m[1], after: m[2], ref: m[3] });
    at += len;
  }
  return undefined;
}
