import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import { createServer as createTlsServer } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
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
    url: `${base}/hook`,
    token: null,
    enableSslVerification: true,
    headers: { 'Content-Type': 'application/json' },
    body: '{"a":1}',
    timeoutMs: 2000,
    allowLocal: true,
    ...over,
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
    const outcome = await sendWebhook(
      request({ token: 'tok', url: `${base.replace('://', '://al%40ice:p%3Ass@')}/hook?x=1` }),
    );
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

  it("verifies the receiver's certificate unless the hook turns enable_ssl_verification off", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'lode-tls-'));
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'rsa:2048',
        '-nodes',
        '-keyout',
        join(dir, 'k.pem'),
        '-out',
        join(dir, 'c.pem'),
        '-days',
        '1',
        '-subj',
        '/CN=127.0.0.1',
      ],
      {
        stdio: 'ignore',
      },
    );
    const tls = createTlsServer(
      { key: readFileSync(join(dir, 'k.pem')), cert: readFileSync(join(dir, 'c.pem')) },
      (req, res) => {
        req.resume();
        req.on('end', () => res.writeHead(200).end('ok'));
      },
    );
    await new Promise<void>((r) => tls.listen(0, '127.0.0.1', () => r()));
    try {
      const url = `https://127.0.0.1:${(tls.address() as AddressInfo).port}/hook`;
      const verified = await sendWebhook(request({ url }));
      expect(verified.status).toBeNull();
      expect(verified.error).toMatch(/self[- ]signed/i);
      const unverified = await sendWebhook(request({ url, enableSslVerification: false }));
      expect(unverified).toMatchObject({ status: 200, error: null });
    } finally {
      await new Promise((r) => tls.close(r));
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
