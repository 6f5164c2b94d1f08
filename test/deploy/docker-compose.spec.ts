import { LodeConfig } from '@app/platform';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';

/*
 * There is no Docker engine on the CI machines, so docker-compose.yml, the Dockerfile and
 * .dockerignore are checked as text: the structure the deployment relies on, and that every
 * setting handed to Lode is one it really reads.
 */

const root = process.cwd();
const read = (file: string) => readFileSync(join(root, file), 'utf8');

type Service = {
  image?: string;
  build?: unknown;
  command?: string | string[];
  environment?: Record<string, string> | string[];
  volumes?: string[];
  ports?: string[];
  depends_on?: Record<string, { condition?: string }> | string[];
  healthcheck?: { test?: string | string[]; disable?: boolean };
};
type Compose = { services: Record<string, Service>; volumes?: Record<string, unknown> };

const composeText = read('docker-compose.yml');
// Compose resolves YAML merge keys (`<<: *anchor`), so the test does too.
const compose = parse(composeText, { merge: true }) as Compose;
const dockerfile = read('Dockerfile');
const configSource = read('libs/platform/src/config/lode-config.ts');

/** Variables the compose file may take from the shell that are not Lode's own: the database password. */
const COMPOSE_VARIABLES = new Set(['POSTGRES_PASSWORD']);

/** Every name `LodeConfig.fromEnv` reads, observed by handing it an environment that records each lookup. */
function variablesLodeReads(): Set<string> {
  const seen = new Set<string>();
  const env = new Proxy({} as NodeJS.ProcessEnv, {
    get: (_, name) => {
      if (typeof name === 'string') seen.add(name);
      return undefined;
    },
  });
  LodeConfig.fromEnv(env);
  return seen;
}

/** The same list, as the source spells it (`env.NAME`). */
const variablesInSource = () => new Set([...configSource.matchAll(/\benv\.([A-Z][A-Z0-9_]*)/g)].map((m) => m[1]));

const environment = (s: Service): Record<string, string> =>
  Array.isArray(s.environment)
    ? Object.fromEntries(s.environment.map((kv) => [kv.split('=')[0], kv.slice(kv.indexOf('=') + 1)]))
    : Object.fromEntries(Object.entries(s.environment ?? {}).map(([k, v]) => [k, String(v)]));

const words = (command: Service['command']) => (Array.isArray(command) ? command.join(' ') : (command ?? ''));

/** Compose interpolation: `${X}`, `${X:-default}`, `${X-default}`, `${X:?error}`; `$$` is a literal dollar. */
function interpolate(text: string, shell: Record<string, string>): string {
  return text.replace(
    /\$\$|\$\{([A-Za-z_][A-Za-z0-9_]*)(?:(:?[-?])([^}]*))?\}/g,
    (whole, name?: string, op?: string, arg?: string) => {
      if (!name) return '$';
      const value = shell[name];
      const unset = op?.startsWith(':') ? !value : value === undefined;
      if (op?.endsWith('-')) return unset ? (arg ?? '') : value;
      if (op?.endsWith('?') && unset) throw new Error(`${name}: ${arg}`);
      return value ?? '';
    },
  );
}

/** Dockerfile instructions, with `\` continuations joined. */
function instructions(name: string): string[] {
  const logical = dockerfile.replace(/\\\r?\n/g, ' ').split(/\r?\n/);
  return logical
    .filter((l) => new RegExp(`^\\s*${name}\\s`, 'i').test(l))
    .map((l) => l.trim().slice(name.length).trim());
}

/** Where `nest build` puts an app's entry file: tsc keeps the source tree under dist/. */
function emittedEntry(project: string): string {
  const nest = JSON.parse(read('nest-cli.json')) as {
    projects: Record<string, { sourceRoot: string; entryFile: string }>;
  };
  const tsconfig = JSON.parse(read('tsconfig.json')) as { compilerOptions: { outDir: string } };
  const p = nest.projects[project];
  return join(tsconfig.compilerOptions.outDir, p.sourceRoot, `${p.entryFile}.js`);
}

