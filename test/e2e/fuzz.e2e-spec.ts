import { Logger } from '@nestjs/common';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
// @ts-expect-error: plain JavaScript, shared with bench/fuzz.mjs
import { fuzz, routesOf } from '../../bench/fuzz-core.mjs';
import { createGroup, createProject } from '../support/groups';
import { createUser } from '../support/seed';
import { startTestApp, type TestApp } from '../support/test-app';

/**
 * A short seeded fuzz run (bench/fuzz.mjs runs the long one): requests over every route with NUL,
 * huge ints, 1e300, null, deep nesting, wrong types, long strings and bad multipart. None may be
 * answered with a 5xx, every error body is JSON, and nothing is logged as an error.
 */
describe('fuzzing every route', () => {
  let t: TestApp;
  let port: number;
  let tokens: (string | undefined)[];
  const errors: string[] = [];
  const logError = Logger.prototype.error;

  beforeAll(async () => {
    t = await startTestApp();
    const user = await createUser(t, { name: 'Fuzz User' });
    const group = await createGroup(t, { name: 'fuzz-group', path: 'fuzz-group', visibility: 'public' });
    await createProject(t, { name: 'fuzz-project', path: 'fuzz-project', namespace_id: group.id });
    await createProject(t, { name: 'fuzz-root', path: 'fuzz-root', visibility: 'public' });
    tokens = [undefined, t.rootToken, t.rootToken, user.token, 'not-a-token'];
    const server = t.app.getHttpServer() as Server;
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    port = (server.address() as AddressInfo).port;
    Logger.prototype.error = (m: unknown) => void errors.push(String(m).slice(0, 500));
  });
  afterAll(async () => {
    Logger.prototype.error = logError;
    await t?.close();
  });

  it('answers 3,000 seeded requests without a 5xx, with JSON error bodies', async () => {
    const routes = routesOf(t.app);
    expect(routes.length).toBeGreaterThan(50);
    const result = await fuzz({ port, routes, tokens, requests: 3000, seed: 20261125, concurrency: 4 });
    expect(result.failures.slice(0, 20)).toEqual([]);
    expect(errors.slice(0, 10)).toEqual([]);
  }, 120_000);
});
