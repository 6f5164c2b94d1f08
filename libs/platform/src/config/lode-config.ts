import { availableParallelism } from 'node:os';
import { resolve } from 'node:path';
import { AddressAllowlist, LOOPBACK } from '../metrics/address-allowlist';

/** The GitLab release whose API v4 surface Lode follows, reported by `/version` unless LODE_GITLAB_VERSION says otherwise. */
export const GITLAB_API_VERSION = '10.8.0';

export type LodeRole = 'all' | 'api' | 'worker';

/** Every setting Lode reads, from the environment; README documents each one with its default. */
export class LodeConfig {
  port = 8080;
  host = '0.0.0.0';
  /**
   * PostgreSQL's connection string. Unset (DATABASE_URL empty): embedded mode, PGlite on
   * `$LODE_DATA_DIR/pglite`, and `startDatabase` fills this in with the embedded server's socket.
   */
  databaseUrl = '';
  /** Redis for the job queues and the throttle's counters; unset: both live in PostgreSQL. */
  redisUrl?: string;
  /** Whether the database is the embedded one (no DATABASE_URL), which only one process may open. */
  embeddedDatabase = false;
  /**
   * LODE_SERVE_MOVED_EMBEDDED: open an embedded database that `lode migrate-embedded` copied to
   * PostgreSQL. Without it such a start is refused: the copy left behind does not hear the pushes the
   * repositories took since, and serving it would show an older Lode over newer repositories.
   */
  serveMovedEmbedded = false;
  /** BullMQ key prefix, so several Lode installations (or test runs) can share one Redis. */
  redisPrefix = 'lode';
  dataDir = resolve('data');
  externalUrl = 'http://localhost:8080';
  rootToken?: string;
  rootEmail = 'admin@example.com';
  rootPassword?: string;
  allowLocalWebhooks = false;
  /**
   * Whether the hottest reads are named statements planned once per connection (PreparedStatements);
   * off for a pooler that does not keep them (PgBouncer in transaction mode before 1.21).
   */
  dbPreparedStatements = true;
  /** One webhook delivery attempt's limit: connect, send and the receiver's answer. */
  webhookTimeoutMs = 10_000;
  /** Bounds of a compare's diffs; past any of them the answer says `compare_timeout: true`. */
  compareMaxFiles = 1000;
  compareMaxLines = 50_000;
  compareMaxBytes = 5 * 1024 * 1024;
  /**
   * Bytes of commit id lists the commits API keeps per walk (40 bytes a commit): a page at any depth is
   * a slice of the list; a walk longer than a quarter of this pages through git. 0 turns it off.
   */
  commitListCacheBytes = 32 * 1024 * 1024;
  /**
   * LODE_IDLE_MEMORY_TRIM: once a burst of work is over and the process idles (two idle ticks in a
   * row), a memory-reducing collection that hands V8's spare heap pages back to the system, then
   * glibc's malloc_trim for the free pages in malloc's arenas (native/malloc-trim); when
   * light traffic follows the burst instead, the same, for a large excess only (IdleMemoryTrim).
   */
  idleMemoryTrim = true;
  /** Bytes of commits (id, people, dates, message) kept as read for commit lists and blame; 0 keeps none. */
  commitCacheBytes = 16 * 1024 * 1024;
  /** Bytes of tree listings (a tree's entries never change) kept for the tree and file APIs; 0 keeps none. */
  treeCacheBytes = 16 * 1024 * 1024;
  /**
   * Bytes of small blobs (up to 64 KB each) kept as read by full id for the raw blob and files APIs (a
   * blob's bytes never change); 0 keeps none.
   */
  blobCacheBytes = 8 * 1024 * 1024;
  /**
   * The heavy git work budget (libs/git's GitWorkBudget): how many of each kind run at once in one
   * process, sized from the core count, how long a request waits for a slot (then 503 with
   * Retry-After), how many may wait, and the nice level git children start at (0: the server's own).
   */
  gitBudget = defaultGitBudget(availableParallelism());
  /** The first retry's delay after a failed delivery; each next one doubles it. */
  webhookRetryDelayMs = 10_000;
  /**
   * How long a hook is first disabled after 4 consecutive failed requests (GitLab's INITIAL_BACKOFF,
   * 1 minute); each further failure doubles it, up to a day.
   */
  webhookDisableBaseMs = 60_000;
  /** How many days a project hook's delivery log keeps an entry (LODE_WEBHOOK_LOG_DAYS). */
  webhookLogDays = 30;
  role: LodeRole = 'all';
  maxUploadBytes = 10 * 1024 * 1024;
  /** Seconds a web page sign-in lasts (LODE_WEB_SESSION_TTL); revoking its token or blocking its user ends it sooner. */
  webSessionTtl = 8 * 3600;
  /** How long a resolved token is trusted before it is looked up again; revocation takes effect within this. */
  tokenCacheMs = 1000;
  /**
   * The bytes kept of serialized anonymous answers of public projects (`GET /projects/:id`,
   * LODE_PROJECT_CACHE_BYTES); 0 turns that cache off.
   */
  projectCacheBytes = 8 * 1024 * 1024;
  /** How often the outbox relay polls when no NOTIFY arrives. */
  outboxPollMs = 1000;
  /**
   * How often, and after how long, dispatched jobs that have not finished are checked against Redis:
   * one Redis lost is sent again. 0 turns the sweep off.
   */
  outboxSweepMs = 60_000;
  /**
   * How long a request may wait to take a pooled PostgreSQL connection or to open one; past it the
   * request answers 503 with Retry-After.
   */
  dbConnectTimeoutMs = 2000;
  /** The longest one SQL statement may run (PostgreSQL's statement_timeout; the client gives up a second later). */
  dbStatementTimeoutMs = 30_000;
  /**
   * Seconds SIGTERM lets running requests and git transfers finish before their connections are
   * closed; a supervisor's grace period must be longer.
   */
  shutdownTimeout = 25;
  /** Seconds a written-down push waits before the reconciler records it for a process that could not. */
  pushReconcileAfter = 30;
  /**
   * Fault injection, for tests of what survives a crash: milliseconds a push waits after git moved its
   * refs and before it is recorded (a window to kill the process in). 0, the default, in production.
   */
  faultPauseBeforePushRecordMs = 0;
  logLevel = 'log';
  /** `json` (one object a line) or `pretty` (for people); default: pretty on a terminal, JSON otherwise. */
  logFormat: 'json' | 'pretty' = 'json';
  /**
   * Addresses and CIDRs that may read `GET /-/metrics` without a token (GitLab's monitoring IP
   * allowlist); administrators' tokens may read it from anywhere.
   */
  metricsAllow: string[] = LOOPBACK;
  /**
   * A worker-only process's health port (`/-/liveness`, `/-/readiness`, `/-/metrics`), which it opens
   * on HOST since it serves no HTTP otherwise; 0: none. Processes that serve HTTP ignore it.
   */
  workerHealthPort = 0;
  /** The key that seals secrets at rest (hook tokens, URL passwords); unset: a key file in the data directory. */
  secretKey?: string;
  /** Gravatar URLs for users without an avatar (GitLab's default); they reveal the MD5 of the e-mail. */
  gravatar = true;
  /** Refused authentications an address may make in a minute before it is refused for an hour; 0: off. */
  authFailures = 30;
  /** Requests a signed-in user may make per rateLimitPeriod; 0: no limit. */
  rateLimitAuthenticated = 0;
  /** Requests an address without credentials may make per rateLimitPeriod; 0: no limit. */
  rateLimitUnauthenticated = 0;
  rateLimitPeriod = 60;
  /** The built-in SSH server's port (git over SSH); 0 turns it off. */
  sshPort = 2222;
  /** The address the SSH server listens on; defaults to HOST. */
  sshHost = '0.0.0.0';
  /** The host and port clone URLs name (`ssh_url_to_repo`); default: LODE_EXTERNAL_URL's host and LODE_SSH_PORT. */
  sshExternalHost = 'localhost';
  sshExternalPort = 2222;
  /** Connections one address may hold open at once. */
  sshMaxConnectionsPerAddress = 20;
  /** Seconds a connection may take from its first byte to a successful authentication. */
  sshLoginTimeout = 10;
  /** Seconds without any traffic after which a connection is closed. */
  sshIdleTimeout = 300;
  /**
   * Reverse proxies whose `X-Forwarded-For` is believed (Express' `trust proxy`): addresses, CIDRs,
   * or `loopback`, `linklocal`, `uniquelocal`. Empty: the client is the TCP peer and the header is
   * ignored, so a client cannot choose its own address for the throttle and the rate limits.
   */
  trustedProxies: string[] = [];
  /**
   * GitLab's `default_branch_protection`, applied when a push creates a project's default branch:
   * 0 none, 1 developers may push, 2 (default) only maintainers push, 3 developers may merge but not push.
   */
  defaultBranchProtection: 0 | 1 | 2 | 3 = 2;
  /**
   * The GitLab version `GET /version` (and `/metadata`) report, which clients read to pick features:
   * Terraform's provider compares major.minor, Renovate runs `semver.lt` on it, so it must be `x.y.z`
   * (an edition suffix such as `-ee` is allowed, as GitLab spells it).
   */
  gitlabVersion = GITLAB_API_VERSION;
  /**
   * What `POST /user/gpg_keys` and `POST /users/:id/gpg_keys` answer: `array`, the list GitLab's docs show
   * and Lode always answered, or `object`, the created key as GitLab's code answers it (python-gitlab,
   * Terraform's provider and glab decode an object).
   */
  gpgKeyCreateAnswer: 'array' | 'object' = 'array';

