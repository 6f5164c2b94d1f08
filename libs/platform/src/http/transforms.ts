import { Transform } from 'class-transformer';

/*
 * GitLab clients send everything as strings (query strings, forms) or as JSON: these turn the wire
 * form into the typed value, and leave anything they cannot read untouched so the validator names it.
 */

const TRUE = new Set(['1', 't', 'true', 'y', 'yes', 'on']);
const FALSE = new Set(['0', 'f', 'false', 'n', 'no', 'off']);

/** Grape's Boolean coercion, case-insensitive: python-gitlab sends `True`/`False`. */
export function toBool(value: unknown): unknown {
  if (typeof value === 'boolean') return value;
  if (typeof value === 'number') return value === 1 ? true : value === 0 ? false : value;
  if (typeof value === 'string') {
    const v = value.trim().toLowerCase();
    if (TRUE.has(v)) return true;
    if (FALSE.has(v)) return false;
  }
  return value;
}

/** PostgreSQL's `integer`, the type of every id and count column a parameter is compared with. */
export const MAX_INT = 2 ** 31 - 1;
export const MIN_INT = -(2 ** 31);

/**
 * A number or a digit string; out of PostgreSQL's `integer` range (`2147483648`, `1e300`) it becomes
 * NaN so that `@IsInt()` answers `<name> is invalid` rather than the query failing.
 */
export function toInt(value: unknown): unknown {
  const n =
    typeof value === 'number'
      ? value
      : typeof value === 'string' && /^\s*-?\d{1,15}\s*$/.test(value)
        ? Number(value)
        : undefined;
  if (n === undefined) return value;
  return Number.isInteger(n) && (n > MAX_INT || n < MIN_INT) ? NaN : n;
}

/** `name[]=a&name[]=b`, a JSON array, or `a,b` as one string. */
export function toStringArray(value: unknown): unknown {
  if (Array.isArray(value)) return (value as unknown[]).map((v) => (typeof v === 'string' ? v.trim() : v));
  if (typeof value === 'string') return value === '' ? [] : value.split(',').map((s) => s.trim());
  return value;
}

export function toIntArray(value: unknown): unknown {
  const arr = toStringArray(value);
  return Array.isArray(arr) ? arr.map(toInt) : arr;
}

/** class-transformer hands a transform the raw input typed `any`: read it as what it is, unknown. */
type Input = { value: unknown };

export const ToBool = () => Transform(({ value }: Input) => toBool(value));
export const ToInt = () => Transform(({ value }: Input) => toInt(value));
export const ToStringArray = () => Transform(({ value }: Input) => toStringArray(value));
export const ToIntArray = () => Transform(({ value }: Input) => toIntArray(value));
/** Strings only: anything else stays as it is so that `@IsString()` reports it. */
export const Trim = () => Transform(({ value }: Input) => (typeof value === 'string' ? value.trim() : value));
