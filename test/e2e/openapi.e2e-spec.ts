import type { INestApplication } from '@nestjs/common';
import { SwaggerModule } from '@nestjs/swagger';
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import {
  clearRedis,
  dropDatabase,
  eventually,
  startTestApp,
  TEST_PG,
  TEST_REDIS,
  type TestApp,
} from '../support/test-app';
import { createUser, type SeededUser } from '../support/seed';

/* eslint-disable @typescript-eslint/no-explicit-any -- the document is JSON, read by walking it */

const ROOT = process.cwd();
const METADATA_DIR = join(ROOT, 'dist', 'openapi-metadata');
const MAIN = join(ROOT, 'dist/apps/lode/src/main.js');
const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'head'] as const;

/** What the document serves itself: its own JSON and the reference page with its assets. */
const isDocumentation = (path: string) => path === '/api/v4/openapi.json' || path.startsWith('/api/docs');

/**
 * Every route Express holds, as bench/fuzz-core.mjs `routesOf` reads them, less the `all()` routes Nest
 * adds on the paths outside the `/api/v4` prefix (its not-found answer for the other methods).
 */
function registeredRoutes(app: INestApplication): { method: string; path: string }[] {
  const express = app.getHttpAdapter().getInstance();
  const stack: any[] = express.router?.stack ?? express._router?.stack ?? [];
  const out: { method: string; path: string }[] = [];
  for (const layer of stack) {
    const route = layer.route;
    // Express 5's all() enters every method of http.METHODS, the obscure ones (ACL, M-SEARCH) too.
    if (!route || route.methods._all || route.methods.acl) continue;
    for (const m of Object.keys(route.methods)) if (route.methods[m]) out.push({ method: m, path: route.path });
  }
  return out;
}

/** Express's `:id` and `*path` are OpenAPI's `{id}` and `{path}`. */
const openApiPath = (path: string) => path.replace(/[:*](\w+)/g, '{$1}');

function resolvePointer(doc: any, ref: string): unknown {
  if (!ref.startsWith('#/')) return undefined;
  let node = doc;
  for (const part of ref.slice(2).split('/')) {
    node = node?.[part.replace(/~1/g, '/').replace(/~0/g, '~')];
    if (node === undefined) return undefined;
  }
  return node;
}

function refsOf(node: unknown, out: string[] = []): string[] {
  if (Array.isArray(node)) for (const n of node) refsOf(n, out);
  else if (node && typeof node === 'object')
    for (const [k, v] of Object.entries(node)) {
      if (k === '$ref' && typeof v === 'string') out.push(v);
      else refsOf(v, out);
    }
  return out;
}

function operations(doc: any): { method: string; path: string; op: any }[] {
  return Object.entries<any>(doc.paths).flatMap(([path, item]) =>
    METHODS.filter((m) => item[m]).map((method) => ({ method, path, op: item[method] })),
  );
}

/** Where two JSON values differ, as paths (`paths./api/v4/users.post`), down to a few levels. */
function differences(a: any, b: any, at = '', depth = 4): string[] {
  if (JSON.stringify(a) === JSON.stringify(b)) return [];
  if (!depth || !a || !b || typeof a !== 'object' || typeof b !== 'object') return [at || '(root)'];
  const keys = [...new Set([...Object.keys(a), ...Object.keys(b)])];
  return keys.flatMap((k) => differences(a[k], b[k], at ? `${at}.${k}` : k, depth - 1));
}

const typeOfValue = (v: unknown) =>
  v === null ? 'null' : Array.isArray(v) ? 'array' : Number.isInteger(v) ? 'integer' : typeof v;

/**
 * What of `value` the schema does not describe: a key the schema's `properties` lack (unless
 * `additionalProperties` is a schema, which then describes it), or a value of a type it does not
 * allow; nested objects and array items are walked where the schema describes them. `oneOf`/`anyOf`
 * describe a value when one alternative does. Empty when every field is described.
 */
