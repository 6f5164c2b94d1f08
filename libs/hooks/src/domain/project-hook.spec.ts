import { evolve, HOOK_DEFAULTS, initial, recordDelivery, type ProjectHookEvent } from './project-hook';

const NOW = new Date('2026-11-24T10:00:00.000Z');
const added: ProjectHookEvent = {
  type: 'ProjectHookAdded',
  data: { ...HOOK_DEFAULTS, url: 'https://hooks.example.com/', hookId: 7, projectId: 3, at: NOW.toISOString() },
};
const removed: ProjectHookEvent = {
  type: 'ProjectHookRemoved',
  data: { hookId: 7, projectId: 3, at: NOW.toISOString() },
};
const given = (...events: ProjectHookEvent[]) => events.reduce(evolve, initial());
const delivery = {
  eventUuid: 'b1f7c7a2-4a47-4d39-9d2f-5d3c8f1f1a10',
  event: 'Push Hook',
  url: 'https://hooks.example.com/',
  attempt: 1,
  responseStatus: 200,
  error: null,
  durationMs: 12,
};

describe('project hook deliveries', () => {
  it('records an attempt on an existing hook', () => {
    expect(recordDelivery(given(added), delivery, NOW)).toEqual([
      { type: 'ProjectHookDelivered', data: { ...delivery, hookId: 7, projectId: 3, at: NOW.toISOString() } },
    ]);
  });

  it('records nothing for a hook removed meanwhile, and a recorded attempt changes no state', () => {
    expect(recordDelivery(given(added, removed), delivery, NOW)).toEqual([]);
    const [e] = recordDelivery(given(added), delivery, NOW);
    expect(given(added, e)).toEqual(given(added));
  });
});
