import { GitRepositories, projectRepo, type RepoRef } from '@app/git';
import {
  Actor,
  Clock,
  hasControlCharacters,
  NotFound,
  redactSecrets,
  RequestRateLimits,
  TooManyRequests,
  Unauthorized,
} from '@app/platform';
import { ProjectAccessPolicy, ProjectQueries, RecordRepositoryPush, type ProjectRow } from '@app/projects';
import { ActorResolver, AuthThrottled, RecordUserActivity, UserBlocked, type Authenticated } from '@app/users';
import { Injectable, Logger } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import type { NextFunction, Request, Response } from 'express';
import { setTimeout as sleep } from 'node:timers/promises';
import { readPushCommands, type PushCommand } from '../push/push-commands';
import { PushInspector } from '../push/push-inspector';

/** Attempts to record an accepted push when PostgreSQL stumbles (the refs have moved already). */
const RECORD_ATTEMPTS = 4;

/** `/<full path>[.git]/<service>`: the three smart-HTTP endpoints, outside `/api/v4` as in GitLab. */
const GIT_ROUTE = /^\/(?!api\/v4\/)(.+?)(?:\.git)?\/(info\/refs|git-upload-pack|git-receive-pack)$/;
const UPLOAD = 'git-upload-pack';
const RECEIVE = 'git-receive-pack';

/** Why a git request is refused; answered as plain text, which git shows to its user. */
class Refusal {
  constructor(
    readonly status: 401 | 403 | 404 | 429,
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
    private readonly projects: ProjectQueries,
    private readonly git: GitRepositories,
    private readonly clock: Clock,
    private readonly commands: CommandBus,
    private readonly rateLimits: RequestRateLimits,
  ) {}

  /** Bound so http-app can `app.use()` it directly. */
  readonly handle = (req: Request, res: Response, next: NextFunction): void => {
    const route = this.match(req);
    if (!route) return next();
    this.serve(req, res, route.fullPath, route.service, route.push).catch((err: unknown) => {
      if (err instanceof Refusal) return refuse(res, err);
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
    await this.rateLimits.count(actor ? { userId: actor.id } : { address: req.ip ?? 'unknown' }, res).catch((err) => {
      // Rack::Attack's words for a throttled request.
      if (err instanceof TooManyRequests) throw new Refusal(429, 'Retry later', false, err.retryAfter);
      throw err;
    });
    if (push && !actor) throw challenge();
    const project = await this.projects.getVisible(fullPath, actor).catch((err: unknown) => {
      // Anonymous callers get the challenge, not a 404, so git asks for credentials (as GitLab).
      if (err instanceof NotFound)
        throw actor ? new Refusal(404, 'The project you were looking for could not be found.') : challenge();
      throw err;
    });
    this.authorize(project, actor, push);
    const repo = projectRepo(project.id);
    // GitLab counts a clone, fetch or push as the user's activity of the day.
    if (caller && service !== 'info/refs') this.recordActivity(caller.actor.id, caller.lastActivityOn);
    if (service !== RECEIVE || !actor) return this.git.serveHttp(req, res, repo, service, actor?.username ?? '');
    const commands = readPushCommands(req, /gzip/i.test(String(req.headers['content-encoding'] ?? '')));
    this.git.serveHttp(req, res, repo, service, actor.username, {
      beforeEnd: async (succeeded) => {
        if (succeeded) await this.recordPush(project, actor, repo, await commands);
      },
    });
  }

  /**
   * Records what an accepted push changed as a `RepositoryPushed` event before git's client gets the
   * end of its answer. A rejected command (non-fast-forward, a lost race) moved no ref and is left
   * out. If PostgreSQL stays away through every attempt the refs have still moved: that is logged.
   */
  private async recordPush(project: ProjectRow, actor: Actor, repo: RepoRef, commands: PushCommand[]): Promise<void> {
    if (!commands.length) return;
    for (let attempt = 1; ; attempt++) {
      try {
        const push = await new PushInspector(this.git, repo).inspect(commands, project.default_branch);
        await this.commands.execute(new RecordRepositoryPush(project.id, { userId: actor.id, ...push }, actor));
        return;
      } catch (err) {
        if (attempt >= RECORD_ATTEMPTS) {
          this.logger.error(
            `push to project ${project.id} by ${actor.username} was accepted but could not be recorded: ${String(err)}`,
          );
          return;
        }
        await sleep(250 * 2 ** attempt);
      }
    }
  }

  /** At most once a day per user, and never in the way of the git request it rides on. */
  private recordActivity(userId: number, lastActivityOn: string | null): void {
    const today = this.clock.now().toISOString().slice(0, 10);
    if (lastActivityOn !== null && lastActivityOn >= today) return;
    this.commands.execute(new RecordUserActivity(userId)).catch((err: unknown) => {
      this.logger.warn(`could not record activity of user ${userId}: ${String(err)}`);
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

  /**
   * GitLab's download_code and push_code, as `ProjectAccessPolicy` decides them, refused in git's words.
   * Lode's tokens carry no read/write_repository scopes, so git needs a token with `api` (a `read_user` token is 401).
   */
  private authorize(project: ProjectRow, actor: Actor | undefined, push: boolean): void {
    // GitLab 10.x (`Gitlab::Auth#find_for_git_client`) treats a token without a git-capable scope as
    // no credentials at all: 401 with the challenge, so git asks again.
    if (actor && !actor.scopes.includes('api')) throw challenge();
    if (!push) {
      if (!ProjectAccessPolicy.mayDownloadCode(project, actor))
        throw new Refusal(403, 'You are not allowed to download code from this project.');
      return;
    }
    const refusal = ProjectAccessPolicy.pushCodeRefusal(project, actor);
    if (refusal === 'access') throw new Refusal(403, 'You are not allowed to push code to this project.');
    if (refusal === 'archived') throw new Refusal(403, 'You are not allowed to push code to an archived project.');
  }
}

function refuse(res: Response, r: Refusal): void {
  if (res.headersSent) return void res.destroy();
  if (r.challenge) res.setHeader('WWW-Authenticate', 'Basic realm="Lode"');
  if (r.retryAfter !== undefined) res.setHeader('Retry-After', String(r.retryAfter));
  res.status(r.status).type('text/plain').send(`${r.message}\n`);
}