function undescribed(doc: any, value: unknown, schema: any, at: string): string[] {
  while (schema?.$ref) schema = resolvePointer(doc, schema.$ref);
  if (!schema) return [`${at}: no schema`];
  const alternatives = schema.oneOf ?? schema.anyOf;
  if (alternatives) {
    const tries = alternatives.map((alt: any) => undescribed(doc, value, alt, at));
    return tries.some((p: string[]) => !p.length)
      ? []
      : tries.reduce((a: string[], b: string[]) => (b.length < a.length ? b : a));
  }
  const actual = typeOfValue(value);
  if (schema.type !== undefined) {
    const allowed: string[] = Array.isArray(schema.type) ? schema.type : [schema.type];
    const ok = allowed.includes(actual) || (actual === 'integer' && allowed.includes('number'));
    if (!ok) return [`${at} is ${actual}, the schema says ${allowed.join('|')}`];
  }
  if (actual === 'array' && schema.items)
    return (value as unknown[]).flatMap((item, i) => undescribed(doc, item, schema.items, `${at}[${i}]`));
  if (actual === 'object' && (schema.properties || schema.additionalProperties !== undefined)) {
    const out: string[] = [];
    for (const [key, v] of Object.entries(value as object)) {
      const field = schema.properties?.[key];
      if (field) out.push(...undescribed(doc, v, field, `${at}.${key}`));
      else if (schema.additionalProperties && typeof schema.additionalProperties === 'object')
        out.push(...undescribed(doc, v, schema.additionalProperties, `${at}.${key}`));
      else if (schema.additionalProperties !== true) out.push(`${at}.${key} is not in the schema`);
    }
    return out;
  }
  return [];
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/**
 * @swc/jest runs no TypeScript plugin, so the sources it compiles carry none of the swagger plugin's
 * DTO descriptions: the suite generates them as a module (scripts/openapi-metadata.mjs, the plugin's
 * own visitors and nest-cli.json's options) and loads it, as @nestjs/swagger documents for SWC builds.
 * The last test checks that the built dist/, which the plugin compiled, serves the same document.
 */
describe('OpenAPI document', () => {
  let t: TestApp;
  let doc: any;

  beforeAll(async () => {
    execFileSync(process.execPath, [join(ROOT, 'scripts/openapi-metadata.mjs'), METADATA_DIR], { stdio: 'pipe' });
    const metadata = (await import(pathToFileURL(join(METADATA_DIR, 'metadata.ts')).href)) as {
      default: () => Promise<Record<string, any>>;
    };
    await SwaggerModule.loadPluginMetadata(metadata.default);
    // Local receivers allowed: the answers test saves a hook to 127.0.0.1.
    t = await startTestApp({ allowLocalWebhooks: true });
    const res = await t
      .http()
      .get('/api/v4/openapi.json')
      .expect(200)
      .expect('Content-Type', /application\/json/);
    doc = res.body;
  }, 120_000);
  afterAll(async () => {
    await t?.close();
  });

  it('describes every route Nest registers', () => {
    const routes = registeredRoutes(t.app).filter((r) => !isDocumentation(r.path));
    expect(routes.length).toBeGreaterThan(100);
    const missing = routes
      .filter((r) => !doc.paths[openApiPath(r.path)]?.[r.method])
      .map((r) => `${r.method.toUpperCase()} ${r.path}`);
    expect(missing).toEqual([]);
    // And nothing the server does not answer.
    const served = new Set(routes.map((r) => `${r.method} ${openApiPath(r.path)}`));
    expect(operations(doc).filter((o) => !served.has(`${o.method} ${o.path}`))).toEqual([]);
  });

  it('is a well-formed OpenAPI 3.1 document', () => {
    expect(doc.openapi).toBe('3.1.0');
    expect(typeof doc.info.title).toBe('string');
    expect(doc.info.version).toBe((JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as any).version);
    expect(Object.keys(doc.paths).length).toBeGreaterThan(50);

    const unresolved = refsOf(doc).filter((ref) => resolvePointer(doc, ref) === undefined);
    expect([...new Set(unresolved)]).toEqual([]);

    const problems: string[] = [];
    const ids = new Set<string>();
    for (const { method, path, op } of operations(doc)) {
      const where = `${method.toUpperCase()} ${path}`;
      if (!op.operationId || ids.has(op.operationId)) problems.push(`${where}: operationId ${op.operationId}`);
      ids.add(op.operationId);
      const inPath = (op.parameters ?? []).filter((p: any) => p.in === 'path');
      for (const [, name] of path.matchAll(/\{(\w+)\}/g))
        if (!inPath.some((p: any) => p.name === name && p.required === true))
          problems.push(`${where}: path parameter ${name} not declared`);
      for (const p of op.parameters ?? [])
        if (!p.name || !['path', 'query', 'header', 'cookie'].includes(p.in) || !p.schema)
          problems.push(`${where}: parameter ${JSON.stringify(p)}`);
      const success = Object.keys(op.responses ?? {}).filter((s) => /^2\d\d$/.test(s));
      if (success.length !== 1) problems.push(`${where}: success statuses ${success.join(',')}`);
      const answer = op.responses?.[success[0]];
      if (typeof answer?.description !== 'string') problems.push(`${where}: no description`);
      // Every answer with a body names its schema.
      const empty = success[0] === '204' || method === 'head' || method === 'delete';
      if (!empty && !refsOf(answer?.content).length && !answer?.content?.['application/octet-stream'])
        if (!Object.values<any>(answer?.content ?? {}).some((c) => c.schema?.format === 'binary'))
          problems.push(`${where}: no response schema`);
      if (['post', 'put'].includes(method) && op.requestBody) {
        const types = Object.keys(op.requestBody.content ?? {});
        if (!types.includes('multipart/form-data')) problems.push(`${where}: body types ${types.join(',')}`);
      }
    }
    expect(problems).toEqual([]);

    expect(doc.components.securitySchemes.private_token).toMatchObject({
      type: 'apiKey',
      in: 'header',
      name: 'PRIVATE-TOKEN',
    });
    expect(doc.security).toEqual(expect.arrayContaining([{ private_token: [] }, {}]));
  });

  it('takes parameters and bodies from the DTOs and their class-validator decorators', () => {
    const createUser = doc.paths['/api/v4/users'].post.requestBody.content;
    expect(createUser['application/json'].schema).toEqual({ $ref: '#/components/schemas/CreateUserDto' });
    expect(createUser['application/x-www-form-urlencoded'].schema).toEqual(createUser['application/json'].schema);
    const dto = doc.components.schemas.CreateUserDto;
    expect(dto.required).toEqual(expect.arrayContaining(['email', 'name', 'username']));
    expect(dto.properties.reset_password).toEqual({ type: 'boolean' });
    // The cross-field check `_password` (password or reset_password) is no parameter.
    expect(dto.properties._password).toBeUndefined();

    const tags = doc.paths['/api/v4/projects/{id}/repository/tags'].get;
    const param = (name: string) => tags.parameters.find((p: any) => p.name === name);
    expect(param('order_by')).toMatchObject({ in: 'query', required: false, schema: { enum: ['name', 'updated'] } });
    expect(param('per_page')).toMatchObject({ in: 'query', schema: { type: 'number' } });
    expect(param('id')).toMatchObject({ in: 'path', required: true });

    // A handler that validates its parameters itself names its DTO.
    const release = doc.paths['/api/v4/projects/{id}/repository/tags/{tag_name}/release'].post;
    expect(release.requestBody.content['application/json'].schema).toEqual({
      $ref: '#/components/schemas/TagReleaseDto',
    });
    expect(doc.components.schemas.TagReleaseDto.required).toEqual(['description']);
  });

  it("answers with GitLab's shapes as the contract tests hold the serializers to them", () => {
    const ok = doc.paths['/api/v4/projects/{id}/repository/tags'].get.responses['200'];
    expect(ok.content['application/json'].schema).toEqual({
      type: 'array',
      items: { $ref: '#/components/schemas/Tag' },
    });
    const contract = JSON.parse(readFileSync(join(ROOT, 'test/contract/schemas/tag.json'), 'utf8')) as any;
    const tag = doc.components.schemas.Tag;
    expect(Object.keys(tag.properties).sort()).toEqual(Object.keys(contract.fields).sort());
    expect(tag.properties.message).toEqual({ type: ['null', 'string'] });
    expect(tag.additionalProperties).toBe(false);

    expect(doc.paths['/api/v4/users'].post.responses['201'].content['application/json'].schema).toEqual({
      $ref: '#/components/schemas/UserAdmin',
    });
    expect(doc.paths['/api/v4/projects/{id}/repository/tags/{tag_name}'].delete.responses['204']).toBeDefined();
    expect(doc.paths['/api/v4/projects/{id}'].get.responses['404'].content['application/json'].schema).toEqual({
      $ref: '#/components/schemas/Error',
    });
  });

  it('serves the reference page with every asset from this server', async () => {
    const page = await t.http().get('/api/docs').expect(200).expect('Content-Type', /html/);
    const assets = [...page.text.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1]);
    expect(assets.length).toBeGreaterThan(2);
    expect(assets.filter((a) => /^(https?:)?\/\//.test(a))).toEqual([]);
    for (const asset of assets) {
      const url = asset.startsWith('/') ? asset : `/api/docs/${asset.replace(/^\.\//, '')}`;
      const res = await t.http().get(url);
      expect([url, res.status]).toEqual([url, 200]);
    }
    // The page is started with this server's document, not swagger's petstore or any other address.
    const init = await t.http().get('/api/docs/swagger-ui-init.js').expect(200);
    expect(init.text).toContain('"openapi": "3.1.0"');
    expect(init.text).not.toMatch(/petstore|https?:\/\/(?!localhost)[a-z]/i);
  });

  /** A real OpenSSH public key line from `ssh-keygen`. */
  async function sshKey(comment: string): Promise<string> {
    const dir = await mkdtemp(join(tmpdir(), 'lode-openapi-key-'));
    try {
      execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', comment, '-f', join(dir, 'k')], {
        stdio: 'ignore',
      });
      return (await readFile(join(dir, 'k.pub'), 'utf8')).trim();
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }

  it('describes every field of the real answers, to administrators, users and anonymous callers', async () => {
    const api = (path: string) => `/api/v4${path}`;
    const user: SeededUser = await createUser(t);
    const other: SeededUser = await createUser(t);
    const send = async (token: string, method: 'post' | 'put', path: string, body: object) => {
      const res = await t.http()[method](api(path)).set('PRIVATE-TOKEN', token).send(body);
      if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(res.body)}`);
      return res.body;
    };
    const group = await send(user.token, 'post', '/groups', { name: 'Docs', path: 'docs', visibility: 'public' });
    const sub = await send(user.token, 'post', '/groups', {
      name: 'Sub',
      path: 'sub',
      parent_id: group.id,
      visibility: 'public',
    });
    const project = await send(user.token, 'post', '/projects', {
      name: 'Handbook',
      namespace_id: group.id,
      visibility: 'public',
    });
    const mine = await send(user.token, 'post', '/projects', { name: 'Mine', visibility: 'public' });
    const id = project.id as number;
    await send(user.token, 'post', `/projects/${id}/repository/files/README.md`, {
      branch: 'master',
      content: '# Handbook\n',
      commit_message: 'first',
    });
    const commit = await send(user.token, 'post', `/projects/${id}/repository/files/guide%2Fintro.md`, {
      branch: 'master',
      content: 'Hello\n',
      commit_message: 'second',
    });
    const sha = (await t.http().get(api(`/projects/${id}/repository/commits/master`))).body.id as string;
    expect(commit.branch).toBe('master');
    await send(user.token, 'post', `/projects/${id}/repository/branches`, { branch: 'feature', ref: 'master' });
    await send(user.token, 'post', `/projects/${id}/repository/tags`, { tag_name: 'v1', ref: 'master', message: 'v1' });
    await send(user.token, 'post', `/projects/${id}/releases`, { tag_name: 'v1', name: 'One', description: 'First' });
    await send(user.token, 'post', `/projects/${id}/releases/v1/assets/links`, {
      name: 'binary',
      url: 'https://example.com/binary',
    });
    await send(user.token, 'post', `/projects/${id}/members`, { user_id: other.id, access_level: 30 });
    await send(user.token, 'post', `/groups/${group.id}/members`, { user_id: other.id, access_level: 20 });
    await send(user.token, 'post', `/projects/${id}/protected_branches`, { name: 'release-*' });
    await send(user.token, 'post', `/projects/${id}/protected_tags`, { name: 'v*' });
    const hook = await send(user.token, 'post', `/projects/${id}/hooks`, {
      url: 'http://127.0.0.1:9/hook',
      push_events: true,
      token: 'secret-token',
    });
    const key = await send(user.token, 'post', '/user/keys', { title: 'laptop', key: await sshKey('me@lode.test') });
    const deployKey = await send(user.token, 'post', `/projects/${id}/deploy_keys`, {
      title: 'ci',
      key: await sshKey('ci@lode.test'),
    });
    const email = await send(user.token, 'post', '/user/emails', { email: 'second@example.com' });
    await send(t.rootToken, 'put', `/users/${user.id}/custom_attributes/team`, { value: 'docs' });
    await send(user.token, 'put', '/user/status', { message: 'writing' });
    const impersonation = (
      await t
        .http()
        .get(api(`/users/${user.id}/impersonation_tokens`))
        .set('PRIVATE-TOKEN', t.rootToken)
    ).body[0];

    const who = { admin: t.rootToken, user: user.token, member: other.token, anonymous: undefined };
    // [caller, the document's path, the real path and query]
    const cases: [keyof typeof who, string, string][] = [];
    const add = (callers: (keyof typeof who)[], docPath: string, real: string) => {
      for (const c of callers) cases.push([c, docPath, real]);
    };
    const all: (keyof typeof who)[] = ['admin', 'user', 'anonymous'];
    const signedIn: (keyof typeof who)[] = ['admin', 'user'];
    const p = `/projects/${id}`;
    add(signedIn, '/users', '/users');
    add(all, '/users/{id}', `/users/${user.id}`);
    add(['admin', 'user', 'member'], '/user', '/user');
    add(['user'], '/user/keys', '/user/keys');
    add(['user'], '/user/keys/{key_id}', `/user/keys/${key.id}`);
    add(['admin'], '/users/{id}/keys', `/users/${user.id}/keys`);
    add(['user'], '/user/emails', '/user/emails');
    add(['user'], '/user/emails/{email_id}', `/user/emails/${email.id}`);
    add(['admin'], '/user/activities', '/user/activities');
    add(signedIn, '/user/status', '/user/status');
    add(all, '/users/{id}/status', `/users/${user.id}/status`);
    add(['admin'], '/users/{user_id}/memberships', `/users/${user.id}/memberships`);
    add(['admin'], '/users/{user_id}/impersonation_tokens', `/users/${user.id}/impersonation_tokens`);
    add(
      ['admin'],
      '/users/{user_id}/impersonation_tokens/{impersonation_token_id}',
      `/users/${user.id}/impersonation_tokens/${impersonation.id}`,
    );
    add(['admin'], '/users/{id}/custom_attributes', `/users/${user.id}/custom_attributes`);
    add(['admin'], '/personal_access_tokens', '/personal_access_tokens');
    add(all, '/users/{user_id}/projects', `/users/${user.id}/projects`);
    add(['admin'], '/keys/{id}', `/keys/${key.id}`);
    add(all, '/projects', '/projects');
    add(all, '/projects', '/projects?simple=true');
    add(all, '/projects', '/projects?statistics=true');
    add(['admin', 'user', 'member', 'anonymous'], '/projects/{id}', p);
    add(all, '/projects/{id}', `/projects/${mine.id}`);
    add(all, '/projects/{id}/users', `${p}/users`);
    add(all, '/projects/{id}/groups', `${p}/groups`);
    add(all, '/projects/{id}/languages', `${p}/languages`);
    add(all, '/projects/{id}/members', `${p}/members`);
    add(all, '/projects/{id}/members/all', `${p}/members/all`);
    add(all, '/projects/{id}/members/{user_id}', `${p}/members/${other.id}`);
    add(signedIn, '/projects/{id}/hooks', `${p}/hooks`);
    add(signedIn, '/projects/{id}/hooks/{hook_id}', `${p}/hooks/${hook.id}`);
    add(signedIn, '/projects/{id}/deploy_keys', `${p}/deploy_keys`);
    add(signedIn, '/projects/{id}/deploy_keys/{key_id}', `${p}/deploy_keys/${deployKey.id}`);
    add(['admin'], '/deploy_keys', '/deploy_keys');
    add(signedIn, '/projects/{id}/protected_branches', `${p}/protected_branches`);
    add(signedIn, '/projects/{id}/protected_tags', `${p}/protected_tags`);
    add(all, '/projects/{id}/repository/branches', `${p}/repository/branches`);
    add(all, '/projects/{id}/repository/branches/{branch}', `${p}/repository/branches/master`);
    add(all, '/projects/{id}/repository/tags', `${p}/repository/tags`);
    add(all, '/projects/{id}/repository/tags/{tag_name}', `${p}/repository/tags/v1`);
    add(all, '/projects/{id}/repository/commits', `${p}/repository/commits`);
    add(all, '/projects/{id}/repository/commits', `${p}/repository/commits?with_stats=true`);
    add(all, '/projects/{id}/repository/commits/{sha}', `${p}/repository/commits/${sha}`);
    add(all, '/projects/{id}/repository/commits/{sha}/diff', `${p}/repository/commits/${sha}/diff`);
    add(all, '/projects/{id}/repository/commits/{sha}/refs', `${p}/repository/commits/${sha}/refs`);
    add(all, '/projects/{id}/repository/tree', `${p}/repository/tree?recursive=true`);
    add(all, '/projects/{id}/repository/contributors', `${p}/repository/contributors`);
    add(all, '/projects/{id}/repository/compare', `${p}/repository/compare?from=feature&to=master`);
    add(all, '/projects/{id}/repository/files/{file_path}', `${p}/repository/files/README.md?ref=master`);
    add(all, '/projects/{id}/repository/files/{file_path}/blame', `${p}/repository/files/README.md/blame?ref=master`);
    add(all, '/projects/{id}/releases', `${p}/releases`);
    add(all, '/projects/{id}/releases/{tag_name}', `${p}/releases/v1`);
    add(all, '/projects/{id}/releases/{tag_name}/assets/links', `${p}/releases/v1/assets/links`);
    add(all, '/projects/{id}/events', `${p}/events`);
    add(['user'], '/events', '/events');
    add(all, '/users/{id}/events', `/users/${user.id}/events`);
    add(all, '/groups', '/groups');
    add(all, '/groups/{id}', `/groups/${group.id}`);
    add(all, '/groups/{id}/subgroups', `/groups/${group.id}/subgroups`);
    add(all, '/groups/{id}/descendant_groups', `/groups/${group.id}/descendant_groups`);
    add(all, '/groups/{id}/projects', `/groups/${group.id}/projects`);
    add(signedIn, '/groups/{id}/members', `/groups/${group.id}/members`);
    add(signedIn, '/groups/{id}/members/all', `/groups/${sub.id}/members/all`);
    add(signedIn, '/namespaces', '/namespaces');
    add(signedIn, '/namespaces/{id}', `/namespaces/${group.id}`);
    add(['admin'], '/audit_events', '/audit_events');
    add(['admin'], '/groups/{id}/audit_events', `/groups/${group.id}/audit_events`);
    add(['admin'], '/projects/{id}/audit_events', `${p}/audit_events`);
    add(signedIn, '/version', '/version');
    add(signedIn, '/metadata', '/metadata');
    add(['admin'], '/application/settings', '/application/settings');

    expect(cases.length).toBeGreaterThan(150);
    const problems: string[] = [];
    let fields = 0;
    for (const [caller, docPath, real] of cases) {
      const where = `GET ${real} as ${caller}`;
      const op = doc.paths[`/api/v4${docPath}`]?.get;
      if (!op) {
        problems.push(`${where}: the document has no GET /api/v4${docPath}`);
        continue;
      }
      const req = t.http().get(api(real));
      const token = who[caller];
      const res = await (token ? req.set('PRIVATE-TOKEN', token) : req);
      const answer = op.responses?.[String(res.status)];
      if (!/^2/.test(String(res.status)) || !answer) {
        problems.push(`${where}: status ${res.status} (the document says ${Object.keys(op.responses).join(',')})`);
        continue;
      }
      const schema = answer.content?.['application/json']?.schema;
      if (!schema) {
        problems.push(`${where}: no JSON schema for ${res.status}`);
        continue;
      }
      const body = res.body as unknown;
      fields += JSON.stringify(body).length;
      if (Array.isArray(body) && !body.length) problems.push(`${where}: empty list, nothing checked`);
      problems.push(...undescribed(doc, body, schema, 'body').map((m) => `${where}: ${m}`));
    }
    expect(fields).toBeGreaterThan(1000);
    expect(problems).toEqual([]);
  }, 120_000);

  it('is the same document that the built dist/ (compiled with the plugin) serves', async () => {
    execFileSync(process.execPath, [join(ROOT, 'scripts/build-if-needed.cjs')], { stdio: 'inherit' });
    const id = randomBytes(6).toString('hex');
    const url = new URL(TEST_PG);
    url.pathname = `/lode_openapi_${id}`;
    const prefix = `lode-openapi-${id}`;
    const dataDir = await mkdtemp(join(tmpdir(), 'lode-openapi-'));
    const port = await freePort();
    const child: ChildProcess = spawn(process.execPath, [MAIN], {
      cwd: ROOT,
      env: {
        PATH: process.env.PATH,
        HOME: process.env.HOME,
        PORT: String(port),
        HOST: '127.0.0.1',
        DATABASE_URL: url.toString(),
        REDIS_URL: TEST_REDIS,
        LODE_REDIS_PREFIX: prefix,
        LODE_DATA_DIR: dataDir,
        LODE_LOG_LEVEL: 'error',
        LODE_SSH_PORT: String(await freePort()),
        LODE_SSH_HOST: '127.0.0.1',
      },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr?.on('data', (d) => (stderr += String(d)));
    try {
      // Retried until the server listens; its first answer is the one checked.
      const res = await eventually(
        () => {
          if (child.exitCode !== null) throw new Error(`dist/ exited: ${stderr.slice(0, 2000)}`);
          return fetch(`http://127.0.0.1:${port}/api/v4/openapi.json`);
        },
        30_000,
        200,
      );
      expect([res.status, stderr.slice(0, 2000)]).toEqual([200, '']);
      const served = (await res.json()) as any;
      expect(served.components.schemas.CreateUserDto).toEqual(doc.components.schemas.CreateUserDto);
      // Compared part by part: a diff of two whole documents takes Jest minutes to print.
      expect(differences(served, doc)).toEqual([]);
    } finally {
      if (child.exitCode === null && child.signalCode === null) {
        const exited = new Promise((r) => child.once('exit', r));
        child.kill('SIGTERM');
        await exited;
      }
      await dropDatabase(url.toString());
      await clearRedis(TEST_REDIS, prefix);
      await rm(dataDir, { recursive: true, force: true });
    }
  }, 240_000); // a build of dist/ first, when it is out of date
});