  static fromEnv(env: NodeJS.ProcessEnv = process.env): LodeConfig {
    const c = new LodeConfig();
    c.port = int(env.PORT, c.port, 'PORT');
    c.host = env.HOST || c.host;
    c.databaseUrl = env.DATABASE_URL || '';
    c.embeddedDatabase = !c.databaseUrl;
    c.serveMovedEmbedded = bool(env.LODE_SERVE_MOVED_EMBEDDED);
    c.redisUrl = env.REDIS_URL || undefined;
    c.redisPrefix = env.LODE_REDIS_PREFIX || c.redisPrefix;
    c.dataDir = resolve(env.LODE_DATA_DIR || c.dataDir);
    c.externalUrl = (env.LODE_EXTERNAL_URL || `http://localhost:${c.port}`).replace(/\/+$/, '');
    c.rootToken = env.LODE_ROOT_TOKEN || undefined;
    c.rootEmail = env.LODE_ROOT_EMAIL || c.rootEmail;
    c.rootPassword = env.LODE_ROOT_PASSWORD || undefined;
    c.allowLocalWebhooks = bool(env.LODE_ALLOW_LOCAL_WEBHOOKS);
    c.dbPreparedStatements =
      env.LODE_DB_PREPARED_STATEMENTS === undefined ||
      env.LODE_DB_PREPARED_STATEMENTS === '' ||
      bool(env.LODE_DB_PREPARED_STATEMENTS);
    c.webhookTimeoutMs = int(env.LODE_WEBHOOK_TIMEOUT, c.webhookTimeoutMs / 1000, 'LODE_WEBHOOK_TIMEOUT') * 1000;
    c.webhookDisableBaseMs = Math.max(
      1,
      int(env.LODE_WEBHOOK_DISABLE_BASE_MS, c.webhookDisableBaseMs, 'LODE_WEBHOOK_DISABLE_BASE_MS'),
    );
    c.webhookLogDays = int(env.LODE_WEBHOOK_LOG_DAYS, c.webhookLogDays, 'LODE_WEBHOOK_LOG_DAYS');
    // 0 would empty every hook's log each hour: a log that shows nothing is a setting mistake.
    if (c.webhookLogDays < 1)
      throw new Error(`LODE_WEBHOOK_LOG_DAYS must be at least 1, not ${env.LODE_WEBHOOK_LOG_DAYS}`);
    const role = env.LODE_ROLE || 'all';
    if (role !== 'all' && role !== 'api' && role !== 'worker')
      throw new Error(`LODE_ROLE must be all, api or worker, not ${role}`);
    c.role = role;
    if (c.embeddedDatabase && role !== 'all')
      throw new Error(
        `LODE_ROLE=${role} needs DATABASE_URL: the embedded database serves one process, which runs the API and the workers`,
      );
    c.maxUploadBytes = int(env.LODE_MAX_UPLOAD_BYTES, c.maxUploadBytes, 'LODE_MAX_UPLOAD_BYTES');
    c.webSessionTtl = Math.max(1, int(env.LODE_WEB_SESSION_TTL, c.webSessionTtl, 'LODE_WEB_SESSION_TTL'));
    c.tokenCacheMs = int(env.LODE_TOKEN_CACHE_MS, c.tokenCacheMs, 'LODE_TOKEN_CACHE_MS');
    c.projectCacheBytes = int(env.LODE_PROJECT_CACHE_BYTES, c.projectCacheBytes, 'LODE_PROJECT_CACHE_BYTES');
    c.outboxPollMs = int(env.LODE_OUTBOX_POLL_MS, c.outboxPollMs, 'LODE_OUTBOX_POLL_MS');
    c.outboxSweepMs = int(env.LODE_OUTBOX_SWEEP_MS, c.outboxSweepMs, 'LODE_OUTBOX_SWEEP_MS');
    c.dbConnectTimeoutMs = Math.max(
      100,
      int(env.LODE_DB_CONNECT_TIMEOUT_MS, c.dbConnectTimeoutMs, 'LODE_DB_CONNECT_TIMEOUT_MS'),
    );
    c.dbStatementTimeoutMs = int(
      env.LODE_DB_STATEMENT_TIMEOUT_MS,
      c.dbStatementTimeoutMs,
      'LODE_DB_STATEMENT_TIMEOUT_MS',
    );
    c.shutdownTimeout = int(env.LODE_SHUTDOWN_TIMEOUT, c.shutdownTimeout, 'LODE_SHUTDOWN_TIMEOUT');
    c.pushReconcileAfter = int(env.LODE_PUSH_RECONCILE_AFTER, c.pushReconcileAfter, 'LODE_PUSH_RECONCILE_AFTER');
    c.faultPauseBeforePushRecordMs = int(
      env.LODE_FAULT_PAUSE_BEFORE_PUSH_RECORD_MS,
      c.faultPauseBeforePushRecordMs,
      'LODE_FAULT_PAUSE_BEFORE_PUSH_RECORD_MS',
    );
    c.compareMaxFiles = int(env.LODE_COMPARE_MAX_FILES, c.compareMaxFiles, 'LODE_COMPARE_MAX_FILES');
    c.compareMaxLines = int(env.LODE_COMPARE_MAX_LINES, c.compareMaxLines, 'LODE_COMPARE_MAX_LINES');
    c.compareMaxBytes = int(env.LODE_COMPARE_MAX_BYTES, c.compareMaxBytes, 'LODE_COMPARE_MAX_BYTES');
    c.commitListCacheBytes = int(
      env.LODE_COMMIT_LIST_CACHE_BYTES,
      c.commitListCacheBytes,
      'LODE_COMMIT_LIST_CACHE_BYTES',
    );
    c.commitCacheBytes = int(env.LODE_COMMIT_CACHE_BYTES, c.commitCacheBytes, 'LODE_COMMIT_CACHE_BYTES');
    c.treeCacheBytes = int(env.LODE_TREE_CACHE_BYTES, c.treeCacheBytes, 'LODE_TREE_CACHE_BYTES');
    c.blobCacheBytes = int(env.LODE_BLOB_CACHE_BYTES, c.blobCacheBytes, 'LODE_BLOB_CACHE_BYTES');
    const budget = c.gitBudget;
    // 0 would refuse every request of its kind: a slot count is at least 1. Each variable is spelt
    // out below, as the settings test finds them in this source.
    const slots = (raw: string | undefined, fallback: number, name: string) => Math.max(1, int(raw, fallback, name));
    c.gitBudget = {
      archives: slots(env.LODE_GIT_BUDGET_ARCHIVES, budget.archives, 'LODE_GIT_BUDGET_ARCHIVES'),
      clones: slots(env.LODE_GIT_BUDGET_CLONES, budget.clones, 'LODE_GIT_BUDGET_CLONES'),
      pushes: slots(env.LODE_GIT_BUDGET_PUSHES, budget.pushes, 'LODE_GIT_BUDGET_PUSHES'),
      walks: slots(env.LODE_GIT_BUDGET_WALKS, budget.walks, 'LODE_GIT_BUDGET_WALKS'),
      waitMs: int(env.LODE_GIT_BUDGET_WAIT_MS, budget.waitMs, 'LODE_GIT_BUDGET_WAIT_MS'),
      queue: int(env.LODE_GIT_BUDGET_QUEUE, budget.queue, 'LODE_GIT_BUDGET_QUEUE'),
      nice: Math.min(19, int(env.LODE_GIT_NICE, budget.nice, 'LODE_GIT_NICE')),
      spawnHelper: boolDefaultTrue(env.LODE_GIT_SPAWN_HELPER),
    };
    c.logLevel = env.LODE_LOG_LEVEL || c.logLevel;
    const format = env.LODE_LOG_FORMAT || (process.stdout.isTTY ? 'pretty' : 'json');
    if (format !== 'json' && format !== 'pretty')
      throw new Error(`LODE_LOG_FORMAT must be json or pretty, not ${format}`);
    c.logFormat = format;
    if (env.LODE_METRICS_ALLOW !== undefined && env.LODE_METRICS_ALLOW.trim() !== '')
      c.metricsAllow = env.LODE_METRICS_ALLOW.split(/[\s,]+/).filter(Boolean);
    new AddressAllowlist(c.metricsAllow); // a bad entry stops the start, naming it
    c.workerHealthPort = int(env.LODE_WORKER_HEALTH_PORT, c.workerHealthPort, 'LODE_WORKER_HEALTH_PORT');
    if (c.workerHealthPort > 65535)
      throw new Error(`LODE_WORKER_HEALTH_PORT must be a port (0 to 65535), not ${c.workerHealthPort}`);
    c.secretKey = env.LODE_SECRET_KEY || undefined;
    c.authFailures = int(env.LODE_AUTH_FAILURES, c.authFailures, 'LODE_AUTH_FAILURES');
    c.rateLimitAuthenticated = int(
      env.LODE_RATE_LIMIT_AUTHENTICATED,
      c.rateLimitAuthenticated,
      'LODE_RATE_LIMIT_AUTHENTICATED',
    );
    c.rateLimitUnauthenticated = int(
      env.LODE_RATE_LIMIT_UNAUTHENTICATED,
      c.rateLimitUnauthenticated,
      'LODE_RATE_LIMIT_UNAUTHENTICATED',
    );
    c.rateLimitPeriod = Math.max(1, int(env.LODE_RATE_LIMIT_PERIOD, c.rateLimitPeriod, 'LODE_RATE_LIMIT_PERIOD'));
    c.sshPort = int(env.LODE_SSH_PORT, c.sshPort, 'LODE_SSH_PORT');
    c.sshHost = env.LODE_SSH_HOST || c.host;
    c.sshExternalHost = env.LODE_SSH_EXTERNAL_HOST || new URL(c.externalUrl).hostname.replace(/^\[(.*)\]$/, '$1');
    // With the server off, clone URLs still name the standard port a proxy or a system sshd may serve.
    c.sshExternalPort = int(env.LODE_SSH_EXTERNAL_PORT, c.sshPort || 22, 'LODE_SSH_EXTERNAL_PORT');
    c.sshMaxConnectionsPerAddress = int(
      env.LODE_SSH_MAX_CONNECTIONS_PER_ADDRESS,
      c.sshMaxConnectionsPerAddress,
      'LODE_SSH_MAX_CONNECTIONS_PER_ADDRESS',
    );
    c.sshLoginTimeout = int(env.LODE_SSH_LOGIN_TIMEOUT, c.sshLoginTimeout, 'LODE_SSH_LOGIN_TIMEOUT');
    c.sshIdleTimeout = int(env.LODE_SSH_IDLE_TIMEOUT, c.sshIdleTimeout, 'LODE_SSH_IDLE_TIMEOUT');
    c.trustedProxies = (env.LODE_TRUSTED_PROXIES ?? '').split(/[\s,]+/).filter(Boolean);
    const protection = int(
      env.LODE_DEFAULT_BRANCH_PROTECTION,
      c.defaultBranchProtection,
      'LODE_DEFAULT_BRANCH_PROTECTION',
    );
    if (protection > 3) throw new Error(`LODE_DEFAULT_BRANCH_PROTECTION must be 0, 1, 2 or 3, not ${protection}`);
    c.defaultBranchProtection = protection as 0 | 1 | 2 | 3;
    c.gitlabVersion = env.LODE_GITLAB_VERSION || c.gitlabVersion;
    if (!/^\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?$/.test(c.gitlabVersion))
      throw new Error(
        `LODE_GITLAB_VERSION must be a version such as 10.8.0 or 16.11.2-ee (major.minor.patch), not ${c.gitlabVersion}`,
      );
    const gpgAnswer = env.LODE_GPG_KEY_CREATE_ANSWER || c.gpgKeyCreateAnswer;
    if (gpgAnswer !== 'array' && gpgAnswer !== 'object')
      throw new Error(`LODE_GPG_KEY_CREATE_ANSWER must be array or object, not ${gpgAnswer}`);
    c.gpgKeyCreateAnswer = gpgAnswer;
    c.gravatar = boolDefaultTrue(env.LODE_GRAVATAR);
    c.idleMemoryTrim = boolDefaultTrue(env.LODE_IDLE_MEMORY_TRIM);
    return c;
  }

