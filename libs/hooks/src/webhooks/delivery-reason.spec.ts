import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { deliveryReason, sendWebhook, type WebhookRequest } from './webhook-sender';

/** The delivery log (read by maintainers) says why an attempt failed without naming addresses, ports or DNS answers. */
describe('deliveryReason', () => {
  let server: Server;
  let port: number;
  beforeAll(async () => {
    server = createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        if (req.url === '/silent') return; // never answers
        res.writeHead(req.url === '/fail' ? 503 : 200).end('x');
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(() => {
    server.closeAllConnections();
    return new Promise((r) => server.close(r));
  });

  const send = (url: string, over: Partial<WebhookRequest> = {}) =>
    sendWebhook({
      url,
      token: null,
      enableSslVerification: true,
      headers: {},
      body: '{}',
      timeoutMs: 2000,
      allowLocal: true,
      ...over,
    });

  async function closedPort(): Promise<number> {
    const s = createServer();
    await new Promise<void>((r) => s.listen(0, '127.0.0.1', () => r()));
    const p = (s.address() as AddressInfo).port;
    await new Promise((r) => s.close(r));
    return p;
  }

  it('is null for a delivered attempt and HTTP <status> for any other answer', async () => {
    expect(deliveryReason(await send(`http://127.0.0.1:${port}/ok`))).toBeNull();
    expect(deliveryReason(await send(`http://127.0.0.1:${port}/fail`))).toBe('HTTP 503');
  });

  it('says connection failed for a refused connection, without the address or the socket error', async () => {
    const p = await closedPort();
    const outcome = await send(`http://127.0.0.1:${p}/`);
    expect(outcome.error).toMatch(/ECONNREFUSED/); // the detail stays for the server's log
    expect(deliveryReason(outcome)).toBe('connection failed');
  });

  it('says connection failed for a name that does not resolve, without the name or the resolver code', async () => {
    expect(deliveryReason(await send('http://no-such-host.invalid/hook'))).toBe('connection failed');
  });

  it('says connection failed for an address the SSRF rules refuse, without saying what it resolved to', async () => {
    const outcome = await send(`http://127.0.0.1:${port}/ok`, { allowLocal: false });
    expect(outcome.error).toMatch(/not allowed/);
    expect(deliveryReason(outcome)).toBe('connection failed');
  });

  it('says TLS error when the TLS handshake fails', async () => {
    const outcome = await send(`https://127.0.0.1:${port}/ok`); // a plain HTTP server
    expect(outcome.status).toBeNull();
    expect(deliveryReason(outcome)).toBe('TLS error');
  });

  it('gives the timeout Lode applied when the receiver never answers', async () => {
    const outcome = await send(`http://127.0.0.1:${port}/silent`, { timeoutMs: 300 });
    expect(deliveryReason(outcome)).toBe('timed out after 300 ms');
  });
});
