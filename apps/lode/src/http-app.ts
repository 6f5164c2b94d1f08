import { GitRepositories } from '@app/git';
import {
  GitlabErrorFilter,
  GitlabExpressAdapter,
  GitlabValidationPipe,
  DatabaseWatch,
  LodeConfig,
  Logs,
  Metrics,
  databaseGate,
  frontDoor,
  hotReadsMiddleware,
  type HotRead,
  PaginationInterceptor,
  mediaTypeGate,
  QUEUE_DASHBOARD_PATH,
  RedactingLogger,
  RequestRateLimits,
  multipartFields,
  requestContextMiddleware,
  requestLogMiddleware,
  securityHeadersMiddleware,
  requestInputMiddleware,
  sendClientError,
} from '@app/platform';
import { PublicProjectAnswers, publicProjectReads } from '@app/projects';
import { GitHttpMiddleware, publicRepositoryReads } from '@app/repositories';
import { WebPages } from '@app/web';
import type { INestApplication, LogLevel } from '@nestjs/common';
import { RequestMethod } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import express, { type NextFunction, type Request, type Response } from 'express';
import type { RequestListener, Server } from 'node:http';
import proxyAddress from 'proxy-addr';
import { LodeModule, type LodeParts } from './lode.module';
import { setupOpenApi } from './openapi';
import { queueDashboard } from './queue-dashboard';

export const API_PREFIX = 'api/v4';
const PROJECT_UPLOAD = /^\/api\/v4\/projects\/[^/]+\/uploads\/?$/;
const USERS = /^\/api\/v4\/users\/?$/;
const USER = /^\/api\/v4\/users\/[^/]+\/?$/;
/** POST /projects and POST /projects/user/:user_id (a project's avatar). */
const PROJECTS = /^\/api\/v4\/projects(\/user\/[^/]+)?\/?$/;
/** PUT /projects/:id (a project's avatar). */
const PROJECT = /^\/api\/v4\/projects\/[^/]+\/?$/;

/** The requests whose multipart body is read by their route (AcceptsFiles, or the upload stream), not by the global parser. */
const takesFiles = (req: Request): boolean =>
  (req.method === 'POST' && (PROJECT_UPLOAD.test(req.path) || USERS.test(req.path) || PROJECTS.test(req.path))) ||
  (req.method === 'PUT' && (USER.test(req.path) || PROJECT.test(req.path)));
const BODY_LIMIT = '1mb';

/** Log levels from `LODE_LOG_LEVEL`: the named level and every more severe one. */
export function logLevels(level: string): LogLevel[] {
  const order: LogLevel[] = ['fatal', 'error', 'warn', 'log', 'debug', 'verbose'];
  const i = order.indexOf(level as LogLevel);
  return order.slice(0, i < 0 ? 4 : i + 1);
}

/**
 * Builds the HTTP application: GitLab's parameter handling (query, JSON, forms and multipart
 * alike, `name[]=` and `custom_attributes[k]=` parsed), request ids, the `/api/v4` prefix,
 * GitLab's error bodies and pagination headers.
 */
export async function createHttpApp(
  config: LodeConfig,
  parts: LodeParts = { http: true, worker: config.runsWorker },
): Promise<INestApplication> {
  Logs.configure(config.logLevel, config.logFormat);
  const app = await NestFactory.create<NestExpressApplication>(
    LodeModule.forRoot(config, parts),
    new GitlabExpressAdapter(),
    {
      bodyParser: false,
      logger: new RedactingLogger(logLevels(config.logLevel)),
    },
  );
  configureHttp(app, config);
  return app;
}

