import { evolve, initial, recordActivity, type UserActivity, type UserActivityEvent } from './user-activity';

const USER = 7;
const given = (...events: UserActivityEvent[]): UserActivity => events.reduce(evolve, initial());
const recorded = (on: string): UserActivityEvent => ({
  type: 'UserActivityRecorded',
  data: { userId: USER, on, at: `${on}T10:00:00.000Z` },
});

describe('recordActivity', () => {
  it('records the first activity ever, with its day in UTC', () => {
    const now = new Date('2024-05-06T23:59:59.999Z');
    expect(recordActivity(initial(), USER, now)).toEqual([
      { type: 'UserActivityRecorded', data: { userId: USER, on: '2024-05-06', at: now.toISOString() } },
    ]);
  });

  it('records nothing more on the same day', () => {
    expect(recordActivity(given(recorded('2024-05-06')), USER, new Date('2024-05-06T00:00:00.000Z'))).toEqual([]);
    expect(recordActivity(given(recorded('2024-05-06')), USER, new Date('2024-05-06T23:59:59.999Z'))).toEqual([]);
  });

  it('records again on the next day', () => {
    const now = new Date('2024-05-07T00:00:00.000Z');
    expect(recordActivity(given(recorded('2024-05-06')), USER, now)).toEqual([
      { type: 'UserActivityRecorded', data: { userId: USER, on: '2024-05-07', at: now.toISOString() } },
    ]);
  });

  it('records across a year boundary', () => {
    expect(recordActivity(given(recorded('2023-12-31')), USER, new Date('2024-01-01T00:00:01.000Z'))).toHaveLength(1);
  });

  // A clock that steps back (another process, a little behind) must not move the day backwards.
  it('records nothing for a day before the last one', () => {
    expect(recordActivity(given(recorded('2024-05-06')), USER, new Date('2024-05-05T12:00:00.000Z'))).toEqual([]);
  });

  it('gives at most one event a day over many calls', () => {
    let s = initial();
    let count = 0;
    for (let minute = 0; minute < 3 * 24 * 60; minute += 7) {
      const events = recordActivity(s, USER, new Date(Date.UTC(2024, 4, 6, 0, minute)));
      count += events.length;
      s = events.reduce(evolve, s);
    }
    expect(count).toBe(3);
    expect(s).toEqual({ lastOn: '2024-05-08' });
  });
});
