import { GitRepositories, projectRepo } from '@app/git';
import {
  hasControlCharacters,
  DATABASE_RETRY_AFTER_S,
  isDatabaseUnavailable,
  redactSecrets,
  RequestRateLimits,
  TooManyRequests,
  Unauthorized,
} from '@app/platform';
import { PushRecorder } from '@app/projects';
import { ActorResolver, AuthThrottled, gitScopesAllow, UserBlocked, type Authenticated } from '@app/users';
import { Injectable, Logger } from '@nestjs/common';
import type { NextFunction, Request, Response } from 'express';
import { GitAccess, GitRefused } from '../transport/git-access';

/** `/<full path>[.git]/<service>`: the three smart-HTTP endpoints, outside `/api/v4` as in GitLab. */
const GIT_ROUTE = /^\/(?!api\/v4\/)(.+?)(?:\.git)?\/(info\/refs|git-upload-pack|git-receive-pack)$/;
const UPLOAD = 'git-upload-pack';
const RECEIVE = 'git-receive-pack';

/** Why a git request is refused; answered as plain text, which git shows to its user. */
class Refusal {
  constructor(
    readonly status: 401 | 403 | 404 | 429 | 503,
    readonly message: string,
    readonly challenge = false,
    /** Seconds a throttled address must wait (`Retry-After`). */
    readonly retryAfter?: number,
  ) {}
}
const challenge = () => new Refusal(401, 'HTTP Basic: Access denied', true);

/**
 * Git over smart HTTP. An Express middleware rather than a controller: it runs before the body
 * parsers and Nest's guards, filters and interceptors, none of which suit a streamed pack, and it
 * matches full paths of any depth that Nest's router would make awkward. Authentication is HTTP
 * Basic with any user name and a personal or impersonation token as the password, as GitLab.
 */
@Injectable()
export class GitHttpMiddleware {
  private readonly logger = new Logger('GitHttp');

  constructor(
    private readonly actors: ActorResolver,
    private readonly access: GitAccess,
    private readonly pushes: PushRecorder,
    private readonly git: GitRepositories,
    private readonly rateLimits: RequestRateLimits,
  ) {}

  /** Bound so http-app can `app.use()` it directly. */
  readonly handle = (req: Request, res: Response, next: NextFunction): void => {
    const route = this.match(req);
    if (!route) return next();
    this.serve(req, res, route.fullPath, route.service, route.push).catch((err: unknown) => {
      if (err instanceof Refusal) return refuse(res, err);
      // PostgreSQL away (a cut the database watch has not told yet, or a connection it just cut): the
      // git client is told to come back, as the API's 503 does; it is no fault of Lode's code to log.
      if (isDatabaseUnavailable(err)) {
        this.logger.warn(`git ${req.method} ${req.path}: the database did not answer`);
        return refuse(res, new Refusal(503, 'Service Unavailable', false, DATABASE_RETRY_AFTER_S));
      }
      this.logger.error(redactSecrets(`git ${req.method} ${req.originalUrl}: ${String(err)}`));
      if (!res.headersSent) res.status(500).type('text/plain').send('Internal error\n');
    });
  };

  private match(req: Request): { fullPath: string; service: string; push: boolean } | null {
    const m = GIT_ROUTE.exec(req.path);
    if (!m) return null;
    const service = m[2];
    if (service === 'info/refs' ? req.method !== 'GET' : req.method !== 'POST') return null;
    let fullPath: string;
    try {
      fullPath = decodeURIComponent(m[1]);
    } catch {
      return null;
    }
    // No project path has one (and PostgreSQL cannot compare a NUL): not a repository, so the API's 404.
    if (hasControlCharacters(fullPath)) return null;
    const wanted = service === 'info/refs' ? req.query.service : service;
    return { fullPath, service, push: wanted === RECEIVE };
  }

  private async serve(req: Request, res: Response, fullPath: string, service: string, push: boolean): Promise<void> {
    // Only the smart protocol: the dumb one would bypass upload-pack's own checks.
    if (service === 'info/refs' && req.query.service !== UPLOAD && req.query.service !== RECEIVE)
      throw new Refusal(403, 'Only the smart HTTP protocol is supported');
    const caller = await this.authenticate(req);
    const actor = caller?.actor;
    // For the request's log line (`user_id`), as the API's guard leaves it.
    if (actor) (req as Request & { actor?: typeof actor }).actor = actor;
    await this.rateLimits.count(actor ? { userId: actor.id } : { address: req.ip ?? 'unknown' }, res).catch((err) => {
      // Rack::Attack's words for a throttled request.
      if (err instanceof TooManyRequests) throw new Refusal(429, 'Retry later', false, err.retryAfter);
      throw err;
    });
    if (push && !actor) throw challenge();
    // GitLab (`Gitlab::Auth#find_for_git_client`) treats a token without a git-capable scope as no
    // credentials at all: 401 with the challenge, so git asks again. `api` and `write_repository`
    // fetch and push, `read_repository` only fetches; `read_user` and `read_api` are 401 here.
    if (actor && !gitScopesAllow(actor.scopes, push)) throw challenge();
    const project = await this.access.project(fullPath, actor).catch((err: unknown) => {
      // Anonymous callers get the challenge, not a 404, so git asks for credentials (as GitLab).
      if (err instanceof GitRefused) throw actor ? new Refusal(404, err.message) : challenge();
      throw err;
    });
    try {
      this.access.authorize(project, actor, push);
    } catch (err) {
      if (err instanceof GitRefused) throw new Refusal(403, err.message);
      throw err;
    }
    await this.access.requireRepository(project).catch((err: unknown) => {
      // Gitlab::GitAccess::NotFoundError: a 404 with its words.
      if (err instanceof GitRefused) throw new Refusal(404, err.message);
      throw err;
    });
    const repo = projectRepo(project.id);
    if (caller && service !== 'info/refs') this.access.recordActivity(caller.actor.id, caller.lastActivityOn);
    if (service !== RECEIVE || !actor) return this.git.serveHttp(req, res, repo, service, actor?.username ?? '');
    const session = this.pushes.session(project, actor, { accessLevel: project.access, isAdmin: actor.isAdmin });
    this.git.serveHttp(req, res, repo, service, actor.username, {
      checkRefUpdates: session.check,
      beforeEnd: () => session.finish(),
    });
  }

  /** The caller from HTTP Basic (any user name, a token as the password); undefined when none was sent. */
  private async authenticate(req: Request): Promise<Authenticated | undefined> {
    try {
      return await this.actors.byBasicAuth(req.headers.authorization, req.ip);
    } catch (err) {
      if (err instanceof AuthThrottled) throw new Refusal(403, 'Forbidden', false, err.retryAfter);
      if (err instanceof Unauthorized) throw challenge();
      if (err instanceof UserBlocked) throw new Refusal(403, 'Your account has been blocked.');
      throw err;
    }
  }
}

function refuse(res: Response, r: Refusal): void {
  if (res.headersSent) return void res.destroy();
  if (r.challenge) res.setHeader('WWW-Authenticate', 'Basic realm="Lode"');
  if (r.retryAfter !== undefined) res.setHeader('Retry-After', String(r.retryAfter));
  res.status(r.status).type('text/plain').send(`${r.message}\n`);
}
