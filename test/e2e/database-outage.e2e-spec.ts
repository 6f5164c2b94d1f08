import { Logger } from '@nestjs/common';
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { git, gitOk, tempDirs } from '../support/git';
import { TcpProxy } from '../support/tcp-proxy';
import { eventually, startTestApp, TEST_PG, type TestApp, describeOnServers } from '../support/test-app';

/**
 * PostgreSQL behind a proxy whose network the test silences (no reset, no refusal: packets simply
 * stop, as in a partition). Requests must not hang on it: 503 with Retry-After in GitLab's body
 * within about two seconds, and normal answers again once the network returns, without a restart.
 */
describeOnServers('a PostgreSQL that stops answering', () => {
  let t: TestApp;
  let proxy: TcpProxy;

  beforeAll(async () => {
    const pg = new URL(TEST_PG);
    proxy = new TcpProxy(pg.hostname, Number(pg.port || 5432));
    await proxy.start();
    const url = new URL(TEST_PG);
    url.host = `127.0.0.1:${proxy.port}`;
    url.pathname = `/lode_test_${randomBytes(6).toString('hex')}`;
    t = await startTestApp({ databaseUrl: url.toString() });
  });

  const tmp = tempDirs();
  afterAll(async () => {
    proxy.heal();
    await t.close();
    await proxy.stop();
    tmp.removeAll();
  });

  const projects = () => t.http().get('/api/v4/projects').set('PRIVATE-TOKEN', t.rootToken).timeout(15_000);

  it('answers 503 with Retry-After within two seconds while it is silent, and recovers without a restart', async () => {
    expect((await projects()).status).toBe(200);

    proxy.partition();
    // The first request finds a pooled connection that looks alive and waits on it.
    let started = Date.now();
    const first = await projects();
    expect(Date.now() - started).toBeLessThan(3000);
    expect(first.status).toBe(503);
    expect(first.body).toEqual({ message: '503 Service Unavailable' });
    expect(Number(first.headers['retry-after'])).toBeGreaterThan(0);

    // Once the silence is known, requests do not wait at all; a write is refused the same way.
    started = Date.now();
    const next = await projects();
    const write = await t
      .http()
      .post('/api/v4/projects')
      .set('PRIVATE-TOKEN', t.rootToken)
      .send({ name: 'during-the-outage' })
      .timeout(15_000);
    expect(Date.now() - started).toBeLessThan(1000);
    expect(next.status).toBe(503);
    expect(write.status).toBe(503);
    expect(write.headers['retry-after']).toBeDefined();
    // Readiness says what is wrong.
    expect((await t.http().get('/-/readiness').timeout(15_000)).status).toBe(503);

    proxy.heal();
    await eventually(async () => (await projects()).status === 200, 10_000, 200);
    const created = await t
      .http()
      .post('/api/v4/projects')
      .set('PRIVATE-TOKEN', t.rootToken)
      .send({ name: 'after-the-outage' });
    expect(created.status).toBe(201);
  });

  it('answers a git push caught by the silence with 503, logged as no error, and takes it once the network returns', async () => {
    await t.app.listen(0, '127.0.0.1');
    const base = `http://root:${t.rootToken}@127.0.0.1:${(t.app.getHttpServer().address() as AddressInfo).port}`;
    const project = await t.http().post('/api/v4/projects').set('PRIVATE-TOKEN', t.rootToken).send({ name: 'pushed' });
    expect(project.status).toBe(201);
    const work = tmp.make();
    await gitOk(['init', '-q', work]);
    writeFileSync(join(work, 'README.md'), 'hi\n');
    await gitOk(['add', '.'], work);
    await gitOk(['commit', '-q', '-m', 'first'], work);
    const remote = `${base}/${project.body.path_with_namespace}.git`;
    const errors: string[] = [];
    const logError = Logger.prototype.error;
    Logger.prototype.error = (m: unknown) => void errors.push(String(m));
    try {
      proxy.partition();
      // The push's first request finds a pooled connection that looks alive and waits on it; once
      // the watch cuts it, the push is told 503, as the API's requests are (not a 500).
      const refused = await git(['push', '-q', remote, 'master'], work);
      expect(refused.status).not.toBe(0);
      expect(refused.out).toMatch(/503/);
      const again = await git(['push', '-q', remote, 'master'], work);
      expect(again.out).toMatch(/503/);
    } finally {
      Logger.prototype.error = logError;
      proxy.heal();
    }
    expect(errors).toEqual([]);
    await eventually(async () => (await projects()).status === 200, 10_000, 200);
    await gitOk(['push', '-q', remote, 'master'], work);
  });
});
