import { PassThrough } from 'node:stream';
import { gzipSync } from 'node:zlib';
import { parseCommands, readPushCommands } from './push-commands';

const A = 'a'.repeat(40);
const B = 'b'.repeat(40);
const Z = '0'.repeat(40);
const pkt = (s: string) => `${(Buffer.byteLength(s) + 4).toString(16).padStart(4, '0')}${s}`;
const list = `${pkt(`${Z} ${A} refs/heads/main\0report-status side-band-64k\n`)}${pkt(`${A} ${B} refs/tags/v1\n`)}0000`;

describe('push command list', () => {
  it('parses the commands up to the flush-pkt, capabilities stripped', () => {
    expect(parseCommands(Buffer.from(`${list}PACK...`))).toEqual([
      { before: Z, after: A, ref: 'refs/heads/main' },
      { before: A, after: B, ref: 'refs/tags/v1' },
    ]);
  });

  it('waits for more while a pkt-line or the flush is incomplete, and gives up on garbage', () => {
    expect(parseCommands(Buffer.from(list.slice(0, 30)))).toBeUndefined();
    expect(parseCommands(Buffer.from(list.slice(0, list.length - 4)))).toBeUndefined();
    expect(parseCommands(Buffer.from('zzzz'))).toEqual([]);
  });

  it('reads the list beside another consumer, plain and gzipped, split across chunks', async () => {
    for (const gzip of [false, true]) {
      const body = new PassThrough();
      const seen: Buffer[] = [];
      body.on('data', (c: Buffer) => seen.push(c));
      const ended = new Promise((r) => body.on('end', r));
      const commands = readPushCommands(body, gzip);
      const bytes = gzip ? gzipSync(Buffer.from(`${list}PACK${'x'.repeat(5000)}`)) : Buffer.from(`${list}PACK`);
      for (let i = 0; i < bytes.length; i += 7) body.write(bytes.subarray(i, i + 7));
      body.end();
      expect(await commands).toHaveLength(2);
      // The other consumer still gets every byte.
      await ended;
      expect(Buffer.concat(seen).equals(bytes)).toBe(true);
    }
  });

  it('resolves empty when the body ends early', async () => {
    const body = new PassThrough();
    const commands = readPushCommands(body, false);
    body.end(Buffer.from(list.slice(0, 20)));
    body.resume();
    expect(await commands).toEqual([]);
  });
});
