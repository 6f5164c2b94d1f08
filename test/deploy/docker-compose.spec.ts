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
  healthcheck?: {
    test?: string | string[];
    disable?: boolean;
    interval?: string;
    timeout?: string;
    start_period?: string;
    start_interval?: string;
    retries?: number;
  };
  restart?: string;
  stop_grace_period?: string;
  init?: boolean;
};
type Compose = { name?: string; services: Record<string, Service>; volumes?: Record<string, unknown> };

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

/**
 * The compose specification's essentials (compose-spec.json: the top level, a service's properties,
 * a health check's), so a misspelt key is caught here rather than by `docker compose` on a server.
 */
const TOP_LEVEL = ['version', 'name', 'include', 'services', 'models', 'networks', 'volumes', 'secrets', 'configs'];
const SERVICE_KEYS = new Set(
  `develop deploy annotations attach build blkio_config cap_add cap_drop cgroup cgroup_parent command configs
   container_name cpu_count cpu_percent cpu_shares cpu_quota cpu_period cpu_rt_period cpu_rt_runtime cpus cpuset
   credential_spec depends_on device_cgroup_rules devices dns dns_opt dns_search domainname entrypoint env_file
   label_file environment expose extends external_links extra_hosts gpus group_add healthcheck hostname image init
   ipc isolation labels links logging mac_address mem_limit mem_reservation mem_swappiness memswap_limit
   network_mode networks oom_kill_disable oom_score_adj pid pids_limit platform ports post_start pre_stop privileged
   profiles provider pull_policy pull_refresh_after read_only restart runtime scale secrets security_opt shm_size
   stdin_open stop_grace_period stop_signal storage_opt sysctls tmpfs tty ulimits use_api_socket user userns_mode
   uts volumes volumes_from working_dir`.split(/\s+/),
);
const HEALTHCHECK_KEYS = ['disable', 'interval', 'retries', 'test', 'timeout', 'start_period', 'start_interval'];
const RESTART_POLICIES = /^(no|always|unless-stopped|on-failure(:\d+)?)$/;
const CONDITIONS = ['service_started', 'service_healthy', 'service_completed_successfully'];
const NAME = /^[a-zA-Z0-9._-]+$/;

/** A compose duration (`40s`, `1m30s`, `500ms`) in seconds; NaN when it is not one. */
function seconds(duration: string | undefined): number {
  const unit: Record<string, number> = { h: 3600, m: 60, s: 1, ms: 1e-3, us: 1e-6, ns: 1e-9 };
  if (!duration || !/^(\d+(\.\d+)?(h|ms|m|s|us|ns))+$/.test(duration)) return NaN;
  return [...duration.matchAll(/(\d+(?:\.\d+)?)(h|ms|m|s|us|ns)/g)].reduce((n, [, v, u]) => n + Number(v) * unit[u], 0);
}

