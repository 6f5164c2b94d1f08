/*
 * The day a user was last active (authenticated through the API, later cloned or pushed).
 * At most one event a day, on a stream of that day, `user-activity-<id>-<yyyy-mm-dd>`: apart from
 * the user's own stream, so recording the day never clashes with an administrator editing the user,
 * and a stream of its own per day, so the decision folds at most one event however long the user has
 * been active (one stream per user grew by an event a day, for ever). Events of installations older
 * than this are on `user-activity-<id>`, which nothing folds any more: on the day of the upgrade a
 * user's activity may be recorded once more, which the projection takes as the same day.
 */

/** The stream of a user's activity on one day (UTC, as GitLab's `last_activity_on`). */
export const userActivityStream = (userId: number, on: string): string => `user-activity-${userId}-${on}`;

/** The day of `now` as `last_activity_on` shows it. */
export const activityDay = (now: Date): string => now.toISOString().slice(0, 10);

export type UserActivityEvent = { type: 'UserActivityRecorded'; data: { userId: number; on: string; at: string } };

export type UserActivity = { lastOn: string | null };

export const initial = (): UserActivity => ({ lastOn: null });
export const evolve = (_: UserActivity, e: UserActivityEvent): UserActivity => ({ lastOn: e.data.on });
export const userActivityDecider = { initial, evolve };

export function recordActivity(s: UserActivity, userId: number, now: Date): UserActivityEvent[] {
  const on = activityDay(now);
  return s.lastOn !== null && s.lastOn >= on
    ? []
    : [{ type: 'UserActivityRecorded', data: { userId, on, at: now.toISOString() } }];
}
