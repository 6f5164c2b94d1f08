import { isDatabaseUnavailable } from './database-watch';

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
