import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { createServer, get, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { drainHandedOff, sendFileFromHelper, stopSpawnHelper } from './spawn-helper';

/**
 * Downloads handed to the spawn helper (sendFileFromHelper) on a real HTTP server: each body whole
 * under concurrency, the server's connection count and graceful close unchanged, and a graceful
 * stop's window (drainHandedOff) ending what still runs.
 */
describe('files sent by the spawn helper on a handed-over connection', () => {
  const dir = mkdtempSync(join(tmpdir(), 'lode-send-file-'));
  const file = join(dir, 'blob.bin');
  const content = randomBytes(6 * 1024 * 1024);
  // More than every socket buffer between the two ends holds: its cat stays in a blocked write.
  const big = join(dir, 'big.bin');
  const BIG_SIZE = 256 * 1024 * 1024;
  let server: Server;
  let port: number;
  let handedOver = 0;

  beforeAll(async () => {
    writeFileSync(file, content);
    // Sparse: 256 MB of zeros to read, none to write.
    writeFileSync(big, '');
    truncateSync(big, BIG_SIZE);
    server = createServer((req, res) => {
      const [path, size] = req.url?.endsWith('big') ? [big, BIG_SIZE] : [file, content.length];
      const head = `HTTP/1.1 200 OK\r\nContent-Length: ${size}\r\nConnection: close\r\n\r\n`;
      // `/one`, `/one-big`: a download only while no other is out.
      const limit = req.url?.startsWith('/one') ? 1 : undefined;
      void sendFileFromHelper(req.socket, head, 'cat', ['--', path], () => handedOver++, limit).then((sent) => {
        if (!sent) res.end('not handed over');
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(() => {
    stopSpawnHelper();
    rmSync(dir, { recursive: true, force: true });
  });

  const download = (path = '/') =>
    new Promise<{ status: number; body: Buffer }>((resolve, reject) => {
      get({ host: '127.0.0.1', port, path, agent: false }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode!, body: Buffer.concat(chunks) }));
        res.on('error', reject);
      }).on('error', reject);
    });
  const connections = () => new Promise<number>((resolve) => server.getConnections((_, n) => resolve(n)));

  it('sends thirty at once whole, and the server counts none of them afterwards', async () => {
    const before = handedOver;
    const answers = await Promise.all(Array.from({ length: 30 }, () => download()));
    for (const a of answers) {
      expect(a.status).toBe(200);
      expect(a.body.equals(content)).toBe(true);
    }
    expect(handedOver - before).toBe(30);
    expect(await connections()).toBe(0);
  });

  it('hands over no more than its limit of downloads arriving together', async () => {
    // Five at once, each held by a client that does not read: one `cat`, four answered by the caller.
    // The thirty above are all ended first (their cats' ends reach this process after their bodies
    // reach the clients). Then a helper starting afresh makes the five wait for it together before
    // any is counted.
    await drainHandedOff(10_000);
    stopSpawnHelper();
    const answers = await Promise.all(
      Array.from(
        { length: 5 },
        () =>
          new Promise<IncomingMessage>((resolve, reject) =>
            get({ host: '127.0.0.1', port, path: '/one-big', agent: false }, resolve).on('error', reject),
          ),
      ),
    );
    const lengths = answers.map((a) => a.headers['content-length']).sort();
    expect(lengths).toEqual([String(BIG_SIZE), ...Array(4).fill(String('not handed over'.length))].sort());
    for (const a of answers) a.destroy();
    await drainHandedOff(5_000);
  });

  it("ends the downloads still running when a graceful stop's window is over", async () => {
    const res = await new Promise<IncomingMessage>((resolve, reject) =>
      get({ host: '127.0.0.1', port, path: '/big', agent: false }, resolve).on('error', reject),
    );
    // Unread, it holds its cat in a blocked write.
    res.pause();
    // Past its limit (one out here), a download is the caller's to answer.
    expect((await download('/one')).body.toString()).toBe('not handed over');
    const started = Date.now();
    await drainHandedOff(300);
    expect(Date.now() - started).toBeGreaterThanOrEqual(290);
    const received = await new Promise<number>((resolve) => {
      let bytes = 0;
      res.on('data', (c: Buffer) => (bytes += c.length));
      res.on('error', () => resolve(bytes));
      res.on('aborted', () => resolve(bytes));
      res.on('end', () => resolve(bytes));
      res.resume();
    });
    expect(received).toBeLessThan(BIG_SIZE);
    // With nothing in flight the window ends at once.
    const idle = Date.now();
    await drainHandedOff(5_000);
    expect(Date.now() - idle).toBeLessThan(1_000);
    // The server closes as it did before: nothing of the handed-over connections is left in it.
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });
});
