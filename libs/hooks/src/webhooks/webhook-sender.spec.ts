import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { delivered, sendWebhook, type WebhookRequest } from './webhook-sender';

describe('sendWebhook', () => {
  let server: Server;
  let base: string;
  const seen: { url: string; headers: IncomingHttpHeaders; body: string }[] = [];

  beforeAll(async () => {
    server = createServer((req, res) => {
      let body = '';
      req.on('data', (c) => (body += c));
      req.on('end', () => {
        seen.push({ url: req.url ?? '', headers: req.headers, body });
        res.writeHead(req.url === '/teapot' ? 418 : 200).end('x'.repeat(100_000));
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise((r) => server.close(r)));

  const request = (over: Partial<WebhookRequest>): WebhookRequest => ({
    url: `${base}/hook`, token: null, enableSslVerification: true, headers: { 'Content-Type': 'application/json' }, body: '{"a":1}',
    timeoutMs: 2000, allowLocal: true, ...over,
  });

  it('refuses a loopback receiver when local webhooks are not allowed, without connecting', async () => {
    const before = seen.length;
    const outcome = await sendWebhook(request({ allowLocal: false }));
    expect(outcome.status).toBeNull();
    expect(outcome.error).toMatch(/^refused: 127\.0\.0\.1 is not allowed/);
    expect(delivered(outcome)).toBe(false);
    expect(seen).toHaveLength(before);
  });

  it('posts the body with the token header only when set, user info as basic auth, and reads a large answer', async () => {
    const outcome = await sendWebhook(request({ token: 'tok', url: `${base.replace('://', '://al%40ice:p%3Ass@')}/hook?x=1` }));
    expect(outcome).toMatchObject({ status: 200, error: null });
    expect(delivered(outcome)).toBe(true);
    const last = seen[seen.length - 1];
    expect(last).toMatchObject({ url: '/hook?x=1', body: '{"a":1}' });
    expect(last.headers['x-gitlab-token']).toBe('tok');
    expect(last.headers.authorization).toBe(`Basic ${Buffer.from('al@ice:p:ss').toString('base64')}`);
    await sendWebhook(request({}));
    expect(seen[seen.length - 1].headers).not.toHaveProperty('x-gitlab-token');
  });

  it('counts only 2xx as delivered', async () => {
    const outcome = await sendWebhook(request({ url: `${base}/teapot` }));
    expect(outcome.status).toBe(418);
    expect(delivered(outcome)).toBe(false);
  });

  it('reports a refused connection as an error', async () => {
    const closed = createServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', () => r()));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((r) => closed.close(r));
    const outcome = await sendWebhook(request({ url: `http://127.0.0.1:${port}/` }));
    expect(outcome.status).toBeNull();
    expect(outcome.error).toMatch(/ECONNREFUSED/);
  });
});
