import { maskCredentials } from './hook-url';
import {
  addHook,
  evolve,
  HOOK_DEFAULTS,
  initial,
  recordDelivery,
  updateHook,
  type ProjectHookEvent,
} from './project-hook';

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

describe('project hook secrets stay out of the events', () => {
  const secretSettings = {
    ...HOOK_DEFAULTS,
    url: 'https://deploy:s3cret-pass@hooks.example.com/x?y=1',
    token: 'the-hook-token',
  };

  it('adds a hook whose event holds no token and a masked URL', () => {
    const events = addHook(initial(), 7, 3, secretSettings, NOW);
    expect(events).toEqual([
      {
        type: 'ProjectHookAdded',
        data: {
          hookId: 7,
          projectId: 3,
          url: 'https://deploy:*****@hooks.example.com/x?y=1',
          enableSslVerification: true,
          events: HOOK_DEFAULTS.events,
          pushEventsBranchFilter: null,
          at: NOW.toISOString(),
        },
      },
    ]);
    expect(JSON.stringify(events)).not.toMatch(/s3cret-pass|the-hook-token/);
  });

  it('replaces a hook with an event that holds no token and a masked URL', () => {
    const events = updateHook(given(added), 3, secretSettings, NOW);
    expect(events).toEqual([
      {
        type: 'ProjectHookUpdated',
        data: {
          hookId: 7,
          projectId: 3,
          settings: {
            url: 'https://deploy:*****@hooks.example.com/x?y=1',
            enableSslVerification: true,
            events: HOOK_DEFAULTS.events,
            pushEventsBranchFilter: null,
          },
          at: NOW.toISOString(),
        },
      },
    ]);
  });

  it('masks a password, or a user name standing alone; leaves other URLs as they are', () => {
    expect(maskCredentials('https://u:p@h.example/')).toBe('https://u:*****@h.example/');
    expect(maskCredentials('https://ghp_token123@h.example/p')).toBe('https://*****@h.example/p');
    expect(maskCredentials('https://h.example/p?token=q')).toBe('https://h.example/p?token=q');
    expect(maskCredentials('not a url')).toBe('not a url');
  });
});

describe('push_events_branch_filter', () => {
  const settings = (pushEventsBranchFilter: string | null) => ({
    ...HOOK_DEFAULTS,
    url: 'https://hooks.example.com/',
    pushEventsBranchFilter,
  });

  it('keeps a name or a wildcard, and none, in the record', () => {
    for (const filter of ['release/*', 'master', '*-stable', '', null]) {
      const [e] = addHook(initial(), 8, 3, settings(filter), NOW);
      expect(e.type === 'ProjectHookAdded' && e.data.pushEventsBranchFilter).toBe(filter);
    }
    const [u] = updateHook(given(added), 3, settings('main'), NOW);
    expect(u.type === 'ProjectHookUpdated' && u.data.settings.pushEventsBranchFilter).toBe('main');
  });

  it("refuses what is no branch name with its wildcards taken as letters, in GitLab 11.3's 404", () => {
    const refused = (filter: string) => () => addHook(initial(), 8, 3, settings(filter), NOW);
    expect(refused('a..b')).toThrow(
      '404 Project hook {:push_events_branch_filter=>["is not a valid branch name"]} Not Found',
    );
    expect(refused('x~y')).toThrow(/is not a valid branch name/);
    expect(refused('x'.repeat(4001))).toThrow(/is longer than the allowed length of 4000 characters\./);
    expect(() => updateHook(given(added), 3, settings('bad name'), NOW)).toThrow(/is not a valid branch name/);
  });
});