export function configureHttp(app: NestExpressApplication, config: LodeConfig): void {
  // Express 5 parses `a[]=1` and `a[k]=v` only with the extended parser.
  app.set('query parser', 'extended');
  app.set('etag', false);
  app.disable('x-powered-by');
  trustProxies(app, config.trustedProxies);
  app.use(requestContextMiddleware);
  // One log line and one duration observation per request, when its answer is sent.
  app.use(requestLogMiddleware(app.get(Metrics)));
  app.use(securityHeadersMiddleware);
  // While PostgreSQL does not answer, every request that would need it answers 503 at once.
  app.use(databaseGate(app.get(DatabaseWatch)));
  // The anonymous reads answered from memory ahead of the Nest pipeline: a public project's GET, and
  // a raw blob by its full id or a files API read of one (libs/projects' PublicProjectAnswers says
  // when that is safe). The front door (installed last, below) answers them ahead of Express itself,
  // unless the unauthenticated rate limit is on: then they are counted and answered in the chain.
  const hotReads = hotReadsOf(app);
  const limits = app.get(RequestRateLimits, { strict: false });
  const countedHotReads = hotReads.length > 0 && limits.countsAnonymous;
  if (countedHotReads) app.use(hotReadsMiddleware(hotReads, limits));
  // Git over smart HTTP streams packs itself, so it goes before any body parser (absent when this
  // process serves no HTTP side, as in a worker-only test module).
  const git = gitMiddleware(app);
  if (git) app.use(git.handle);
  // The queue dashboard parses its own bodies; what it refuses goes on to Nest's 404.
  app.use(QUEUE_DASHBOARD_PATH, queueDashboard(app));
  // A body Lode cannot read parameters from, sent to a route that exists: Grape's 415.
  const adapter = app.getHttpAdapter();
  if (adapter instanceof GitlabExpressAdapter)
    app.use(mediaTypeGate((req) => adapter.methodsAt(req.path).includes(req.method)));
  app.use(express.json({ limit: BODY_LIMIT, type: ['application/json', 'application/*+json'] }));
  app.use(express.urlencoded({ extended: true, limit: BODY_LIMIT }));
  // Multipart fields are parameters on every route; files reach the disk only on the routes that take
  // them, after authentication (AcceptsFiles), and project uploads stream their own body
  // (libs/projects/src/uploads).
  app.use(multipartFields(takesFiles));
  app.use(requestInputMiddleware);
  // The read-only web pages at GitLab's web paths (libs/web): they answer only paths no route above
  // or below serves (not /api, /-/, uploads or git), and pass on what they do not find unless a
  // browser asked (Accept: text/html), which gets the HTML 404 page.
  const web = webPages(app);
  if (web) app.use(web.handle);
  // What failed before routing (body parsers, multipart, the input checks) is answered as GitLab's errors.
  const errors = new GitlabErrorFilter();
  app.use((err: unknown, req: Request, res: Response, _next: NextFunction) => errors.respond(err, req, res));
  app.setGlobalPrefix(API_PREFIX, {
    exclude: [
      { path: '-/health', method: RequestMethod.GET },
      { path: '-/readiness', method: RequestMethod.GET },
      { path: '-/liveness', method: RequestMethod.GET },
      { path: '-/metrics', method: RequestMethod.GET },
      { path: 'uploads/-/system/user/avatar/:id/:filename', method: RequestMethod.GET },
      { path: 'uploads/-/system/project/avatar/:id/:filename', method: RequestMethod.GET },
      { path: '*path/uploads/:secret/:filename', method: RequestMethod.GET },
    ],
  });
  app.useGlobalPipes(new GitlabValidationPipe());
  app.useGlobalFilters(errors);
  app.useGlobalInterceptors(new PaginationInterceptor(config.externalUrl));
  // Node answers what it cannot parse (431 for oversized headers, 400 for a malformed request)
  // before Express sees it: in JSON too.
  app.getHttpServer().on('clientError', sendClientError);
  // GET /api/v4/openapi.json and the reference page at /api/docs (apps/lode/src/openapi.ts).
  setupOpenApi(app);
  if (hotReads.length > 0 && !countedHotReads) installFrontDoor(app, hotReads);
}

/** The hot reads of the modules this process has (none in a worker-only module). */
function hotReadsOf(app: NestExpressApplication): HotRead[] {
  const answers = optional(app, PublicProjectAnswers);
  if (!answers) return [];
  const repositories = optional(app, GitRepositories);
  return [
    publicProjectReads(answers),
    ...(repositories ? [publicRepositoryReads(answers, repositories, app.get(Metrics))] : []),
  ];
}

/**
 * Puts `frontDoor` in place of the Express application as the HTTP server's request listener: the
 * hot reads it keeps skip Express's dispatch, everything else reaches Express as before.
 */
function installFrontDoor(app: NestExpressApplication, reads: HotRead[]): void {
  const server = app.getHttpServer() as Server;
  const express = app.getHttpAdapter().getInstance() as RequestListener & { get(setting: string): unknown };
  const listeners = server.listeners('request');
  if (listeners.length !== 1 || listeners[0] !== express)
    throw new Error('The HTTP server is expected to have the Express application as its one request listener');
  server.removeListener('request', express);
  server.on(
    'request',
    frontDoor(express, {
      reads,
      metrics: app.get(Metrics),
      database: app.get(DatabaseWatch),
      // As `req.ip` works it out: Express's own compiled LODE_TRUSTED_PROXIES, read when a line is written.
      clientAddress: (req) =>
        proxyAddress(req, express.get('trust proxy fn') as (address: string, hop: number) => boolean),
    }),
  );
}

/**
 * `req.ip`, which the failed-authentication throttle, the rate limits and git's `REMOTE_ADDR` use, is
 * the TCP peer unless that peer is one of LODE_TRUSTED_PROXIES: then it is the address that peer put
 * in `X-Forwarded-For` (the rightmost one not itself trusted, so a client's own header, which the
 * proxy keeps on the left, chooses nothing). With no trusted proxy the header is never read.
 */
export function trustProxies(app: { set(setting: string, value: unknown): unknown }, proxies: string[]): void {
  if (!proxies.length) {
    app.set('trust proxy', false);
    return;
  }
  try {
    app.set('trust proxy', proxies);
  } catch (err) {
    throw new Error(`LODE_TRUSTED_PROXIES: ${(err as Error).message}`, { cause: err });
  }
}

function webPages(app: NestExpressApplication): WebPages | undefined {
  try {
    return app.get(WebPages, { strict: false });
  } catch {
    return undefined;
  }
}

function gitMiddleware(app: NestExpressApplication): GitHttpMiddleware | undefined {
  return optional(app, GitHttpMiddleware);
}

/** A provider of the application's modules, or undefined where this process has none (a worker-only module). */
function optional<T>(app: NestExpressApplication, type: abstract new (...args: never[]) => T): T | undefined {
  try {
    return app.get(type, { strict: false });
  } catch {
    return undefined;
  }
}
