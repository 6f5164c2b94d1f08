import { createServer, request, type IncomingHttpHeaders, type RequestListener, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Histogram, Registry } from 'prom-client';
import { loggedLines } from '../../../../test/support/logged-lines';
import { frontDoor, type HotAnswer, type HotRead } from './front-door';

/** What a request to the server got: status, headers, body, and whether the application behind answered it. */
interface Got {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
}

const KEPT: HotAnswer = {
  route: '/kept/:n',
  headers: ['Content-Type', 'text/plain; charset=utf-8', 'Content-Disposition', 'inline'],
  body: Buffer.from('kept answer'),
};

describe('frontDoor', () => {
  let server: Server;
  let port: number;
  let behind: string[];
  let looked: string[];
  let registry: Registry;
  let histogram: Histogram<'method' | 'route' | 'status'>;
  const database: { unreachable: string | undefined } = { unreachable: undefined };

  /** `/kept/1` is kept, `/kept/2` is of the kind but not kept, `/kept/3` fails its lookup, `/kept/4` and `/kept/5` take their time; the rest is not of its kind. */
  const read: HotRead = (url) => {
    const m = /^\/kept\/(\d)$/.exec(url);
    if (!m) return undefined;
    looked.push(url);
    if (m[1] === '3') return Promise.reject(new Error('the fence failed'));
    // Slow lookups (a fence that waits): `/kept/4` kept, `/kept/5` not.
    if (m[1] === '4' || m[1] === '5')
      return new Promise((resolve) => setTimeout(() => resolve(m[1] === '4' ? KEPT : undefined), 150));
    return Promise.resolve(m[1] === '1' ? KEPT : undefined);
  };
  const app: RequestListener = (req, res) => {
    behind.push(`${req.method} ${req.url}`);
    res.writeHead(299, { 'Content-Type': 'text/plain' }).end('from the application');
  };

  beforeAll(async () => {
    registry = new Registry();
    histogram = new Histogram({
      name: 'test_http_request_duration_seconds',
      help: 'test',
      labelNames: ['method', 'route', 'status'] as const,
      registers: [registry],
    });
    server = createServer(
      frontDoor(app, {
        reads: [read],
        metrics: { httpDuration: histogram },
        database,
        clientAddress: (req) => `via ${req.socket.remoteAddress}`,
      }),
    );
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(() => new Promise((resolve) => server.close(resolve)));
  beforeEach(() => {
    behind = [];
    looked = [];
    database.unreachable = undefined;
    histogram.reset();
  });

  const send = (path: string, options: { method?: string; headers?: Record<string, string>; body?: string } = {}) =>
    new Promise<Got>((resolve, reject) => {
      const req = request({ port, path, method: options.method ?? 'GET', headers: options.headers }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString() }),
        );
      });
      req.on('error', reject);
      req.end(options.body);
    });

  const observations = async () =>
    (await registry.getSingleMetric('test_http_request_duration_seconds')!.get()).values
      .filter((v) => (v as { metricName?: string }).metricName?.endsWith('_count') && v.value > 0)
      .map((v) => ({ ...v.labels, count: v.value }));

  it('answers a kept hot read itself, with the headers the Express chain would have set, and measures it under its route', async () => {
    const got = await send('/kept/1');
    expect(got.status).toBe(200);
    expect(got.body).toBe('kept answer');
    expect(got.headers['content-type']).toBe('text/plain; charset=utf-8');
    expect(got.headers['content-disposition']).toBe('inline');
    expect(got.headers['content-length']).toBe(String('kept answer'.length));
    expect(got.headers['x-content-type-options']).toBe('nosniff');
    expect(got.headers['x-frame-options']).toBe('DENY');
    expect(got.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    expect(got.headers.date).toBeDefined();
    expect(behind).toEqual([]);
    expect(await observations()).toEqual([{ method: 'GET', route: '/kept/:n', status: '200', count: 1 }]);
  });

  it('echoes an acceptable X-Request-Id, and replaces one it could not log', async () => {
    expect((await send('/kept/1', { headers: { 'X-Request-Id': 'abc-123.x:y' } })).headers['x-request-id']).toBe(
      'abc-123.x:y',
    );
    const replaced = (await send('/kept/1', { headers: { 'X-Request-Id': 'a b<script>' } })).headers['x-request-id'];
    expect(replaced).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('hands the application a miss, a failed lookup and every request not of a hot kind, untouched', async () => {
    for (const path of ['/kept/2', '/kept/3', '/other', '/kept/1?x=1']) {
      const got = await send(path);
      expect([path, got.status, got.body]).toEqual([path, 299, 'from the application']);
    }
    expect(behind).toEqual(['GET /kept/2', 'GET /kept/3', 'GET /other', 'GET /kept/1?x=1']);
    expect(looked).toEqual(['/kept/2', '/kept/3']);
    // The application's own answers are its own to measure.
    expect(await observations()).toEqual([]);
  });

  it('never answers a request with credentials, a body or another method, nor while the database is away', async () => {
    const headers: Record<string, string>[] = [
      { 'PRIVATE-TOKEN': 'x' },
      { Authorization: 'Bearer x' },
      { 'JOB-TOKEN': 'x' },
      { Sudo: 'root' },
    ];
    for (const h of headers) expect((await send('/kept/1', { headers: h })).status).toBe(299);
    const body = 'private_token=x';
    expect((await send('/kept/1', { body, headers: { 'Content-Length': String(body.length) } })).status).toBe(299);
    expect((await send('/kept/1', { body, headers: { 'Transfer-Encoding': 'chunked' } })).status).toBe(299);
    expect((await send('/kept/1', { method: 'HEAD' })).status).toBe(299);
    expect((await send('/kept/1', { method: 'POST' })).status).toBe(299);
    database.unreachable = 'connection refused';
    expect((await send('/kept/1')).status).toBe(299);
    expect(looked).toEqual([]);
    expect(behind).toHaveLength(headers.length + 5);
  });

  it('measures a client that left while the lookup waited as 499, as the chain does, and hands nothing on', async () => {
    const leave = (path: string) =>
      new Promise<void>((resolve) => {
        const req = request({ port, path });
        req.on('error', () => resolve());
        req.end();
        setTimeout(() => req.destroy(), 30);
      });
    await leave('/kept/4');
    await leave('/kept/5');
    for (let i = 0; i < 50 && (await observations()).length < 2; i += 1) await new Promise((r) => setTimeout(r, 20));
    expect(await observations()).toEqual([
      { method: 'GET', route: '/kept/:n', status: '499', count: 1 },
      { method: 'GET', route: 'unmatched', status: '499', count: 1 },
    ]);
    expect(behind).toEqual([]);
  });

  it('logs an answer as the request log does, with the client address it was given', async () => {
    const lines = await loggedLines(
      async () => {
        const got = await send('/kept/1', { headers: { 'X-Request-Id': 'logged-1' } });
        expect(got.status).toBe(200);
      },
      (written) => written.some((l) => l.includes('logged-1')),
    );
    const line = JSON.parse(lines.find((l) => l.includes('logged-1'))!);
    expect(line).toMatchObject({
      level: 'info',
      request_id: 'logged-1',
      method: 'GET',
      route: '/kept/:n',
      path: '/kept/1',
      status: 200,
      user_id: null,
      remote_ip: 'via 127.0.0.1',
      msg: 'GET /kept/:n 200',
    });
    expect(typeof line.duration).toBe('number');
  });
});