describe('docker-compose.yml', () => {
  const { services } = compose;
  const api = services.api;
  const worker = services.worker;

  it('has postgres, redis, api and worker', () => {
    expect(Object.keys(services).sort()).toEqual(['api', 'postgres', 'redis', 'worker']);
  });

  it('runs PostgreSQL 15 with a named volume, a lode database and a health check', () => {
    const pg = services.postgres;
    expect(pg.image).toMatch(/^postgres:15(\b|$)/);
    expect(environment(pg)).toMatchObject({ POSTGRES_DB: 'lode' });
    expect(environment(pg).POSTGRES_PASSWORD).toBeTruthy();
    expect(words(pg.healthcheck?.test)).toContain('pg_isready');
    const [volume] = (pg.volumes ?? [])[0].split(':');
    expect(compose.volumes).toHaveProperty([volume]);
  });

  it('runs Redis 7 keeping every key (noeviction) and persisting jobs (appendonly)', () => {
    const redis = services.redis;
    expect(redis.image).toMatch(/^redis:7(\b|$)/);
    expect(words(redis.command)).toMatch(/--appendonly yes\b/);
    expect(words(redis.command)).toMatch(/--maxmemory-policy noeviction\b/);
    expect(words(redis.healthcheck?.test)).toMatch(/redis-cli.*ping/);
    const [volume, target] = (redis.volumes ?? [])[0].split(':');
    expect(compose.volumes).toHaveProperty([volume]);
    expect(target).toBe('/data');
  });

  it('builds api and worker from the same image', () => {
    expect(api.build).toBeDefined();
    expect(worker.build).toEqual(api.build);
    expect(worker.image).toEqual(api.image);
  });

  it('gives each its role', () => {
    expect(environment(api).LODE_ROLE).toBe('api');
    expect(environment(worker).LODE_ROLE).toBe('worker');
  });

  it('builds and runs on Node 24, the version package.json requires', () => {
    expect(instructions('FROM').map((f) => f.split(/\s+/)[0])).toEqual(['node:24-bookworm', 'node:24-bookworm-slim']);
    expect(JSON.parse(read('package.json')).engines.node).toBe('>=24');
  });

  it('starts api and worker from the image CMD, the one entry point, each in its LODE_ROLE', () => {
    expect(worker.command).toBeUndefined();
    expect(api.command).toBeUndefined();
    expect(instructions('CMD')).toEqual([JSON.stringify(['node', emittedEntry('lode')]).replace(/,/g, ', ')]);
  });

  it('publishes the API port Lode listens on', () => {
    const port = environment(api).PORT ?? '8080';
    expect((api.ports ?? []).some((p) => String(p).endsWith(`:${port}`))).toBe(true);
    expect(worker.ports).toBeUndefined();
  });

  it('shares one named data volume, mounted where LODE_DATA_DIR points', () => {
    for (const s of [api, worker]) {
      expect(environment(s).LODE_DATA_DIR).toBe('/var/lib/lode');
      expect(s.volumes).toContain('lode-data:/var/lib/lode');
    }
    expect(compose.volumes).toHaveProperty(['lode-data']);
  });

  it('hands api and worker the same settings, apart from the role and the HTTP port', () => {
    const strip = (env: Record<string, string>) => {
      const { LODE_ROLE: _role, PORT: _port, ...rest } = env;
      return rest;
    };
    expect(strip(environment(worker))).toEqual(strip(environment(api)));
  });

  it('points DATABASE_URL and REDIS_URL at the compose services', () => {
    for (const s of [api, worker]) {
      const env = environment(s);
      expect(new URL(interpolate(env.DATABASE_URL, {})).host).toBe('postgres:5432');
      expect(new URL(interpolate(env.DATABASE_URL, {})).pathname).toBe('/lode');
      expect(new URL(env.REDIS_URL).host).toBe('redis:6379');
    }
  });

  it('requires LODE_ROOT_TOKEN from the environment', () => {
    for (const s of [api, worker])
      expect(environment(s).LODE_ROOT_TOKEN).toBe('${LODE_ROOT_TOKEN:?set LODE_ROOT_TOKEN}');
    expect(() => interpolate(environment(api).LODE_ROOT_TOKEN, {})).toThrow('set LODE_ROOT_TOKEN');
  });

  it('uses the same database password for PostgreSQL and for Lode', () => {
    const shell = { POSTGRES_PASSWORD: 's3cret' };
    const password = interpolate(environment(services.postgres).POSTGRES_PASSWORD, shell);
    const user = interpolate(environment(services.postgres).POSTGRES_USER ?? 'postgres', shell);
    const url = new URL(interpolate(environment(api).DATABASE_URL, shell));
    expect([url.username, url.password]).toEqual([user, password]);
  });

  it('starts api and worker once PostgreSQL and Redis are healthy', () => {
    for (const s of [api, worker]) {
      expect(s.depends_on).toEqual({
        postgres: { condition: 'service_healthy' },
        redis: { condition: 'service_healthy' },
      });
    }
  });

  it('turns off the HTTP health check for the worker, which serves no HTTP', () => {
    expect(worker.healthcheck).toEqual({ disable: true });
  });

  it("refers only to Lode's variables and the documented compose ones", () => {
    const lode = variablesLodeReads();
    const referenced = [...composeText.replace(/\$\$/g, '').matchAll(/\$\{?([A-Za-z_][A-Za-z0-9_]*)/g)].map(
      (m) => m[1],
    );
    expect(referenced.length).toBeGreaterThan(0);
    expect(referenced.filter((name) => !lode.has(name) && !COMPOSE_VARIABLES.has(name))).toEqual([]);
  });

  it('passes api and worker only variables LodeConfig reads', () => {
    const lode = variablesLodeReads();
    for (const s of [api, worker]) expect(Object.keys(environment(s)).filter((name) => !lode.has(name))).toEqual([]);
  });

  it('gives settings LodeConfig accepts', () => {
    const shell = { LODE_ROOT_TOKEN: 'glpat-root' };
    const resolve = (s: Service) =>
      Object.fromEntries(Object.entries(environment(s)).map(([k, v]) => [k, interpolate(v, shell)]));
    const a = LodeConfig.fromEnv(resolve(api));
    const w = LodeConfig.fromEnv(resolve(worker));
    expect([a.role, a.runsApi, a.runsWorker]).toEqual(['api', true, false]);
    expect([w.role, w.runsApi, w.runsWorker]).toEqual(['worker', false, true]);
    for (const c of [a, w]) {
      expect(c.dataDir).toBe('/var/lib/lode');
      expect(c.rootToken).toBe('glpat-root');
      expect(c.port).toBe(8080);
    }
  });
});

describe('LodeConfig.fromEnv', () => {
  it('reads exactly the variables its source names (env.NAME)', () => {
    expect([...variablesLodeReads()].sort()).toEqual([...variablesInSource()].sort());
  });

  it('reads only settings README documents, and README documents no setting it does not read', () => {
    // README's configuration table is the documentation: every `| \`NAME\` |` row under "## Configuration".
    const readme = readFileSync(join(process.cwd(), 'README.md'), 'utf8');
    const section = readme.slice(
      readme.indexOf('## Configuration'),
      readme.indexOf('\n## ', readme.indexOf('## Configuration') + 5),
    );
    const documented = [...section.matchAll(/^\| `([A-Z_]+)` \|/gm)].map((m) => m[1]);
    // Read elsewhere than LodeConfig: the revision by the version endpoint, the pool size by libuv.
    const outside = ['LODE_REVISION', 'UV_THREADPOOL_SIZE'];
    expect([...variablesLodeReads()].sort()).toEqual(documented.filter((v) => !outside.includes(v)).sort());
    for (const v of outside) expect(documented).toContain(v);
  });
});
