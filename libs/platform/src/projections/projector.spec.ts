import type { EntityManager } from 'typeorm';
import type { Recorded } from '../event-store/recorded';
import { EVERY_EVENT, ProjectionRegistry, type Projector } from './projector';

const db = {} as EntityManager;
const event = (type: string, position: number) =>
  ({
    type,
    data: {},
    globalPosition: String(position),
    streamId: 's',
    streamVersion: position,
    metadata: {},
  }) as Recorded;

/** A projector without a replay or batch of its own, noting in `seen` each event it is handed. */
const plain = (seen: string[], name: string, types: string[]): Projector => ({
  name,
  tables: [],
  eventTypes: types,
  apply: async (e) => void seen.push(`${name} ${e.type}`),
});

describe("ProjectionRegistry's replay", () => {
  it("hands each event to its projectors in the live order, through a projector's own replay where it has one, and finishes each once", async () => {
    const seen: string[] = [];
    const own: Projector = {
      ...plain(seen, 'audit', [EVERY_EVENT]),
      apply: async () => {
        throw new Error('a projector with a replay of its own is not applied one by one in a rebuild');
      },
      replay: () => ({
        apply: async (e) => void seen.push(`audit(replay) ${e.type}`),
        finish: async () => void seen.push('audit(replay) finished'),
      }),
    };
    const registry = new ProjectionRegistry();
    registry.register(
      own,
      plain(seen, 'users', ['UserCreated']),
      plain(seen, 'projects', ['ProjectCreated', 'UserCreated']),
    );

    const replay = registry.replay();
    for (const [i, type] of ['UserCreated', 'ProjectCreated', 'Unhandled'].entries())
      await replay.apply(event(type, i + 1), db);
    await replay.finish(db);
    expect(seen).toEqual([
      'users UserCreated',
      'projects UserCreated',
      'audit(replay) UserCreated',
      'projects ProjectCreated',
      'audit(replay) ProjectCreated',
      'audit(replay) Unhandled',
      'audit(replay) finished',
    ]);

    // The live path is unchanged: `apply`, every projector.
    await expect(registry.apply(event('UserCreated', 4), db)).rejects.toThrow(/not applied one by one/);
  });
});

describe("ProjectionRegistry's append batch", () => {
  it("hands one append's events to each projector in order, through its own batch (begun at its first event) where it has one, and finishes each batch once", async () => {
    const seen: string[] = [];
    let batchesBegun = 0;
    const batching: Projector = {
      ...plain(seen, 'audit', [EVERY_EVENT]),
      apply: async () => {
        throw new Error('a projector with a batch of its own is not applied one by one in an append');
      },
      appendBatch: () => {
        batchesBegun++;
        return {
          apply: async (e) => void seen.push(`audit(batch) ${e.type}`),
          finish: async () => void seen.push('audit(batch) finished'),
        };
      },
    };
    const registry = new ProjectionRegistry();
    registry.register(plain(seen, 'projects', ['ProjectCreated', 'ProjectMemberAdded']), batching);

    const batch = registry.appendBatch();
    expect(batchesBegun).toBe(0); // nothing begun for an append no event reaches
    await batch.apply(event('ProjectCreated', 1), db);
    await batch.apply(event('ProjectMemberAdded', 2), db);
    await batch.finish(db);
    expect(batchesBegun).toBe(1);
    expect(seen).toEqual([
      'projects ProjectCreated',
      'audit(batch) ProjectCreated',
      'projects ProjectMemberAdded',
      'audit(batch) ProjectMemberAdded',
      'audit(batch) finished',
    ]);
  });
});