/** The services each `docker compose ...` command in README names (`up -d --build`: none, `exec api ...`: api). */
function servicesNamedInReadme(): { command: string; services: string[] }[] {
  const readme = read('README.md');
  // Options that take a value (the next word): compose's own before the subcommand, then the
  // subcommands' (`-f` is compose's --file but `logs -f` is --follow; `-p` its project, `run -p` a port).
  const split = (list: string) => new Set(list.split(' '));
  const globalWithValue = split(
    '-f --file -p --project-name --profile --env-file --project-directory --ansi --progress',
  );
  const subWithValue = split(
    '-u --user -e --env -w --workdir --index --entrypoint --name -v --volume -p --publish --scale -t --timeout -n --tail --since --until --wait-timeout --pull --exit-code-from --attach --no-attach',
  );
  // Subcommands whose first word is a service and the rest its command; the others take services only.
  const oneService = new Set(['exec', 'run', 'cp', 'port']);
  const noServices = new Set(['version', 'ls', 'config', 'ps', 'images', 'top', 'down', 'wait', 'watch']);
  return [...readme.matchAll(/docker compose ([^\n`]*)/g)].map(([command, rest]) => {
    const words = rest.trim().split(/\s+/);
    const positional: string[] = [];
    let sub: string | undefined;
    for (let i = 0; i < words.length; i++) {
      const w = words[i];
      if (w.startsWith('-')) {
        if (!w.includes('=') && (sub ? subWithValue : globalWithValue).has(w)) i++;
        continue;
      }
      if (!sub) sub = w;
      else positional.push(w);
      if (sub && oneService.has(sub) && positional.length === 1) break;
    }
    return { command, services: sub && !noServices.has(sub) ? positional : [] };
  });
}

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

/** A service's environment as the container gets it, the shell giving only LODE_ROOT_TOKEN. */
const resolved = (s: Service) =>
  Object.fromEntries(
    Object.entries(environment(s)).map(([k, v]) => [k, interpolate(v, { LODE_ROOT_TOKEN: 'glpat-root' })]),
  );

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
    // With the node options `npm start` uses.
    const startOptions = (JSON.parse(read('package.json')) as { scripts: { start: string } }).scripts.start
      .split(/\s+/)
      .filter((word) => word.startsWith('--'));
    expect(instructions('CMD')).toEqual([
      JSON.stringify(['node', ...startOptions, emittedEntry('lode')]).replace(/,/g, ', '),
    ]);
  });

  it("sets glibc's malloc in the image as `npm start` does", () => {
    const start = (JSON.parse(read('package.json')) as { scripts: { start: string } }).scripts.start;
    // `NAME=${NAME:-default}`: an operator's own value wins over npm start's default.
    const mallocDefaults = start
      .split(/\s+/)
      .filter((word) => word.startsWith('MALLOC_'))
      .map((word) => /^(MALLOC_[A-Z_]+)=\$\{\1:-([^}]+)\}$/.exec(word)?.slice(1).join('=') ?? `not a default: ${word}`);
    expect(mallocDefaults).toEqual(['MALLOC_ARENA_MAX=2', 'MALLOC_MMAP_THRESHOLD_=131072']);
    const imageEnv = instructions('ENV').flatMap((e) => e.split(/\s+/));
    for (const setting of mallocDefaults) expect(imageEnv).toContain(setting);
  });

  it('builds native/malloc-trim where npm install runs, and ships the addon where Lode looks for it', () => {
    const postinstall = (JSON.parse(read('package.json')) as { scripts: { postinstall: string } }).scripts.postinstall;
    expect(postinstall).toContain('scripts/build-native.cjs');
    const copies = instructions('COPY');
    const install = dockerfile.indexOf('RUN npm install');
    expect(install).toBeGreaterThan(0);
    // The sources are in the build stage before `npm install`, whose postinstall builds them.
    expect(copies).toContain('native ./native');
    expect(dockerfile.indexOf('COPY native ./native')).toBeLessThan(install);
    // The runtime stage gets the built addon at the path malloc-trim.ts walks up to, from /app/dist.
    const addon = 'native/malloc-trim/build/Release/malloc_trim.node';
    expect(copies).toContain(`--from=build /app/${addon} ./${addon}`);
    expect(read('.dockerignore').split('\n')).toContain('native/*/build');
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

  it("follows the compose specification's essentials", () => {
    expect(Object.keys(compose).filter((k) => !k.startsWith('x-') && !TOP_LEVEL.includes(k))).toEqual([]);
    expect(compose.name).toMatch(/^[a-z0-9][a-z0-9_-]*$/);
    for (const [name, service] of Object.entries(services)) {
      expect(name).toMatch(NAME);
      expect([name, Object.keys(service).filter((k) => !k.startsWith('x-') && !SERVICE_KEYS.has(k))]).toEqual([
        name,
        [],
      ]);
      expect(service.image ?? service.build).toBeDefined();
      if (service.restart) expect(service.restart).toMatch(RESTART_POLICIES);
      if (service.stop_grace_period) expect(seconds(service.stop_grace_period)).toBeGreaterThan(0);
      for (const [dependency, { condition }] of Object.entries(service.depends_on ?? {})) {
        expect(Object.keys(services)).toContain(dependency);
        expect(CONDITIONS).toContain(condition);
      }
      const health = service.healthcheck;
      if (health) {
        expect(Object.keys(health).filter((k) => !HEALTHCHECK_KEYS.includes(k))).toEqual([]);
        if (!health.disable) {
          expect(Array.isArray(health.test) ? ['NONE', 'CMD', 'CMD-SHELL'] : ['string']).toContain(
            Array.isArray(health.test) ? health.test[0] : typeof health.test,
          );
          for (const d of [health.interval, health.timeout, health.start_period, health.start_interval])
            if (d !== undefined) expect([d, seconds(d) > 0]).toEqual([d, true]);
          if (health.retries !== undefined) expect(Number.isInteger(health.retries)).toBe(true);
        }
      }
      for (const port of service.ports ?? []) expect(String(port)).toMatch(/^(\$\{[^}]+\}|\d+):\d+$/);
      for (const mount of service.volumes ?? []) {
        const [source] = mount.split(':');
        // A named volume (not a path) must be declared at the top level.
        if (!/^[./~]/.test(source)) expect(compose.volumes).toHaveProperty([source]);
      }
    }
    for (const volume of Object.keys(compose.volumes ?? {})) expect(volume).toMatch(NAME);
  });

  it('gives api and worker a stop_grace_period longer than the drain (LODE_SHUTDOWN_TIMEOUT)', () => {
    for (const s of [api, worker]) {
      const shutdownTimeout = LodeConfig.fromEnv(resolved(s)).shutdownTimeout;
      expect(shutdownTimeout).toBe(25);
      // The drain, then closing the workers and the connections: a few seconds more than the drain.
      expect(seconds(s.stop_grace_period)).toBeGreaterThanOrEqual(shutdownTimeout + 10);
      // An init process forwards SIGTERM to Node and reaps git's children.
      expect(s.init).toBe(true);
    }
  });

  it("checks the worker's health on its own port (LODE_WORKER_HEALTH_PORT), which it does not publish", () => {
    const health = worker.healthcheck!;
    expect(health.disable).toBeUndefined();
    const [form, file, flag, script] = health.test as string[];
    expect([form, file, flag]).toEqual(['CMD', 'node', '-e']);
    expect(script).toContain("'http://127.0.0.1:' + process.env.LODE_WORKER_HEALTH_PORT + '/-/liveness'");
    expect(script).toContain('process.exit(r.ok ? 0 : 1)');
    const port = LodeConfig.fromEnv(resolved(worker)).workerHealthPort;
    expect(port).toBeGreaterThan(0);
    expect(port).not.toBe(LodeConfig.fromEnv(resolved(api)).port);
    expect(worker.ports).toBeUndefined();
    // Docker's CMD form runs no shell and interpolates nothing: the variable is read by node itself.
    expect(script).not.toMatch(/\$/);
    expect(seconds(health.start_period)).toBeGreaterThanOrEqual(30);
  });

  it("names in README's `docker compose` commands only services that exist", () => {
    const named = servicesNamedInReadme();
    expect(named.length).toBeGreaterThanOrEqual(3);
    expect(named.some((n) => n.services.length > 0)).toBe(true);
    for (const { command, services: used } of named)
      for (const service of used)
        expect([command, Object.keys(services)]).toEqual([command, expect.arrayContaining([service])]);
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
    const a = LodeConfig.fromEnv(resolved(api));
    const w = LodeConfig.fromEnv(resolved(worker));
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
