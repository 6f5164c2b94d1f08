// A seeded request fuzzer: requests over every route with the values that used to make 500s (NUL
// and control characters, ids above 2^31-1, 1e300, null, deep nesting, wrong types, long strings,
// malformed multipart, bad Host headers). The same seed gives the same requests. Used by
// test/e2e/fuzz.e2e-spec.ts (a short run) and bench/fuzz.mjs (a long one).
import { request as httpRequest } from 'node:http';

/** mulberry32: small, fast and deterministic. */
export function prng(seed) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const int = (n) => Math.floor(next() * n);
  const pick = (arr) => arr[int(arr.length)];
  const chance = (p) => next() < p;
  return { next, int, pick, chance };
}

/**
 * The routes of a Nest application on Express 5 (`{ method, path }`, path as Express declares it,
 * `/api/v4/users/:id`), plus git's smart HTTP, which a middleware serves outside the router.
 */
const METHODS = new Set(['get', 'post', 'put', 'patch', 'delete', 'head']);

export function routesOf(app) {
  const express = app.getHttpAdapter().getInstance();
  const stack = express.router?.stack ?? express._router?.stack ?? [];
  const routes = [];
  for (const layer of stack) {
    const route = layer.route;
    if (!route) continue;
    const methods = Object.keys(route.methods ?? {}).filter((m) => route.methods[m] && METHODS.has(m));
    for (const m of methods) routes.push({ method: m.toUpperCase(), path: route.path });
  }
  routes.push(
    { method: 'GET', path: '/:namespace/:project.git/info/refs' },
    { method: 'POST', path: '/:namespace/:project.git/git-upload-pack' },
    { method: 'POST', path: '/:namespace/:project.git/git-receive-pack' },
  );
  return routes;
}

const NUL = 'a\u0000b';
const deep = (levels, leaf = 1) => {
  let v = leaf;
  for (let i = 0; i < levels; i++) v = { a: v };
  return v;
};
const deepJson = (levels) => '{"a":'.repeat(levels) + '1' + '}'.repeat(levels);

/** Values for a path segment (already URL-encoded where they need to be). */
const PATH_VALUES = [
  '1',
  '2',
  '3',
  '0',
  '-1',
  '2147483647',
  '2147483648',
  '4294967296',
  '99999999999999',
  '999999999999999999999999',
  '1e300',
  'null',
  'true',
  'a%00b',
  '%00',
  '%01%1F',
  '%7F',
  'root',
  'fuzz-group',
  'fuzz-group%2Ffuzz-project',
  'root%2Ffuzz-root',
  '%2E%2E',
  'x'.repeat(300),
  encodeURIComponent('é✓𝄞'),
  '%E0%A4%A',
  '%ZZ',
  '%ED%A0%80',
  'master',
  'a.b',
];

/** Values for a query string or form field (raw; encoded when sent). */
const STRING_VALUES = [
  '',
  ' ',
  'x',
  NUL,
  '\u0000',
  'a\u0007b',
  'a\u001bb',
  'a\u007fb',
  'tab\tnew\nline\r',
  '2147483648',
  '-2147483649',
  '99999999999999',
  '1e300',
  '-1',
  '0',
  '1',
  'true',
  'false',
  'null',
  'NaN',
  'Infinity',
  'x'.repeat(5000),
  'é✓𝄞',
  '\ud800',
  '%00',
  '../../etc/passwd',
  "' or 1=1 --",
  'public',
  'private',
  'internal',
  'name',
  'id',
  'asc',
  '2020-01-01',
  '9999-99-99',
  'root',
  'api',
];

/** Values for a JSON field. */
function jsonValue(r) {
  switch (r.int(22)) {
    case 0:
      return null;
    case 1:
      return 2147483648;
    case 2:
      return 1e300;
    case 3:
      return -1;
    case 4:
      return 1e20;
    case 5:
      return 1.5;
    case 6:
      return true;
    case 7:
      return [];
    case 8:
      return {};
    case 9:
      return [NUL, 1, null];
    case 10:
      return { k: NUL };
    case 11:
      return { [NUL]: 'v' };
    case 12:
      return deep(r.pick([10, 63, 64, 65, 200]));
    case 13:
      return 'x'.repeat(r.pick([256, 5000, 100_000]));
    case 14:
      return [2147483648, -1, 'a'];
    case 15:
      return 0;
    case 16:
      return 1;
    default:
      return r.pick(STRING_VALUES);
  }
}

