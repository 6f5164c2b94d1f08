import { NotFound } from '@app/platform';
import { maskCredentials } from './hook-url';

/*
 * A system hook (administrators' `/hooks`): stream `system-hook-<id>`, its id from the same
 * `hook_id_seq` as project hooks. As with project hooks, its secrets (the `token`, the password in
 * its URL, the `signing_token`) never enter the events: the command seals them into `system_hook_secrets`.
 * GitLab 10.x has no PUT for system hooks; later GitLab has (`PUT /hooks/:hook_id`, 16.x/17.x
 * lib/api/system_hooks.rb), and so has Lode: `SystemHookUpdated` carries the whole settings again.
 */

export const SYSTEM_HOOK_EVENTS = [
  'pushEvents',
  'tagPushEvents',
  'mergeRequestsEvents',
  'repositoryUpdateEvents',
] as const;
export type SystemHookEventSwitch = (typeof SYSTEM_HOOK_EVENTS)[number];

/** A system hook as the API receives it, secrets included. */
export interface SystemHookSettings {
  url: string;
  token: string | null;
  enableSslVerification: boolean;
  events: Record<SystemHookEventSwitch, boolean>;
  /**
   * The Standard Webhooks secret (`whsec_...`) deliveries are signed with, as project hooks'. Undefined
   * on an update that does not give it: the hook keeps the one it has.
   */
  signingToken?: string | null;
}

/** What the events keep: no token, no signing token, the URL's credentials masked. */
export type SystemHookRecordSettings = Omit<SystemHookSettings, 'token' | 'signingToken'>;

/** GitLab's SystemHook defaults: repository updates on, the rest off, certificates verified. */
export const SYSTEM_HOOK_DEFAULTS: Omit<SystemHookSettings, 'url'> = {
  token: null,
  enableSslVerification: true,
  events: { pushEvents: false, tagPushEvents: false, mergeRequestsEvents: false, repositoryUpdateEvents: true },
};

export type SystemHookEvent =
  | { type: 'SystemHookAdded'; data: SystemHookRecordSettings & { hookId: number; at: string } }
  | { type: 'SystemHookUpdated'; data: SystemHookRecordSettings & { hookId: number; at: string } }
  | { type: 'SystemHookRemoved'; data: { hookId: number; at: string } };

export type SystemHook = { exists: false } | { exists: true; hookId: number };

export const initial = (): SystemHook => ({ exists: false });
export function evolve(_s: SystemHook, e: SystemHookEvent): SystemHook {
  switch (e.type) {
    case 'SystemHookAdded':
    case 'SystemHookUpdated':
      return { exists: true, hookId: e.data.hookId };
    case 'SystemHookRemoved':
      return { exists: false };
  }
}
export const systemHookDecider = { initial, evolve };
export const systemHookStream = (hookId: number) => `system-hook-${hookId}`;

export function addSystemHook(
  s: SystemHook,
  hookId: number,
  settings: SystemHookSettings,
  now: Date,
): SystemHookEvent[] {
  if (s.exists) throw new Error(`system hook ${hookId} exists already`);
  const { url, enableSslVerification, events } = settings;
  return [
    {
      type: 'SystemHookAdded',
      data: { hookId, url: maskCredentials(url), enableSslVerification, events, at: now.toISOString() },
    },
  ];
}

/** A PUT (GitLab 16.x/17.x): the settings as given, secrets left out as at adding. */
export function updateSystemHook(s: SystemHook, settings: SystemHookSettings, now: Date): SystemHookEvent[] {
  if (!s.exists) throw new NotFound();
  const { url, enableSslVerification, events } = settings;
  return [
    {
      type: 'SystemHookUpdated',
      data: { hookId: s.hookId, url: maskCredentials(url), enableSslVerification, events, at: now.toISOString() },
    },
  ];
}

/** GitLab 10.x: an unknown hook is `404 Not found` (`SystemHook.find`). */
export function removeSystemHook(s: SystemHook, now: Date): SystemHookEvent[] {
  if (!s.exists) throw new NotFound();
  return [{ type: 'SystemHookRemoved', data: { hookId: s.hookId, at: now.toISOString() } }];
}

/** The data GitLab's test of a system hook sends and answers (every version, `SystemHooksService`'s sample). */
export const SYSTEM_HOOK_TEST_DATA = {
  event_name: 'project_create',
  name: 'Ruby',
  path: 'ruby',
  project_id: 1,
  owner_name: 'Someone',
  owner_email: 'example@gitlabhq.com',
} as const;
