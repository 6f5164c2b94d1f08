import { repositoryPath } from '@app/git';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { client, unique } from '../support/groups';
import { createUser } from '../support/seed';
import { startTestApp, type TestApp } from '../support/test-app';

/** Every bare repository under the data directory (`repositories/@hashed/ab/cd/<hash>.git`). */
function repositoriesOnDisk(dataDir: string): string[] {
  const root = join(dataDir, 'repositories', '@hashed');
  const found: string[] = [];
  const walk = (dir: string, depth: number) => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      if (!e.isDirectory()) continue;
      if (depth === 2) found.push(join(dir, e.name));
      else walk(join(dir, e.name), depth + 1);
    }
  };
  try {
    walk(root, 0);
  } catch {
    return [];
  }
  return found.sort();
}

/** A project's bare repository is made outside the creating transaction, and only a created project keeps one. */
describe('project repositories', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(() => t.close());

  it('leaves a repository only for the project that was created when several race for one path', async () => {
    const alice = await createUser(t);
    const path = `race-${unique()}`;
    const answers = await Promise.all(
      Array.from({ length: 6 }, (_, i) =>
        client(t, alice.token)
          .post('/projects')
          .send({ name: `Race ${i}`, path }),
      ),
    );
    const created = answers.filter((r) => r.status === 201);
    expect(created).toHaveLength(1);
    for (const r of answers.filter((a) => a.status !== 201)) expect(r.status).toBe(400);
    expect(repositoriesOnDisk(t.config.dataDir)).toEqual([repositoryPath(t.config.dataDir, created[0].body.id)]);
  });
});