/** Parameter names GitLab's routes take (and a few they do not). */
const NAMES = [
  'id',
  'name',
  'path',
  'description',
  'visibility',
  'lfs_enabled',
  'request_access_enabled',
  'parent_id',
  'namespace_id',
  'namespace',
  'user_id',
  'group_id',
  'access_level',
  'group_access',
  'expires_at',
  'page',
  'per_page',
  'search',
  'username',
  'email',
  'password',
  'reset_password',
  'skip_confirmation',
  'admin',
  'can_create_group',
  'projects_limit',
  'external',
  'sudo',
  'private_token',
  'order_by',
  'sort',
  'owned',
  'membership',
  'statistics',
  'simple',
  'archived',
  'skip_groups',
  'all_available',
  'custom_attributes',
  'value',
  'key',
  'title',
  'url',
  'token',
  'push_events',
  'enable_ssl_verification',
  'scopes',
  'tag_list',
  'default_branch',
  'import_url',
  'ref',
  'ref_name',
  'sha',
  'from',
  'to',
  'straight',
  'recursive',
  'file_path',
  'format',
  'active',
  'blocked',
  'login',
  'state',
  'bio',
  'location',
  'organization',
  'file',
  'avatar',
  'forked_from_id',
  'with_shared',
  'min_access_level',
];

/** encodeURIComponent, and a lone surrogate as the bytes a client would send anyway. */
const enc = (s) => {
  try {
    return encodeURIComponent(s);
  } catch {
    return '%ED%A0%80';
  }
};

function queryString(r) {
  const parts = [];
  const n = r.int(4);
  for (let i = 0; i < n; i++) {
    const name = r.pick(NAMES);
    const v = r.chance(0.1) ? r.pick(['1', '2147483648', NUL]) : r.pick(STRING_VALUES);
    if (r.chance(0.15)) parts.push(`${name}[]=${enc(v)}`);
    else if (r.chance(0.1)) parts.push(`${name}[k]=${enc(v)}`);
    else if (r.chance(0.05)) parts.push(`${name}${'[a]'.repeat(40)}=1`);
    else parts.push(`${enc(name)}=${enc(v)}`);
  }
  if (r.chance(0.05)) parts.push('%00=%00');
  return parts.length ? `?${parts.join('&')}` : '';
}

/** A plausible value for a parameter, so that requests also get past validation into the handlers. */
function benign(r, name) {
  if (/(^|_)id$|_level$|access$|^page|limit$/.test(name)) return r.pick([1, 2, 3, 10, 30, 40, 50]);
  if (/enabled$|^(admin|external|owned|membership|simple|archived|statistics|blocked|active)$/.test(name))
    return r.chance(0.5);
  if (name === 'visibility') return r.pick(['public', 'internal', 'private']);
  if (name === 'scopes') return ['api'];
  if (name === 'email') return `fuzz${r.int(1e6)}@example.com`;
  return `fuzz-${r.int(1e6)}`;
}

function jsonObject(r) {
  const o = {};
  const n = 1 + r.int(5);
  const nasty = r.chance(0.5) ? 1 : n;
  for (let i = 0; i < n; i++) {
    const name = r.pick(NAMES);
    o[name] = i < nasty ? jsonValue(r) : benign(r, name);
  }
  return o;
}

/** A body and its headers: JSON (well-formed or not), a form, or multipart (well-formed or not). */
function body(r) {
  const kind = r.int(14);
  if (kind <= 5) return { type: 'application/json', data: JSON.stringify(jsonObject(r)) };
  switch (kind) {
    case 6:
      return { type: 'application/json', data: `{"name":${deepJson(r.pick([65, 3000, 20000]))}}` };
    case 7:
      return { type: 'application/json', data: r.pick(['{"a":', 'null', '[]', '"x"', '1e300', '{"page":1e300}', '']) };
    case 8: {
      const o = jsonObject(r);
      const form = Object.entries(o)
        .map(([k, v]) => `${enc(k)}=${enc(typeof v === 'string' ? v : JSON.stringify(v))}`)
        .join('&');
      return { type: 'application/x-www-form-urlencoded', data: form };
    }
    case 9: {
      const b = `fuzz${r.int(1e6)}`;
      const name = r.pick(NAMES);
      const value = typeof jsonValue(r) === 'string' ? r.pick(STRING_VALUES) : 'v';
      const file = r.chance(0.5)
        ? `--${b}\r\nContent-Disposition: form-data; name="${r.pick(['file', 'avatar'])}"; filename="${r.pick(['a.png', 'a\u0001.png', '../x', 'x'.repeat(300)])}"\r\nContent-Type: image/png\r\n\r\n\u0089PNG\r\n\u001a\n\r\n`
        : '';
      return {
        type: `multipart/form-data; boundary=${b}`,
        data: `--${b}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n${file}--${b}--\r\n`,
      };
    }
    case 10: {
      const b = 'trunc';
      return {
        type: `multipart/form-data; boundary=${b}`,
        data: `--${b}\r\nContent-Disposition: form-data; name="name"\r\n\r\nvalue`,
      };
    }
    case 11:
      return { type: 'multipart/form-data', data: 'name=x' };
    case 12:
      return {
        type: r.pick(['text/plain', 'application/xml', 'application/octet-stream']),
        data: '\u0000\u0001binary',
      };
    default:
      return { type: 'application/json; charset=utf-16', data: '{}' };
  }
}

