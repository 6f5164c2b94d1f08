/*
 * The day a user was last active (authenticated through the API, later cloned or pushed).
 * Stream `user-activity-<id>`, apart from the user's own, so that recording the day never clashes
 * with an administrator editing the user. At most one event a day.
 */

export type UserActivityEvent = { type: 'UserActivityRecorded'; data: { userId: number; on: string; at: string } };

export type UserActivity = { lastOn: string | null };

export const initial = (): UserActivity => ({ lastOn: null });
export const evolve = (_: UserActivity, e: UserActivityEvent): UserActivity => ({ lastOn: e.data.on });
export const userActivityDecider = { initial, evolve };

export function recordActivity(s: UserActivity, userId: number, now: Date): UserActivityEvent[] {
  const on = now.toISOString().slice(0, 10);
  return s.lastOn !== null && s.lastOn >= on
    ? []
    : [{ type: 'UserActivityRecorded', data: { userId, on, at: now.toISOString() } }];
}
