/*
 * Auto-disabling of failing hooks, after later GitLab's `WebHooks::AutoDisabling`
 * (app/models/concerns/web_hooks/auto_disabling.rb, 17.x/18.0, the rules that replaced 16.x's
 * `backoff_count`): every failed request counts; past TEMPORARILY_DISABLED_FAILURE_THRESHOLD (3)
 * consecutive failures a hook is disabled for INITIAL_BACKOFF (1 minute) doubling per further
 * failure up to MAX_BACKOFF (1 day); past PERMANENTLY_DISABLED_FAILURE_THRESHOLD (39) it stays
 * disabled until it is edited or tested. A delivered request (2xx) enables it again (`enable!`).
 *
 * Pure functions over a hook's failure state; `HookFailures` keeps that state in `hook_failures`.
 */

/** Which table a hook's id belongs to: project hooks and system hooks have sequences of their own. */
export type HookKind = 'project' | 'system';

export interface FailureState {
  /** GitLab's `recent_failures`: consecutive failed requests, at most PERMANENT_AFTER. */
  recentFailures: number;
  /** GitLab's `disabled_until`; null while the hook is under the grace threshold. */
  disabledUntil: Date | null;
}

export type AlertStatus = 'executable' | 'temporarily_disabled' | 'disabled';

/** GitLab's TEMPORARILY_DISABLED_FAILURE_THRESHOLD: the 4th consecutive failure disables the hook. */
export const GRACE_FAILURES = 3;
/** GitLab's PERMANENTLY_DISABLED_FAILURE_THRESHOLD + 1: the 40th consecutive failure disables it for good. */
export const PERMANENT_AFTER = 40;
/** GitLab's MAX_BACKOFF: one day. */
export const MAX_BACKOFF_MS = 24 * 60 * 60 * 1000;
/** GitLab's INITIAL_BACKOFF: one minute (LODE_WEBHOOK_DISABLE_BASE_MS). */
export const INITIAL_BACKOFF_MS = 60_000;

/** GitLab's ENABLED_HOOK_TYPES (`ProjectHook` only): system hooks are never disabled for failing. */
export const autoDisables = (kind: HookKind) => kind === 'project';

export const NEVER_FAILED: FailureState = { recentFailures: 0, disabledUntil: null };

/** GitLab's `alert_status`, as the hooks API answers it. */
export function alertStatus(s: FailureState, now: Date): AlertStatus {
  if (
    s.disabledUntil !== null &&
    s.disabledUntil.getTime() >= now.getTime() &&
    s.recentFailures > GRACE_FAILURES &&
    s.recentFailures < PERMANENT_AFTER
  )
    return 'temporarily_disabled';
  if (s.recentFailures >= PERMANENT_AFTER) return 'disabled';
  return 'executable';
}

/** Whether a delivery may be sent now (GitLab's `executable?`). */
export const executable = (s: FailureState, now: Date) => alertStatus(s, now) === 'executable';

/**
 * GitLab's `backoff!` after a failed request. A failure of a request that was already in flight when
 * the hook got disabled does not count (GitLab: `return unless executable?`). The window is computed
 * from the failures counted before this one: the 4th failure gives the base, the 5th twice that...
 */
export function afterFailure(s: FailureState, now: Date, baseMs = INITIAL_BACKOFF_MS): FailureState {
  if (!executable(s, now)) return s;
  const recentFailures = Math.min(Math.max(s.recentFailures + 1, 1), PERMANENT_AFTER);
  if (recentFailures <= GRACE_FAILURES) return { recentFailures, disabledUntil: s.disabledUntil };
  const backoffCount = s.recentFailures - GRACE_FAILURES;
  const windowMs = Math.min(Math.max(baseMs * 2 ** backoffCount, baseMs), Math.max(MAX_BACKOFF_MS, baseMs));
  return { recentFailures, disabledUntil: new Date(now.getTime() + windowMs) };
}

/** GitLab's `enable!`: a delivered request, an edit of the hook or a test forgets every failure. */
export const afterSuccess = (): FailureState => NEVER_FAILED;
