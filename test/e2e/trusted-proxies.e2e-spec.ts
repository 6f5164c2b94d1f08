import { LodeConfig, Metrics } from '@app/platform';
import express from 'express';
import type { AddressInfo } from 'node:net';
import { trustProxies } from '../../apps/lode/src/http-app';
import { getFrom } from '../support/from-address';
import { loggedLines } from '../support/logged-lines';
import { createUser, type SeededUser } from '../support/seed';
import { startTestApp, type TestApp } from '../support/test-app';

/**
 * LODE_TRUSTED_PROXIES: behind a reverse proxy the throttle and the rate limits count the client the
 * proxy names in X-Forwarded-For; a client talking to Lode directly cannot choose its address with it.
 */
describe('trusted proxies (X-Forwarded-For)', () => {
  const observed = (headers: Record<string, string | string[] | undefined>) => Number(headers['ratelimit-observed']);

  describe('with 127.0.0.1 as the trusted proxy', () => {
    let t: TestApp;
    let port: number;
    let user: SeededUser;
    const from = (address: string, forwardedFor: string | undefined, headers: Record<string, string> = {}) =>
      getFrom(
        port,
        address,
        headers['PRIVATE-TOKEN'] ? '/api/v4/user' : '/api/v4/projects',
        forwardedFor ? { ...headers, 'X-Forwarded-For': forwardedFor } : headers,
      );

    beforeAll(async () => {
      t = await startTestApp({ trustedProxies: ['127.0.0.1'], rateLimitUnauthenticated: 100, authFailures: 3 });
      await t.app.listen(0, '127.0.0.1');
      port = (t.app.getHttpServer().address() as AddressInfo).port;
      user = await createUser(t);
    });
    afterAll(() => t.close());

    it('counts each forwarded client on its own', async () => {
      expect(observed((await from('127.0.0.1', '203.0.113.1')).headers)).toBe(1);
      expect(observed((await from('127.0.0.1', '203.0.113.1')).headers)).toBe(2);
      // Another client behind the same proxy has a budget of its own.
      expect(observed((await from('127.0.0.1', '203.0.113.2')).headers)).toBe(1);
    });

    it('believes only the address the proxy added, not what the client wrote before it', async () => {
      // The client sent `X-Forwarded-For: 203.0.113.1`; the proxy appended the address it saw.
      expect(observed((await from('127.0.0.1', '203.0.113.1, 198.51.100.9')).headers)).toBe(1);
      expect(observed((await from('127.0.0.1', '203.0.113.1, 198.51.100.9')).headers)).toBe(2);
    });

    it('ignores the header from a peer that is not a trusted proxy', async () => {
      expect(observed((await from('127.0.0.50', '203.0.113.3')).headers)).toBe(1);
      // A new "client" each time, all from one peer: one budget, the peer's.
      expect(observed((await from('127.0.0.50', '203.0.113.4')).headers)).toBe(2);
      expect(observed((await from('127.0.0.50', undefined)).headers)).toBe(3);
    });

    it('throttles the forwarded client that guesses tokens, not the proxy', async () => {
      for (let i = 0; i <= 3; i++)
        expect((await from('127.0.0.1', '192.0.2.7', { 'PRIVATE-TOKEN': `guess-${i}` })).status).toBe(401);
      expect((await from('127.0.0.1', '192.0.2.7', { 'PRIVATE-TOKEN': user.token })).status).toBe(403);
      // Every other client of the proxy is still served.
      expect((await from('127.0.0.1', '192.0.2.8', { 'PRIVATE-TOKEN': user.token })).status).toBe(200);
    });
  });

  describe('without trusted proxies (the default)', () => {
    let t: TestApp;
    let port: number;

    beforeAll(async () => {
      t = await startTestApp({ rateLimitUnauthenticated: 100 });
      await t.app.listen(0, '127.0.0.1');
      port = (t.app.getHttpServer().address() as AddressInfo).port;
    });
    afterAll(() => t.close());

    it('counts the TCP peer whatever X-Forwarded-For says', async () => {
      const get = (forwardedFor: string) =>
        getFrom(port, '127.0.0.1', '/api/v4/projects', { 'X-Forwarded-For': forwardedFor });
      expect(observed((await get('203.0.113.10')).headers)).toBe(1);
      expect(observed((await get('203.0.113.11')).headers)).toBe(2);
      expect(observed((await get('203.0.113.12')).headers)).toBe(3);
    });
  });

  describe('with 127.0.0.1 as the trusted proxy and no rate limit (reads kept in memory answered ahead of Express)', () => {
    let t: TestApp;
    let port: number;

    beforeAll(async () => {
      t = await startTestApp({ trustedProxies: ['127.0.0.1'] });
      await t.app.listen(0, '127.0.0.1');
      port = (t.app.getHttpServer().address() as AddressInfo).port;
    });
    afterAll(() => t.close());

    it("logs the forwarded client of an answer from memory as Express's req.ip names it", async () => {
      const made = await t.http().post('/api/v4/projects').set('PRIVATE-TOKEN', t.rootToken).send({
        name: 'Forwarded reads',
        visibility: 'public',
      });
      expect(made.status).toBe(201);
      const path = `/api/v4/projects/${made.body.id}`;
      const hits = async () =>
        (await t.app.get(Metrics).registry.getSingleMetric('lode_project_cache_hits_total')?.get())?.values[0]?.value ??
        0;
      expect((await getFrom(port, '127.0.0.1', path)).status).toBe(200); // kept
      const lines = await requestLines(async () => {
        const before = await hits();
        const answers = [
          await getFrom(port, '127.0.0.1', path, {
            'X-Forwarded-For': '203.0.113.1, 198.51.100.20',
            'X-Request-Id': 'fwd-1',
          }),
          await getFrom(port, '127.0.0.50', path, { 'X-Forwarded-For': '203.0.113.21', 'X-Request-Id': 'fwd-2' }),
        ];
        expect(answers.map((a) => a.status)).toEqual([200, 200]);
        expect(await hits()).toBe(before + 2);
      }, ['fwd-1', 'fwd-2']);
      // The address the trusted proxy added; a peer that is no proxy is itself, whatever it wrote.
      expect(lines.map((l) => [l.request_id, l.route, l.status, l.remote_ip])).toEqual([
        ['fwd-1', '/api/v4/projects/:id', 200, '198.51.100.20'],
        ['fwd-2', '/api/v4/projects/:id', 200, '127.0.0.50'],
      ]);
    });
  });

  it('reads LODE_TRUSTED_PROXIES as a list, empty by default, and refuses a bad entry at start', () => {
    expect(LodeConfig.fromEnv({}).trustedProxies).toEqual([]);
    expect(LodeConfig.fromEnv({ LODE_TRUSTED_PROXIES: '10.0.0.0/8, loopback 192.168.1.5' }).trustedProxies).toEqual([
      '10.0.0.0/8',
      'loopback',
      '192.168.1.5',
    ]);
    expect(() => trustProxies(express(), ['not-an-address'])).toThrow(/LODE_TRUSTED_PROXIES/);
  });
});

/** The request log's lines for the request ids `ids`, written while `act` ran. */
async function requestLines(act: () => Promise<void>, ids: string[]): Promise<Record<string, unknown>[]> {
  const ofIds = (written: readonly string[]) =>
    written
      .filter((l) => l.includes('"request_id"'))
      .map((l) => JSON.parse(l) as Record<string, unknown>)
      .filter((l) => ids.includes(l.request_id as string));
  return ofIds(await loggedLines(act, (written) => ofIds(written).length >= ids.length));
}
