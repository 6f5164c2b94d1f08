import { Logger } from '@nestjs/common';
import { Pool } from 'pg';
import { LodeConfig } from '../config/lode-config';
import { INVALIDATION_CHANNEL, Invalidations } from './invalidations';

const TEST_PG = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

/**
 * `caughtUp` against a real PostgreSQL: a NOTIFY committed by another connection before the call has
 * reached the subscribers by the time it resolves. The embedded database has one process and no fence.
 */
describe('Invalidations.caughtUp', () => {
  let invalidations: Invalidations;
  let writer: Pool;
  const heard: string[] = [];

  beforeAll(async () => {
    Logger.overrideLogger(['error']);
    invalidations = new Invalidations(
      Object.assign(new LodeConfig(), { databaseUrl: TEST_PG, embeddedDatabase: false }),
    );
    invalidations.subscribe((keys) => heard.push(...(keys === 'all' ? ['*all*'] : keys)));
    await invalidations.onApplicationBootstrap();
    writer = new Pool({ connectionString: TEST_PG, max: 4 });
  });
  afterAll(async () => {
    await writer.end();
    await invalidations.onApplicationShutdown();
  });

  it('resolves only after every notification committed before the call was handed to the subscribers', async () => {
    for (let round = 0; round < 200; round += 1) {
      const key = `fence-test:${round}`;
      await writer.query('select pg_notify($1, $2)', [INVALIDATION_CHANNEL, JSON.stringify([key])]);
      expect(await invalidations.caughtUp()).toBe(true);
      expect(heard).toContain(key);
    }
  });

  it('lets concurrent callers share roundtrips, each still fenced after its own call', async () => {
    const calls = await Promise.all(
      Array.from({ length: 50 }, async (_, i) => {
        const key = `fence-shared:${i}`;
        await writer.query('select pg_notify($1, $2)', [INVALIDATION_CHANNEL, JSON.stringify([key])]);
        const ok = await invalidations.caughtUp();
        return ok && heard.includes(key);
      }),
    );
    expect(calls.every(Boolean)).toBe(true);
  });

  it('answers false once the LISTEN connection is gone, so caches query instead', async () => {
    const stopped = new Invalidations(
      Object.assign(new LodeConfig(), { databaseUrl: TEST_PG, embeddedDatabase: false }),
    );
    await stopped.onApplicationBootstrap();
    expect(await stopped.caughtUp()).toBe(true);
    await stopped.onApplicationShutdown();
    expect(await stopped.caughtUp()).toBe(false);
  });

  it('announces keys without an event: this process hears them at once, another through NOTIFY', async () => {
    const announcer = new Invalidations(
      Object.assign(new LodeConfig(), { databaseUrl: TEST_PG, embeddedDatabase: false }),
    );
    const own: string[] = [];
    announcer.subscribe((keys) => own.push(...(keys === 'all' ? ['*all*'] : keys)));
    await announcer.announce(['announced:1'], writer);
    expect(own).toEqual(['announced:1']);
    expect(await invalidations.caughtUp()).toBe(true);
    expect(heard).toContain('announced:1');
    // A database that cannot take the NOTIFY leaves the local eviction done and throws nothing.
    const gone = { query: () => Promise.reject(new Error('connection terminated')) };
    await expect(announcer.announce(['announced:2'], gone)).resolves.toBeUndefined();
    expect(own).toEqual(['announced:1', 'announced:2']);
  });

  it('answers true at once on the embedded database, which one process serves', async () => {
    const embedded = new Invalidations(Object.assign(new LodeConfig(), { databaseUrl: '', embeddedDatabase: true }));
    expect(await embedded.caughtUp()).toBe(true);
  });
});
