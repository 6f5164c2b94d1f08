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

export function toInt(value: unknown): unknown {
  if (typeof value === 'number') return value;
  if (typeof value === 'string' && /^\s*-?\d{1,15}\s*$/.test(value)) return Number(value);
  return value;
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
