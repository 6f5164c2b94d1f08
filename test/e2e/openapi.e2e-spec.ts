import type { INestApplication } from '@nestjs/common';
import { SwaggerModule } from '@nestjs/swagger';
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
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
    t = await startTestApp();
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
