import { validRefName } from '@app/git';
import { NotFound } from '@app/platform';
import { maskCredentials } from './hook-url';

/*
 * A project hook. Stream `hook-<id>`; the attempts of each delivery on a stream of their own
 * (`deliveryStream`), so the hook's stream stays as short as its settings history. Its secrets (the `token` delivery sends back as
 * `X-Gitlab-Token`, and the password in its URL) never enter the events: the log is immutable and
 * copied into every backup, so a rotated or deleted secret would live on there. The command seals
 * them into `project_hook_secrets`, found by the hook id; the events keep the URL masked.
 */

export const HOOK_EVENTS = [
  'pushEvents',
  'tagPushEvents',
  'issuesEvents',
  'mergeRequestsEvents',
  'noteEvents',
  'jobEvents',
  'pipelineEvents',
  'wikiPageEvents',
] as const;
export type HookEventSwitch = (typeof HOOK_EVENTS)[number];

/** A hook as the API receives it, secrets included. */
export interface HookSettings {
  url: string;
  token: string | null;
  enableSslVerification: boolean;
  events: Record<HookEventSwitch, boolean>;
  /**
   * GitLab 11.3's `push_events_branch_filter`: push events of branches it matches only (a name or a
   * wildcard); null or empty for every branch. Absent in events before it existed (read as null).
   */
  pushEventsBranchFilter?: string | null;
  /**
   * The Standard Webhooks secret (`whsec_...`) deliveries are signed with: a secret like `token`, never
   * in an event. Undefined on an update that does not give it: the hook keeps the one it has.
   */
  signingToken?: string | null;
}

/** What the events keep of a hook's settings: no token, and the URL's credentials masked. */
export type HookRecordSettings = Omit<HookSettings, 'token' | 'signingToken'>;

export function recordSettings({
  url,
  enableSslVerification,
  events,
  pushEventsBranchFilter,
}: HookSettings): HookRecordSettings {
  return { url: maskCredentials(url), enableSslVerification, events, pushEventsBranchFilter };
}

/**
 * GitLab's `BranchFilterValidator` (the value is squished first): with its wildcards taken for
 * letters, a valid branch name, at most 4000 characters. 11.3's hooks API answers a failed
 * validation other than the URL's with `not_found!("Project hook #{hook.errors.messages}")`, a 404
 * whose message is Ruby's rendering of the errors hash.
 */
function checkBranchFilter(filter: string | null | undefined): void {
  if (!filter) return;
  const errors: string[] = [];
  if (!validRefName(filter.replaceAll('*', 'x'))) errors.push('is not a valid branch name');
  if (filter.length > 4000) errors.push('is longer than the allowed length of 4000 characters.');
  if (errors.length)
    throw new NotFound(`Project hook {:push_events_branch_filter=>[${errors.map((e) => `"${e}"`).join(', ')}]}`);
}

/** GitLab's `squish`: whitespace at the ends removed, runs of it inside made one space. */
export const squish = (value: string) => value.trim().replace(/\s+/g, ' ');

/** GitLab's defaults: push events on, everything else off, certificates verified. */
export const HOOK_DEFAULTS: Omit<HookSettings, 'url'> = {
  token: null,
  enableSslVerification: true,
  events: {
    pushEvents: true,
    tagPushEvents: false,
    issuesEvents: false,
    mergeRequestsEvents: false,
    noteEvents: false,
    jobEvents: false,
    pipelineEvents: false,
    wikiPageEvents: false,
  },
  pushEventsBranchFilter: null,
};

export type ProjectHookEvent =
  | { type: 'ProjectHookAdded'; data: HookRecordSettings & { hookId: number; projectId: number; at: string } }
  | {
      type: 'ProjectHookUpdated';
      data: { hookId: number; projectId: number; settings: HookRecordSettings; at: string };
    }
  | { type: 'ProjectHookRemoved'; data: { hookId: number; projectId: number; at: string } }
  | { type: 'ProjectHookDelivered'; data: HookDelivery & { hookId: number; projectId: number; at: string } };

