import { isDatabaseUnavailable, SlowestRecently } from './database-watch';

describe('isDatabaseUnavailable', () => {
  it('knows the errors of a PostgreSQL that cannot be reached or does not answer in time', () => {
    for (const err of [
      new Error('timeout exceeded when trying to connect'),
      new Error('Connection terminated unexpectedly'),
      new Error('Connection terminated due to connection timeout'),
      new Error('Query read timeout'),
      Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' }),
      Object.assign(new Error('canceling statement due to statement timeout'), { code: '57014' }),
      Object.assign(new Error('the database system is shutting down'), { code: '57P03' }),
      Object.assign(new Error('terminating connection due to administrator command'), { code: '57P01' }),
      Object.assign(new Error('connection failure'), { code: '08006' }),
      Object.assign(new Error('sorry, too many clients already'), { code: '53300' }),
      Object.assign(new Error('the embedded database was busy for 30 s'), { code: '55P03' }),
    ])
      expect([err.message, isDatabaseUnavailable(err)]).toEqual([err.message, true]);
  });

  it('leaves a bad statement or a constraint to the usual answers', () => {
    for (const err of [
      Object.assign(new Error('duplicate key value violates unique constraint'), { code: '23505' }),
      Object.assign(new Error('syntax error at or near "selec"'), { code: '42601' }),
      new Error('something else'),
      undefined,
      'a string',
    ])
      expect(isDatabaseUnavailable(err)).toBe(false);
  });
});

describe('SlowestRecently', () => {
  it('answers the largest value of the last slots, and forgets what is older', () => {
    const recent = new SlowestRecently(5000, 6);
    expect(recent.slowest(0)).toBe(0);
    recent.note(40, 1000);
    recent.note(900, 2000);
    recent.note(30, 7000);
    expect(recent.slowest(7000)).toBe(900);
    // Slot 0 (0-5 s) is still inside the six slots ending in slot 5 (25-30 s), not in slot 6.
    expect(recent.slowest(29_999)).toBe(900);
    expect(recent.slowest(30_000)).toBe(30);
    // A slot's entry is reused for its next turn: what it held before does not count there.
    recent.note(10, 31_000);
    expect(recent.slowest(31_000)).toBe(30);
    expect(recent.slowest(60_000)).toBe(0);
  });
});
