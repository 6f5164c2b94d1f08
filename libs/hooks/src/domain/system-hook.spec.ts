import { NotFound } from '@app/platform';
import {
  addSystemHook,
  evolve,
  initial,
  removeSystemHook,
  SYSTEM_HOOK_DEFAULTS,
  updateSystemHook,
  type SystemHookEvent,
} from './system-hook';

const NOW = new Date('2026-11-28T10:00:00.000Z');
const given = (...events: SystemHookEvent[]) => events.reduce(evolve, initial());
const settings = { ...SYSTEM_HOOK_DEFAULTS, url: 'https://ops:hunter2@hooks.example.com/all', token: 'tok' };
const added: SystemHookEvent = {
  type: 'SystemHookAdded',
  data: {
    hookId: 4,
    url: 'https://ops:*****@hooks.example.com/all',
    enableSslVerification: true,
    events: SYSTEM_HOOK_DEFAULTS.events,
    at: NOW.toISOString(),
  },
};

describe('system hooks', () => {
  it('adds a hook whose event keeps neither the token nor the password in its URL', () => {
    const events = addSystemHook(given(), 4, settings, NOW);
    expect(events).toEqual([added]);
    expect(JSON.stringify(events)).not.toContain('hunter2');
    expect(JSON.stringify(events)).not.toContain('tok');
  });

  it('removes an existing hook, and a missing or removed one is 404', () => {
    expect(removeSystemHook(given(added), NOW)).toEqual([
      { type: 'SystemHookRemoved', data: { hookId: 4, at: NOW.toISOString() } },
    ]);
    expect(() => removeSystemHook(given(), NOW)).toThrow(NotFound);
    expect(() => removeSystemHook(given(added, ...removeSystemHook(given(added), NOW)), NOW)).toThrow(NotFound);
  });

  it('updates an existing hook with every setting, never its token, signing token or URL password', () => {
    const signingToken = `whsec_${Buffer.alloc(32, 7).toString('base64')}`;
    const changed = { ...settings, signingToken, enableSslVerification: false };
    expect(updateSystemHook(given(added), changed, NOW)).toEqual([
      { type: 'SystemHookUpdated', data: { ...added.data, enableSslVerification: false } },
    ]);
    const text = JSON.stringify(updateSystemHook(given(added), changed, NOW));
    for (const secret of ['hunter2', 'tok', 'whsec_']) expect(text).not.toContain(secret);
    expect(() => updateSystemHook(given(), changed, NOW)).toThrow(NotFound);
    expect(() => updateSystemHook(given(added, ...removeSystemHook(given(added), NOW)), changed, NOW)).toThrow(
      NotFound,
    );
  });

  it('refuses to add a hook twice on one stream', () => {
    expect(() => addSystemHook(given(added), 4, settings, NOW)).toThrow('exists already');
  });
});