  /**
   * What a project's full path and `.git` follow in `ssh_url_to_repo`, GitLab's two forms:
   * `git@host:` on port 22, `ssh://git@host:port/` on any other.
   */
  get sshCloneBase(): string {
    const host = this.sshExternalHost.includes(':') ? `[${this.sshExternalHost}]` : this.sshExternalHost;
    return this.sshExternalPort === 22 ? `git@${host}:` : `ssh://git@${host}:${this.sshExternalPort}/`;
  }

  /** Where the job queues live: Redis when REDIS_URL is set, else BullMQ's PostgreSQL backend on the database. */
  get queueBackend(): 'redis' | 'postgres' {
    return this.redisUrl ? 'redis' : 'postgres';
  }

  get runsApi(): boolean {
    return this.role !== 'worker';
  }
  get runsWorker(): boolean {
    return this.role !== 'api';
  }
}

function int(value: string | undefined, fallback: number, name: string): number {
  if (value === undefined || value === '') return fallback;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0) throw new Error(`${name} must be a non-negative integer, not ${value}`);
  return n;
}

function bool(value: string | undefined): boolean {
  return value !== undefined && /^(1|true|yes|on)$/i.test(value);
}

/** A switch that is on unless set to something other than 1, true, yes or on. */
function boolDefaultTrue(value: string | undefined): boolean {
  return value === undefined || value === '' || bool(value);
}

