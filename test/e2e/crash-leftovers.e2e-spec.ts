import { repositoryPath } from '@app/git';
import { type INestApplication } from '@nestjs/common';
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { dirname, join } from 'node:path';
import { gitOk } from '../support/git';
import { startSecondApp, startTestApp, type TestApp } from '../support/test-app';

/**
 * What a process killed mid-creation leaves in the data directory, removed by the next start at once
 * (not after a quiet minute or an hour): repositories half-built beside their name (`*.git.tmp-*`) and
 * repositories made for a project whose event was never written. A live process's work is left alone.
 */
describe('leftovers of a killed process, at the next start', () => {
  let t: TestApp;
  const host = createHash('sha256').update(hostname()).digest('hex').slice(0, 8);
  const startedAt = Math.floor(Date.now() / 1000) - 3600;
  /** A pid of this machine that ran and ended: a killed Lode's. */
  const deadPid = spawnSync(process.execPath, ['-e', '']).pid!;
  const owner = (pid: number) => `o${pid}-${startedAt}-${host}`;

  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(async () => {
    await t?.close();
  });

  const restart = async (): Promise<INestApplication> => {
    return (await startSecondApp(t)).app;
  };

  it('removes half-built repositories of a dead process at once, and keeps a live one’s', async () => {
    const beside = repositoryPath(t.config.dataDir, 987_654);
    mkdirSync(dirname(beside), { recursive: true });
    const dead = `${beside}.tmp-${owner(deadPid)}-0a1b2c3d`;
    const live = `${beside}.tmp-${owner(1)}-4e5f6a7b`; // PID 1 runs: not known to be gone
    for (const dir of [dead, live]) {
      await gitOk(['init', '-q', '--bare', dir]);
    }
    const again = await restart();
    try {
      expect(existsSync(dead)).toBe(false);
      expect(existsSync(live)).toBe(true);
    } finally {
      await again.close();
    }
  });

  it('removes the repository a dead process made for a project it never wrote, and keeps a created one', async () => {
    const created = await t.http().post('/api/v4/projects').set('PRIVATE-TOKEN', t.rootToken).send({ name: 'kept' });
    expect(created.status).toBe(201);
    // A creation that committed but whose maker died before it forgot the marker.
    const markers = join(t.config.dataDir, 'repositories', '.creating');
    expect(readdirSync(markers)).toEqual([]);
    writeFileSync(join(markers, String(created.body.id)), `${owner(deadPid)}\n`);
    // One killed between the repository and the event: an id taken from the sequence, no project.
    const [{ id: orphanId }] = await t.db.query<{ id: string }[]>(`select nextval('project_id_seq') as id`);
    const orphan = repositoryPath(t.config.dataDir, Number(orphanId));
    await gitOk(['init', '-q', '--bare', orphan]);
    writeFileSync(join(markers, orphanId), `${owner(deadPid)}\n`);
    // A live process's creation in progress (PID 1's): not touched.
    const [{ id: busyId }] = await t.db.query<{ id: string }[]>(`select nextval('project_id_seq') as id`);
    const busy = repositoryPath(t.config.dataDir, Number(busyId));
    await gitOk(['init', '-q', '--bare', busy]);
    writeFileSync(join(markers, busyId), `${owner(1)}\n`);

    const again = await restart();
    try {
      expect(existsSync(orphan)).toBe(false);
      expect(existsSync(repositoryPath(t.config.dataDir, created.body.id))).toBe(true);
      expect(existsSync(busy)).toBe(true);
      expect(readdirSync(markers)).toEqual([busyId]);
      const got = await t.http().get(`/api/v4/projects/${created.body.id}`).set('PRIVATE-TOKEN', t.rootToken);
      expect(got.status).toBe(200);
    } finally {
      await again.close();
    }
  });
});
