import {
  autoDisables,
  afterFailure,
  afterSuccess,
  alertStatus,
  executable,
  MAX_BACKOFF_MS,
  NEVER_FAILED,
  PERMANENT_AFTER,
  type FailureState,
} from './auto-disabling';

const NOW = new Date('2026-11-28T10:00:00.000Z');
const MIN = 60_000;
const later = (ms: number) => new Date(NOW.getTime() + ms);
/** `n` failures, each after the window the previous one opened (as a hook triggered now and then). */
function failures(n: number, base = MIN): { state: FailureState; at: Date } {
  let state = NEVER_FAILED;
  let at = NOW;
  for (let i = 0; i < n; i++) {
    if (state.disabledUntil && state.disabledUntil >= at) at = new Date(state.disabledUntil.getTime() + 1);
    state = afterFailure(state, at, base);
  }
  return { state, at };
}

describe('auto-disabling (GitLab 17.x WebHooks::AutoDisabling)', () => {
  it('keeps a hook executable through three failures', () => {
    const { state } = failures(3);
    expect(state).toEqual({ recentFailures: 3, disabledUntil: null });
    expect(alertStatus(state, NOW)).toBe('executable');
  });

  it('disables it for the base window at the 4th failure, then doubles the window per failure', () => {
    const fourth = afterFailure(failures(3).state, NOW);
    expect(fourth).toEqual({ recentFailures: 4, disabledUntil: later(MIN) });
    expect(alertStatus(fourth, NOW)).toBe('temporarily_disabled');
    expect(alertStatus(fourth, later(MIN))).toBe('temporarily_disabled'); // GitLab: disabled_until >= now
    expect(alertStatus(fourth, later(MIN + 1))).toBe('executable');
    const fifthAt = later(MIN + 1);
    const fifth = afterFailure(fourth, fifthAt);
    expect(fifth.recentFailures).toBe(5);
    expect(fifth.disabledUntil!.getTime() - fifthAt.getTime()).toBe(2 * MIN);
    const sixth = afterFailure(fifth, new Date(fifth.disabledUntil!.getTime() + 1));
    expect(sixth.disabledUntil!.getTime() - fifth.disabledUntil!.getTime() - 1).toBe(4 * MIN);
  });

  it('never disables for more than a day', () => {
    const { state, at } = failures(20);
    expect(state.recentFailures).toBe(20);
    expect(state.disabledUntil!.getTime() - at.getTime()).toBe(MAX_BACKOFF_MS);
  });

  it('does not count a failure while the hook is disabled', () => {
    const fourth = afterFailure(failures(3).state, NOW);
    expect(afterFailure(fourth, later(1000))).toBe(fourth);
  });

  it('disables it for good at the 40th failure, whatever the time', () => {
    const { state } = failures(PERMANENT_AFTER);
    expect(state.recentFailures).toBe(40);
    expect(alertStatus(state, later(400 * 24 * 60 * MIN))).toBe('disabled');
    expect(executable(state, later(400 * 24 * 60 * MIN))).toBe(false);
    expect(afterFailure(state, later(400 * 24 * 60 * MIN))).toBe(state);
    expect(failures(39).state.recentFailures).toBe(39);
    expect(alertStatus(failures(39).state, later(400 * 24 * 60 * MIN))).toBe('executable');
  });

  it('forgets every failure after a delivered request, an edit or a test', () => {
    expect(afterSuccess()).toEqual(NEVER_FAILED);
    expect(alertStatus(afterSuccess(), NOW)).toBe('executable');
  });

  it('disables project hooks only, as GitLab (ENABLED_HOOK_TYPES)', () => {
    expect([autoDisables('project'), autoDisables('system')]).toEqual([true, false]);
  });

  it('follows the configured base window', () => {
    const fourth = afterFailure(failures(3, 500).state, NOW, 500);
    expect(fourth.disabledUntil).toEqual(later(500));
  });
});