/**
 * One delivery attempt, as `ProjectHookDelivered` recorded it until the log became the append-only
 * `hook_delivery_log` (migration 1763780003400, which copied the projected rows): no longer written,
 * the old events stay in the store and still project into `project_hook_deliveries` on a rebuild.
 */
export interface HookDelivery {
  /** The same for every attempt of one delivery: GitLab's `X-Gitlab-Event-UUID`. */
  eventUuid: string;
  /** `X-Gitlab-Event`: `Push Hook` or `Tag Push Hook`. */
  event: string;
  url: string;
  attempt: number;
  responseStatus: number | null;
  error: string | null;
  durationMs: number;
  /** Not sent: the hook was disabled for failing (auto-disabling); absent on attempts made. */
  skipped?: boolean;
}

export type ProjectHook = { exists: false } | { exists: true; hookId: number; projectId: number };

export const initial = (): ProjectHook => ({ exists: false });
export function evolve(s: ProjectHook, e: ProjectHookEvent): ProjectHook {
  switch (e.type) {
    case 'ProjectHookAdded':
      return { exists: true, hookId: e.data.hookId, projectId: e.data.projectId };
    case 'ProjectHookUpdated':
    case 'ProjectHookDelivered':
      return s;
    case 'ProjectHookRemoved':
      return { exists: false };
  }
}
export const projectHookDecider = { initial, evolve };

const existing = (s: ProjectHook, projectId: number) => {
  // A hook of another project is as unknown as a missing one (GitLab: `user_project.hooks.find`).
  if (!s.exists || s.projectId !== projectId) throw new NotFound();
  return s;
};

export function addHook(
  s: ProjectHook,
  hookId: number,
  projectId: number,
  settings: HookSettings,
  now: Date,
): ProjectHookEvent[] {
  if (s.exists) throw new Error(`hook ${hookId} exists already`);
  checkBranchFilter(settings.pushEventsBranchFilter);
  return [
    { type: 'ProjectHookAdded', data: { hookId, projectId, ...recordSettings(settings), at: now.toISOString() } },
  ];
}

/** PUT sends the whole hook again (GitLab requires `url`); the record is replaced. */
export function updateHook(s: ProjectHook, projectId: number, settings: HookSettings, now: Date): ProjectHookEvent[] {
  const h = existing(s, projectId);
  checkBranchFilter(settings.pushEventsBranchFilter);
  return [
    {
      type: 'ProjectHookUpdated',
      data: { hookId: h.hookId, projectId, settings: recordSettings(settings), at: now.toISOString() },
    },
  ];
}

export function removeHook(s: ProjectHook, projectId: number, now: Date): ProjectHookEvent[] {
  const h = existing(s, projectId);
  return [{ type: 'ProjectHookRemoved', data: { hookId: h.hookId, projectId, at: now.toISOString() } }];
}

/**
 * Where the attempts of one delivery (one event sent to one hook) are recorded: a stream of a few
 * events, so no hook command's cost grows with the deliveries the hook has made. Attempts are facts
 * about the past that decide nothing: the stream's state is empty.
 */
export const deliveryStream = (hookId: number, eventUuid: string) => `hook-delivery-${hookId}-${eventUuid}`;
export const hookDeliveryDecider = {
  initial: (): null => null,
  evolve: (s: null, _e: ProjectHookEvent): null => s,
};

/** A delivery attempt to a hook removed meanwhile is not recorded: there is no log left to show it. */
export function recordDelivery(s: ProjectHook, delivery: HookDelivery, now: Date): ProjectHookEvent[] {
  if (!s.exists) return [];
  return [
    {
      type: 'ProjectHookDelivered',
      data: { ...delivery, hookId: s.hookId, projectId: s.projectId, at: now.toISOString() },
    },
  ];
}
