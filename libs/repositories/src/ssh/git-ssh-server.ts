import { GitRepositories, projectRepo, type GitPackSession } from '@app/git';
import { LodeConfig, redactSecrets, RequestContexts, type Actor } from '@app/platform';
import { DeployKeyQueries, PushRecorder, type BranchCaller, type DeployKeyGrant, type ProjectRow } from '@app/projects';
import { ActorResolver, UserBlocked, type SshKeyHolder } from '@app/users';
import { Injectable, Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { createHash, randomUUID } from 'node:crypto';
import { createServer, type Server as NetServer, type Socket } from 'node:net';
import { join } from 'node:path';
import { Server, utils, type AuthContext, type Connection, type ServerChannel, type Session } from 'ssh2';
import { GitAccess, GitRefused } from '../transport/git-access';
import { parseGitSshCommand, type GitSshCommand } from './ssh-command';
import { loadHostKeys } from './ssh-host-keys';

/** OpenSSH's MaxAuthTries: each refused key (or other method) counts. */
const MAX_AUTH_ATTEMPTS = 6;

/** The one user name git over SSH takes, as GitLab's `git@host:...`. */
const SSH_USER = 'git';

/** Who an authenticated connection acts for: a user's key, or a deploy key (no user: its projects). */
type SshCaller = { kind: 'user'; holder: SshKeyHolder } | { kind: 'deploy-key'; key: DeployKeyGrant };

/** `SHA256:<base64>` of a public key blob, as `ssh-keygen -l` prints it and `ssh_keys.fingerprint_sha256` stores it. */
const fingerprintOf = (blob: Buffer) =>
  `SHA256:${createHash('sha256').update(blob).digest('base64').replace(/=+$/, '')}`;

/**
 * Git over SSH, built into the Lode process (as gitlab-sshd and Gitea's built-in server), on the
 * `ssh2` package. Public keys only, user `git`: the offered key names the caller (a user's SSH key,
 * or a project's deploy key),
 * and its signature is verified before anything is granted. A session may only `exec` git's three
 * services on a project path, or open a shell that prints the welcome line people use to check their
 * key; everything else (ptys, port and agent forwarding, X11, subsystems, other commands) is refused,
 * most of it by ssh2 itself, which rejects every request nobody listens for.
 *
 * Access and activity go through `GitAccess`, and a push through `PushRecorder.session`, the code git
 * over HTTP uses: one policy and one push path for both transports.
 */
@Injectable()
export class GitSshServer implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('GitSsh');
  private listener?: NetServer;
  private ssh?: Server;
  private readonly sockets = new Set<Socket>();
  private readonly perAddress = new Map<string, number>();
  private readonly running = new Set<GitPackSession>();
  private draining = false;

  constructor(
    private readonly config: LodeConfig,
    private readonly actors: ActorResolver,
    private readonly access: GitAccess,
    private readonly pushes: PushRecorder,
    private readonly git: GitRepositories,
    private readonly deployKeys: DeployKeyQueries,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    if (this.config.sshPort > 0 && this.config.runsApi) await this.start();
  }

  async onApplicationShutdown(): Promise<void> {
    await this.stop(0);
  }

  /** The port the server listens on (LODE_SSH_PORT), or undefined when it does not run. */
  get port(): number | undefined {
    const address = this.listener?.address();
    return address && typeof address === 'object' ? address.port : undefined;
  }

  private async start(): Promise<void> {
    const hostKeys = await loadHostKeys(join(this.config.dataDir, 'ssh'));
    this.ssh = new Server({ hostKeys: hostKeys.map((k) => k.privateKey), ident: 'Lode' }, (client, info) =>
      this.onConnection(client, info.ip),
    );
    // Our own listener hands sockets to ssh2, so a refused or idle connection is cut at the socket.
    const listener = createServer((socket) => this.onSocket(socket));
    this.listener = listener;
    await new Promise<void>((resolve, reject) => {
      listener.once('error', reject);
      listener.listen(this.config.sshPort, this.config.sshHost, () => {
        listener.off('error', reject);
        resolve();
      });
    });
    listener.on('error', (err) => this.logger.error(`SSH listener: ${String(err)}`));
    this.logger.log(
      `git over SSH on ${this.config.sshHost}:${this.port}, clone URLs ${this.config.sshCloneBase}<path>.git; host keys: ${hostKeys
        .map((k) => `${k.type} ${k.fingerprint}`)
        .join(', ')}`,
    );
  }

  /**
   * Stops taking connections, lets running git commands finish for up to `drainMs` (as HTTP's
   * graceful stop), then closes every connection: no git process outlives it.
   */
  async stop(drainMs: number): Promise<void> {
    if (!this.listener) return;
    this.draining = true;
    const listener = this.listener;
    this.listener = undefined;
    const closed = new Promise<void>((resolve) => listener.close(() => resolve()));
    const deadline = Date.now() + drainMs;
    while (this.running.size && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    for (const run of this.running) run.cancel();
    for (const socket of this.sockets) socket.destroy();
    await closed;
  }

  private onSocket(socket: Socket): void {
    const address = socket.remoteAddress ?? 'unknown';
    const open = this.perAddress.get(address) ?? 0;
    if (this.draining || open >= this.config.sshMaxConnectionsPerAddress) {
      socket.destroy();
      return;
    }
    this.perAddress.set(address, open + 1);
    this.sockets.add(socket);
    socket.once('close', () => {
      this.sockets.delete(socket);
      const left = (this.perAddress.get(address) ?? 1) - 1;
      if (left > 0) this.perAddress.set(address, left);
      else this.perAddress.delete(address);
    });
    if (this.config.sshIdleTimeout > 0) socket.setTimeout(this.config.sshIdleTimeout * 1000, () => socket.destroy());
    // A connection that does not authenticate in time is cut, handshake or not.
    const login = setTimeout(() => socket.destroy(), this.config.sshLoginTimeout * 1000);
    login.unref();
    socket.once('close', () => clearTimeout(login));
    socket.once('lode:authenticated', () => clearTimeout(login));
    this.ssh?.injectSocket(socket);
  }

  private onConnection(client: Connection, address: string): void {
    const socket = (client as unknown as { _sock: Socket })._sock;
    let attempts = 0;
    let refusedCredentials = false;
    let caller: SshCaller | undefined;
    client.on('error', (err) => this.logger.debug(`SSH connection from ${address}: ${String(err)}`));
    client.on('close', () => {
      // A connection that offered credentials and never got in counts once against its address.
      if (!caller && refusedCredentials) void this.actors.refused(address).catch(() => undefined);
    });
    // An address past LODE_AUTH_FAILURES is cut off, valid key or not (as HTTP answers it 403); the
    // check fails open while Redis is away, as the throttle does everywhere.
    const throttled = this.actors.throttledFor(address).then(
      (wait) => wait > 0,
      () => false,
    );
    void throttled.then((refused) => refused && client.end());
    client.on('authentication', (ctx) => {
      const refuse = () => {
        if (ctx.method !== 'none') {
          refusedCredentials = true;
          attempts += 1;
        }
        if (attempts >= MAX_AUTH_ATTEMPTS) return void client.end();
        ctx.reject(['publickey']);
      };
      if (ctx.method !== 'publickey' || ctx.username !== SSH_USER) return refuse();
      Promise.all([throttled, this.authenticate(ctx)]).then(
        ([refused, found]) => {
          if (refused) return void client.end();
          if (found === 'refused') return refuse();
          if (found === 'acceptable') return ctx.accept();
          caller = found;
          socket.emit('lode:authenticated');
          ctx.accept();
        },
        (err: unknown) => {
          this.logger.error(`SSH authentication from ${address} failed: ${String(err)}`);
          refuse();
        },
      );
    });
    client.on('ready', () => {
      client.on('session', (accept) => {
        if (!caller) return;
        this.onSession(accept(), caller, address);
      });
    });
  }

  /**
   * The caller a public key names: 'acceptable' answers a client asking whether a key would do (no
   * signature yet), a caller only once the signature over the session proves the client holds it.
   */
  private async authenticate(ctx: AuthContext): Promise<SshCaller | 'acceptable' | 'refused'> {
    if (ctx.method !== 'publickey') return 'refused';
    const caller = await this.callerFor(fingerprintOf(ctx.key.data));
    if (!caller) return 'refused';
    if (!ctx.signature || !ctx.blob) return 'acceptable';
    const key = utils.parseKey(ctx.key.data);
    if (key instanceof Error) return 'refused';
    return key.verify(ctx.blob, ctx.signature, ctx.hashAlgo) === true ? caller : 'refused';
  }

  /** A user's key or a deploy key (never both: one key text is one or the other, GitLab's rule). */
  private async callerFor(fingerprint: string): Promise<SshCaller | undefined> {
    try {
      const holder = await this.actors.bySshKey(fingerprint);
      if (holder) return { kind: 'user', holder };
    } catch (err) {
      if (err instanceof UserBlocked) return undefined;
      throw err;
    }
    const key = await this.deployKeys.byFingerprint(fingerprint);
    return key ? { kind: 'deploy-key', key } : undefined;
  }

  private onSession(session: Session, caller: SshCaller, address: string): void {
    let protocol: string | undefined;
    // Only GIT_PROTOCOL, which asks for protocol v2 (OpenSSH's `AcceptEnv GIT_PROTOCOL`, as GitLab documents).
    session.on('env', (accept, reject, info) => {
      if (info.key === 'GIT_PROTOCOL') {
        protocol = info.val;
        accept?.();
      } else reject?.();
    });
    // `ssh git@host` with no command: GitLab's way to check a key, "Welcome to GitLab, @username!".
    session.on('shell', (accept) => {
      const channel = accept();
      // gitlab-shell greets a deploy key, which is no user, as "Anonymous".
      const name = caller.kind === 'user' ? `@${caller.holder.actor.username}` : 'Anonymous';
      channel.write(`Welcome to Lode, ${name}!\n`);
      finish(channel, 0);
    });
    session.on('exec', (accept, _reject, info) => {
      const channel = accept();
      // A context of its own, as an HTTP request has: what a push records carries the client's
      // address (the audit events' ip_address; SSH has no proxy header, so it is the TCP peer).
      const context = { requestId: randomUUID(), ip: address };
      RequestContexts.run(context, () => this.exec(channel, info.command, caller, protocol)).catch((err: unknown) => {
        this.logger.error(redactSecrets(`SSH exec ${JSON.stringify(info.command)}: ${String(err)}`));
        finish(channel, 1, 'Internal error');
      });
    });
  }

  private async exec(
    channel: ServerChannel,
    line: string,
    caller: SshCaller,
    protocol: string | undefined,
  ): Promise<void> {
    const command = parseGitSshCommand(line);
    // gitlab-shell's words for anything but git's services.
    if (!command || this.draining) return finish(channel, 1, 'Disallowed command');
    const push = command.service === 'git-receive-pack';
    let project: ProjectRow;
    let pusher: Actor | undefined;
    let branchCaller: BranchCaller;
    try {
      if (caller.kind === 'user') {
        pusher = caller.holder.actor;
        project = await this.access.project(command.fullPath, pusher);
        this.access.authorize(project, pusher, push);
        branchCaller = { accessLevel: project.access, isAdmin: pusher.isAdmin };
      } else {
        project = await this.access.projectForDeployKey(command.fullPath, caller.key);
        pusher = await this.access.authorizeDeployKey(project, caller.key, push);
        // GitLab 10.x holds a deploy key that may push to no branch rule (`skip_authorization`).
        branchCaller = { deployKey: true };
      }
      await this.access.requireRepository(project);
    } catch (err) {
      if (err instanceof GitRefused) return finish(channel, 1, err.message);
      throw err;
    }
    if (caller.kind === 'user') this.access.recordActivity(caller.holder.actor.id, caller.holder.lastActivityOn);
    await this.run(channel, command, project, pusher, branchCaller, protocol);
  }

  private async run(
    channel: ServerChannel,
    command: GitSshCommand,
    project: ProjectRow,
    /** Who a push is recorded as; undefined for a fetch. */
    pusher: Actor | undefined,
    branchCaller: BranchCaller,
    protocol: string | undefined,
  ): Promise<void> {
    const push =
      pusher && command.service === 'git-receive-pack' ? this.pushes.session(project, pusher, branchCaller) : undefined;
    const run = this.git.servePack(
      projectRepo(project.id),
      command.service,
      { stdin: channel, stdout: channel, stderr: channel.stderr },
      { protocol, checkRefUpdates: push?.check, beforeEnd: push ? () => push.finish() : undefined },
    );
    this.running.add(run);
    // A client that goes away mid-transfer leaves no git process behind.
    channel.once('close', () => run.cancel());
    try {
      finish(channel, await run.done);
    } finally {
      this.running.delete(run);
    }
  }
}

/** Ends a channel with an exit status, after a line on stderr (gitlab-shell's `GitLab: <message>` form) if given. */
function finish(channel: ServerChannel, code: number, message?: string): void {
  if (message) channel.stderr.write(`GitLab: ${message}\n`);
  channel.exit(code);
  channel.end();
}