/** One request, from the seed's next values. */
export function generate(r, routes, tokens) {
  const route = r.pick(routes);
  let path = route.path.replace(/\*(\w+)/g, () => r.pick(['root/fuzz-root', 'fuzz-group/fuzz-project', 'a%00b', 'x']));
  path = path.replace(/:(\w+)/g, () => r.pick(PATH_VALUES));
  // Root (user 1) must keep its token, and stay unblocked and an administrator, for the whole run.
  if (route.method !== 'GET' && route.method !== 'HEAD') path = path.replace(/\/users\/1(\/|$)/, '/users/2$1');
  if (route.method === 'DELETE')
    path = path.replace(/\/personal_access_tokens\/1(\/|$)/, '/personal_access_tokens/2$1');
  path = path.replace('/personal_access_tokens/self', '/personal_access_tokens/2');
  path += queryString(r);
  const headers = {};
  const token = r.pick(tokens);
  if (token) headers['PRIVATE-TOKEN'] = token;
  if (r.chance(0.05)) headers.Sudo = r.pick(['2147483648', '99999999999999', 'nobody', '1', '%00', '1e300']);
  if (r.chance(0.05)) headers.Host = r.pick(['bad host^{}', 'evil.example', '[::1', '%00', 'a'.repeat(300)]);
  let data;
  const bodied =
    route.method === 'HEAD'
      ? false
      : route.method === 'GET' || route.method === 'DELETE'
        ? r.chance(0.15)
        : r.chance(0.9);
  if (bodied) {
    const b = body(r);
    headers['Content-Type'] = b.type;
    data = b.data;
  }
  return { method: route.method, path, headers, data, route: `${route.method} ${route.path}` };
}

function send(port, req, timeoutMs) {
  return new Promise((resolve) => {
    const out = httpRequest(
      // A long query is repeated four times in `Link` (GitLab keeps every parameter), past Node's
      // default 16 KB of response headers.
      {
        host: '127.0.0.1',
        port,
        method: req.method,
        path: req.path,
        headers: req.headers,
        agent: false,
        maxHeaderSize: 256 * 1024,
      },
      (res) => {
        const chunks = [];
        res.on('data', (c) => chunks.push(c));
        res.on('end', () =>
          resolve({ status: res.statusCode, type: res.headers['content-type'], body: Buffer.concat(chunks) }),
        );
        res.on('error', (e) => resolve({ status: 0, error: String(e) }));
      },
    );
    out.setTimeout(timeoutMs, () => out.destroy(new Error(`no answer in ${timeoutMs} ms`)));
    out.on('error', (e) => resolve({ status: 0, error: String(e) }));
    if (req.data !== undefined) out.write(req.data);
    out.end();
  });
}

/**
 * Sends `requests` requests (seeded) to 127.0.0.1:`port`, `concurrency` at a time. A failure is a
 * status >= 500, no answer, or an error status (>= 400) whose body is not JSON.
 */
export async function fuzz({
  port,
  routes,
  tokens,
  requests,
  seed = 1,
  concurrency = 8,
  timeoutMs = 15_000,
  onProgress,
}) {
  const r = prng(seed);
  const all = Array.from({ length: requests }, () => generate(r, routes, tokens));
  const failures = [];
  const statuses = {};
  let done = 0;
  const worker = async () => {
    for (;;) {
      const req = all[done++];
      if (!req) return;
      const res = await send(port, req, timeoutMs);
      statuses[res.status] = (statuses[res.status] ?? 0) + 1;
      const problem = check(req, res);
      if (problem)
        failures.push({
          problem,
          request: describe(req),
          status: res.status,
          body: res.body?.toString().slice(0, 300),
        });
      if (onProgress && done % 1000 === 0) onProgress(done, failures.length);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  return { requests, statuses, failures };
}

function check(req, res) {
  if (res.status === 0) return `no answer: ${res.error}`;
  if (res.status >= 500) return `status ${res.status}`;
  // Git's smart HTTP answers as git clients expect (`HTTP Basic: Access denied` in text, as GitLab's).
  if (res.status >= 400 && req.method !== 'HEAD' && !/\.git\//.test(req.path)) {
    if (res.type !== 'application/json') return `error body not application/json (${res.type})`;
    try {
      JSON.parse(res.body.toString());
    } catch {
      return 'error body is not JSON';
    }
  }
  return undefined;
}

function describe(req) {
  const data =
    req.data === undefined ? '' : ` ${req.headers['Content-Type']} ${JSON.stringify(req.data.slice(0, 200))}`;
  return `${req.method} ${req.path.slice(0, 300)} [${req.route}]${req.headers.Host ? ` Host: ${req.headers.Host}` : ''}${data}`;
}
