import { Invalidations, LodeConfig } from '@app/platform';
import { ProjectChangeNotices, type ProjectQueries } from '@app/projects';
import { repositoryReady } from './repository-ready';

/**
 * The wait for a fork's copy: woken by the announcement of the project's events (here published as
 * the writing process does, right after its commit), not by polling the database.
 */
describe('repositoryReady', () => {
  let invalidations: Invalidations;
  let notices: ProjectChangeNotices;
  let status: string;
  let reads: number;
  const projects = {
    findForSystem: async (id: number) => {
      reads++;
      return { id, import_status: status };
    },
  } as unknown as ProjectQueries;

  beforeEach(() => {
    invalidations = new Invalidations(new LodeConfig());
    notices = new ProjectChangeNotices(invalidations);
    reads = 0;
  });

  it('answers at once for a project never forked, or whose copy finished or failed, without a read', async () => {
    for (const [s, ready] of [
      ['none', true],
      ['finished', true],
      ['failed', false],
    ] as const) {
      expect(await repositoryReady(projects, notices, { id: 1, import_status: s })).toBe(ready);
    }
    expect(reads).toBe(0);
  });

  it("reads the project again when its event is announced, not before, and ends with the copy's status", async () => {
    status = 'started';
    const ready = repositoryReady(projects, notices, { id: 7, import_status: 'scheduled' }, 5_000);
    await new Promise((r) => setTimeout(r, 300));
    expect(reads).toBe(1); // the read right after listening, then nothing while nothing was heard
    invalidations.publish(['public-project:8']); // another project's news: not a reason to read
    await new Promise((r) => setTimeout(r, 50));
    expect(reads).toBe(1);
    status = 'finished';
    invalidations.publish(['public-project:7']);
    expect(await ready).toBe(true);
    expect(reads).toBe(2);
    expect(notices['waiting'].size).toBe(0);
  });

  it('is woken by a lost LISTEN connection (everything stale) and by an everything key', async () => {
    status = 'started';
    const ready = repositoryReady(projects, notices, { id: 7, import_status: 'started' }, 5_000);
    await new Promise((r) => setTimeout(r, 50));
    invalidations.publish('all');
    await new Promise((r) => setTimeout(r, 50));
    expect(reads).toBe(2);
    status = 'failed';
    invalidations.publish(['public-project:*']);
    expect(await ready).toBe(false);
    expect(reads).toBe(3);
  });

  it('gives up at the deadline with a handful of reads when nothing is heard (a queue that never runs the copy)', async () => {
    status = 'scheduled';
    const started = Date.now();
    expect(await repositoryReady(projects, notices, { id: 7, import_status: 'scheduled' }, 2_500)).toBe(false);
    expect(Date.now() - started).toBeGreaterThanOrEqual(2_500);
    expect(reads).toBe(3); // at 0, 1 and 2 s: one per second, where the old wait read every 100 ms
    expect(notices['waiting'].size).toBe(0);
  });

  it('leaves no waiter behind when the read fails', async () => {
    const failing = {
      findForSystem: async () => {
        throw new Error('database away');
      },
    } as unknown as ProjectQueries;
    await expect(repositoryReady(failing, notices, { id: 7, import_status: 'started' })).rejects.toThrow('away');
    expect(notices['waiting'].size).toBe(0);
  });
});
