import { Invalid } from '@app/platform';

/*
 * A user's status (GitLab 11.1; `availability` ~13.6, `clear_status_after` ~13.9): an emoji, a short
 * message, busy or not, and when it clears itself. Setting a status accrues with use, so each day's
 * changes have a stream of their own, `user-status-<id>-<yyyy-mm-dd>`, as a day's activity has: the
 * decision reads nothing of the past (the last change wins), and no stream a command folds grows.
 */

/** GitLab's `UserStatus::CLEAR_STATUS_QUICK_OPTIONS`, in seconds. */
export const CLEAR_STATUS_AFTER = {
  '30_minutes': 30 * 60,
  '3_hours': 3 * 3600,
  '8_hours': 8 * 3600,
  '1_day': 86_400,
  '3_days': 3 * 86_400,
  '7_days': 7 * 86_400,
  '30_days': 30 * 86_400,
} as const;
export type ClearStatusAfter = keyof typeof CLEAR_STATUS_AFTER;

export const AVAILABILITIES = ['not_set', 'busy'] as const;
export type Availability = (typeof AVAILABILITIES)[number];

/** GitLab's `UserStatus::DEFAULT_EMOJI`, taken when a status has a message but no emoji. */
export const DEFAULT_EMOJI = 'speech_balloon';
const MAX_MESSAGE = 100;
/** The form of GitLab's emoji names (`coffee`, `+1`, `flag_gb`); Lode keeps no list of the names themselves. */
const EMOJI_NAME = /^[a-z0-9_+-]{1,64}$/;

export type UserStatusEvent =
  | {
      type: 'UserStatusSet';
      data: {
        userId: number;
        emoji: string;
        message: string | null;
        availability: Availability;
        clearStatusAt: string | null;
        at: string;
      };
    }
  | { type: 'UserStatusCleared'; data: { userId: number; at: string } };

/** The stream of a user's status changes on the day of `now` (UTC). */
export const userStatusStream = (userId: number, now: Date): string =>
  `user-status-${userId}-${now.toISOString().slice(0, 10)}`;

/** Nothing of the past is decided on; the fold only counts, so the decider has the usual shape. */
export type UserStatusChanges = { count: number };
export const initial = (): UserStatusChanges => ({ count: 0 });
export const evolve = (s: UserStatusChanges, _e: UserStatusEvent): UserStatusChanges => ({ count: s.count + 1 });
export const userStatusDecider = { initial, evolve };

export interface StatusInput {
  emoji?: string | null;
  message?: string | null;
  availability?: string | null;
  clearStatusAfter?: ClearStatusAfter | null;
}

const blank = (v: string | null | undefined): boolean => v === undefined || v === null || v.trim() === '';

/**
 * GitLab's `Users::SetStatusService` on `PUT /user/status` (every parameter, a missing one as nil):
 * emoji, message and availability all blank clear the status; otherwise a blank emoji is
 * `speech_balloon`, a blank availability `not_set`, and a missing `clear_status_after` keeps none.
 * The model's checks answer `{"message":{"<field>":[...]}}`.
 */
export function setStatus(_s: UserStatusChanges, userId: number, input: StatusInput, now: Date): UserStatusEvent[] {
  const at = now.toISOString();
  if (blank(input.emoji) && blank(input.message) && blank(input.availability))
    return [{ type: 'UserStatusCleared', data: { userId, at } }];
  const errors: Record<string, string[]> = {};
  const emoji = blank(input.emoji) ? DEFAULT_EMOJI : input.emoji!.trim();
  if (!EMOJI_NAME.test(emoji)) errors.emoji = ['is not a valid emoji name'];
  const message = blank(input.message) ? null : input.message!;
  if (message !== null && message.length > MAX_MESSAGE)
    errors.message = [`is too long (maximum is ${MAX_MESSAGE} characters)`];
  const availability = blank(input.availability) ? 'not_set' : input.availability!;
  if (!(AVAILABILITIES as readonly string[]).includes(availability))
    errors.availability = ['is not included in the list'];
  if (Object.keys(errors).length) throw new Invalid(errors);
  const clearStatusAt = input.clearStatusAfter
    ? new Date(now.getTime() + CLEAR_STATUS_AFTER[input.clearStatusAfter] * 1000).toISOString()
    : null;
  return [
    {
      type: 'UserStatusSet',
      data: { userId, emoji, message, availability: availability as Availability, clearStatusAt, at },
    },
  ];
}