/** The heavy git work budget's settings (LodeConfig.gitBudget). */
export interface GitBudgetSettings {
  /** Cold archives made at once (`git archive`, and bzip2 for tar.bz2). */
  archives: number;
  /** Clones and fetches served at once (upload-pack, over HTTP and SSH). */
  clones: number;
  /** Pushes received at once (receive-pack, over HTTP and SSH). */
  pushes: number;
  /** Compares and contributors' cold history walks at once. */
  walks: number;
  /** How long a request waits for a slot before it is refused with 503 and Retry-After. */
  waitMs: number;
  /** How many requests of one kind may wait; past it a request is refused at once. */
  queue: number;
  /** The nice level (0-19) git children start at, so the API keeps its cores. */
  nice: number;
  /** Streaming git children are started by a small helper process, not the server (see libs/git's spawn-helper.ts). */
  spawnHelper: boolean;
}

/**
 * Sized from the core count: an archive (git's own gzip) keeps a core busy, so on two cores one
 * archive at a time leaves the API the other; clones and pushes spend much of their time waiting on
 * the network and the client, and a compare's libgit2 calls hop between the thread pool and the
 * event loop, so more of those overlap.
 */
export function defaultGitBudget(cores: number): GitBudgetSettings {
  return {
    archives: Math.max(1, Math.floor(cores / 2)),
    clones: 4 * cores,
    pushes: 2 * cores,
    walks: 2 * cores,
    waitMs: 30_000,
    queue: 50,
    nice: 10,
    spawnHelper: true,
  };
}
