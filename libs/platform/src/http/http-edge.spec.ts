import { IsDefined, IsIn, IsInt, IsOptional, IsString } from 'class-validator';
import type { Request, Response } from 'express';
import { BadParameter } from '../errors';
import { AtLeastOneOf } from './at-least-one-of';
import { validateParams } from './gitlab-params';
import { pageParams, setPaginationHeaders } from './pagination';
import { unacceptableParameter } from './request-input';
import { toBool, toInt, toStringArray, ToBool, ToInt } from './transforms';

describe('GitLab parameter coercion', () => {
  it('reads booleans as Grape does, case-insensitively', () => {
    for (const v of ['true', 'True', 'TRUE', '1', 't', 'yes', 'on', true]) expect(toBool(v)).toBe(true);
    for (const v of ['false', 'False', '0', 'f', 'no', 'off', false]) expect(toBool(v)).toBe(false);
    expect(toBool('maybe')).toBe('maybe');
  });

  it('reads integers from digit strings only', () => {
    expect(toInt('42')).toBe(42);
    expect(toInt('-3')).toBe(-3);
    expect(toInt('4x')).toBe('4x');
    expect(toInt('1e3')).toBe('1e3');
  });

  it('reads arrays from name[]=, JSON arrays and comma lists', () => {
    expect(toStringArray(['api', 'read_user'])).toEqual(['api', 'read_user']);
    expect(toStringArray('api,read_user')).toEqual(['api', 'read_user']);
    expect(toStringArray('')).toEqual([]);
  });
});

class Sample {
  @IsDefined() @IsString() name: string;
  @IsOptional() @IsIn(['public', 'private']) visibility?: string;
  @IsOptional() @ToInt() @IsInt() per_page?: number;
  @IsOptional() @ToBool() flag?: boolean;
  @IsOptional() @IsString() password?: string;
  @IsOptional() @ToBool() reset_password?: boolean;
  @AtLeastOneOf(['password', 'reset_password']) readonly _password?: never;
}

describe('validateParams: failures worded as Grape words them', () => {
  const fails = async (input: object) => {
    try {
      await validateParams(Sample, input);
    } catch (err) {
      expect(err).toBeInstanceOf(BadParameter);
      return (err as BadParameter).error;
    }
    throw new Error('expected a failure');
  };

  it('names a missing parameter', async () => {
    expect(await fails({ password: 'x' })).toBe('name is missing');
  });
  it('names an invalid value and a value outside a set', async () => {
    expect(await fails({ name: 'a', password: 'x', per_page: 'abc' })).toBe('per_page is invalid');
    expect(await fails({ name: 'a', password: 'x', visibility: 'secret' })).toBe(
      'visibility does not have a valid value',
    );
  });
  it('words at_least_one_of and joins several failures', async () => {
    expect(await fails({})).toBe(
      'name is missing, password, reset_password are missing, at least one parameter must be provided',
    );
  });
  it('coerces and drops unknown parameters', async () => {
    const ok = await validateParams(Sample, {
      name: 'a',
      reset_password: 'True',
      per_page: '5',
      flag: 'false',
      other: 'x',
    });
    expect(ok).toMatchObject({ name: 'a', reset_password: true, per_page: 5, flag: false });
    expect((ok as unknown as Record<string, unknown>).other).toBeUndefined();
  });
});

