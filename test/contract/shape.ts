import { readFileSync } from 'node:fs';
import { join } from 'node:path';

type FieldType = 'integer' | 'string' | 'boolean' | 'array' | 'object' | 'null';

const cache = new Map<string, Record<string, string>>();

function schema(name: string): Record<string, string> {
  let s = cache.get(name);
  if (!s) {
    const file = join(process.cwd(), 'test', 'contract', 'schemas', `${name}.json`);
    s = (JSON.parse(readFileSync(file, 'utf8')) as { fields: Record<string, string> }).fields;
    cache.set(name, s);
  }
  return s;
}

function typeOf(v: unknown): FieldType {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  if (Number.isInteger(v)) return 'integer';
  return typeof v as FieldType;
}

/**
 * The body has exactly the keys of GitLab's shape `name` (test/contract/schemas/<name>.json), each
 * of an allowed type. Returns a list of differences, empty when it matches.
 */
export function shapeDifferences(body: unknown, name: string): string[] {
  const fields = schema(name);
  if (typeOf(body) !== 'object') return [`expected an object, got ${typeOf(body)}`];
  const obj = body as Record<string, unknown>;
  const out: string[] = [];
  for (const k of Object.keys(fields)) if (!(k in obj)) out.push(`missing ${k}`);
  for (const k of Object.keys(obj)) if (!(k in fields)) out.push(`unexpected ${k}`);
  for (const [k, types] of Object.entries(fields)) {
    if (k in obj && !types.split('|').includes(typeOf(obj[k])))
      out.push(`${k} is ${typeOf(obj[k])}, expected ${types}`);
  }
  return out;
}

/** Jest-friendly: `expectShape(res.body, 'user-admin')`. */
export function expectShape(body: unknown, name: string): void {
  const diff = shapeDifferences(body, name);
  if (diff.length)
    throw new Error(`response does not match ${name}: ${diff.join('; ')}\n${JSON.stringify(body, null, 2)}`);
}
