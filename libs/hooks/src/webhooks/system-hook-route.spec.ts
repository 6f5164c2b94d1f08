import type { DomainEvent, Recorded } from '@app/platform';
import { SYSTEM_HOOK_SOURCE_EVENTS } from './system-hook-fanout';
import { systemHookJobsRoute } from './webhook-jobs';

/* The outbox route: one system fan-out per event a system hook hears of, named by the event's position. */

const recorded = (type: string, data: unknown = { at: 't' }) =>
  ({ type, data, globalPosition: '42', streamId: 's', streamVersion: 1 }) as unknown as Recorded<DomainEvent>;

/** The answer of SystemHookListeners (system-hooks-processes.e2e-spec.ts tests the cache itself). */
const heard = (answer: boolean) => systemHookJobsRoute({ hear: () => Promise.resolve(answer) });
const db = { query: () => Promise.reject(new Error('not asked')) };

describe('systemHookJobsRoute', () => {
  it.each(SYSTEM_HOOK_SOURCE_EVENTS)('routes %s to one system-fanout job carrying the event', async (type) => {
    expect(await heard(true)(recorded(type, { projectId: 1 }), db)).toMatchObject({
      queue: 'webhooks',
      name: 'system-fanout',
      jobId: 'system-fanout-42',
      data: { kind: 'system-fanout', position: '42', type, data: { projectId: 1 } },
    });
  });

  it.each(['ProjectArchived', 'UserBlocked', 'GroupCustomAttributeSet', 'ProjectHookAdded', 'SystemHookAdded'])(
    'ignores %s',
    async (type) => expect(await heard(true)(recorded(type), db)).toBeUndefined(),
  );

  it.each(SYSTEM_HOOK_SOURCE_EVENTS)('writes nothing for %s when no system hook hears it', async (type) =>
    expect(await heard(false)(recorded(type, { projectId: 1 }), db)).toBeUndefined(),
  );
});