describe('pagination', () => {
  it('defaults to page 1 of 20 and clamps per_page at 100', () => {
    expect(pageParams({})).toEqual({ page: 1, perPage: 20, offset: 0 });
    expect(pageParams({ page: 3, per_page: 1000 })).toEqual({ page: 3, perPage: 100, offset: 200 });
    expect(pageParams({ page: 0, per_page: 0 })).toEqual({ page: 1, perPage: 20, offset: 0 });
  });

  function headers(
    page: number,
    perPage: number,
    total: number | null,
    url = '/api/v4/users?search=a&per_page=2',
    hasNext = false,
  ) {
    const set: Record<string, string> = {};
    const req = { originalUrl: url, protocol: 'http', get: () => 'evil.example' } as unknown as Request;
    const res = { setHeader: (k: string, v: string) => (set[k] = v) } as unknown as Response;
    const p = { page, perPage, offset: (page - 1) * perPage };
    setPaginationHeaders(req, res, p, total, 'http://lode.test:8080', hasNext);
    return set;
  }

  it('leaves out X-Total, X-Total-Pages and rel="last" on an uncounted page (GitLab past 10,000 rows)', () => {
    const h = headers(2, 2, null, '/api/v4/audit_events?per_page=2', true);
    expect(h['X-Total']).toBeUndefined();
    expect(h['X-Total-Pages']).toBeUndefined();
    expect(h).toMatchObject({ 'X-Page': '2', 'X-Next-Page': '3', 'X-Prev-Page': '1' });
    expect(h.Link).toContain('page=3>; rel="next"');
    expect(h.Link).toContain('rel="first"');
    expect(h.Link).not.toContain('rel="last"');
    expect(headers(3, 2, null, '/api/v4/audit_events', false)).toMatchObject({ 'X-Next-Page': '', 'X-Prev-Page': '2' });
  });

  it('sets GitLab headers with absolute links that keep the query', () => {
    const h = headers(2, 2, 5);
    expect(h).toMatchObject({
      'X-Total': '5',
      'X-Total-Pages': '3',
      'X-Per-Page': '2',
      'X-Page': '2',
      'X-Next-Page': '3',
      'X-Prev-Page': '1',
    });
    expect(h.Link).toBe(
      [
        '<http://lode.test:8080/api/v4/users?search=a&per_page=2&page=1>; rel="prev"',
        '<http://lode.test:8080/api/v4/users?search=a&per_page=2&page=3>; rel="next"',
        '<http://lode.test:8080/api/v4/users?search=a&per_page=2&page=1>; rel="first"',
        '<http://lode.test:8080/api/v4/users?search=a&per_page=2&page=3>; rel="last"',
      ].join(', '),
    );
  });

  it('leaves X-Next-Page and X-Prev-Page empty at the ends, and counts one page when empty', () => {
    const h = headers(1, 20, 0, '/api/v4/users');
    expect(h).toMatchObject({ 'X-Total': '0', 'X-Total-Pages': '1', 'X-Next-Page': '', 'X-Prev-Page': '' });
    expect(h.Link).not.toContain('rel="next"');
    expect(h.Link).not.toContain('rel="prev"');
  });
});

describe('input bounds', () => {
  it('reads integers only within PostgreSQL integer range', () => {
    expect(toInt('2147483647')).toBe(2147483647);
    expect(toInt('-2147483648')).toBe(-2147483648);
    expect(toInt('2147483648')).toBeNaN();
    expect(toInt(1e300)).toBeNaN();
    expect(toInt(1.5)).toBe(1.5);
  });

  it('names the parameter holding a control character or nesting too deep', () => {
    expect(unacceptableParameter({ name: 'a\tb\r\nc', tags: ['x'] })).toBeUndefined();
    expect(unacceptableParameter({ name: 'ok', description: 'a\u0000b' })).toBe('description');
    expect(unacceptableParameter({ custom_attributes: { k: ['a\u0007'] } })).toBe('custom_attributes');
    expect(unacceptableParameter({ attrs: { 'k\u0000': 'v' } })).toBe('attrs');
    let deep: unknown = 1;
    for (let i = 0; i < 3000; i++) deep = { a: deep };
    expect(unacceptableParameter({ name: deep })).toBe('name');
    let fine: unknown = 1;
    for (let i = 0; i < 10; i++) fine = { a: fine };
    expect(unacceptableParameter({ name: fine })).toBeUndefined();
  });
});
