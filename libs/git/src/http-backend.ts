import { collectAsStreamed } from '@app/platform';
import { spawn, type ChildProcess, type ChildProcessWithoutNullStreams } from 'node:child_process';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { access } from 'node:fs/promises';
import { createGunzip } from 'node:zlib';
import type { GitHttpOptions } from './git-repositories';
import { GIT_PROTOCOL, requestedProtocolVersion } from './pack-service';
import { pktLine } from './receive-pack-advertisement';
import { trackProcess } from './process-gauges';
import type { StartChild } from './work-budget';

/** The two services of smart HTTP, by the request's path or `?service=`. */
const SERVICES = new Set(['upload-pack', 'receive-pack']);

/** `git http-backend`'s `hdr_nocache`: nothing of smart HTTP may be cached. */
export const NO_CACHE = {
  Expires: 'Fri, 01 Jan 1980 00:00:00 GMT',
  Pragma: 'no-cache',
  'Cache-Control': 'no-cache, max-age=0, must-revalidate',
};

/**
 * Serves one smart-HTTP request for the bare repository at `repoPath` the way `git http-backend`
 * does, without starting it: the CGI's own work is a few headers, the `# service=` preamble and an
 * inflated request body, and then it runs `git upload-pack` or `git receive-pack` and waits. Started
 * directly, that is one process fewer for each of a push's two requests and a clone's two or more
 * (GitLab's Workhorse runs the services through Gitaly the same way). Whatever the installed git
 * speaks still works (protocol v2, shallow and partial clones): the services are git's own.
 * Bodies are streamed both ways with back-pressure: a pack is never held in memory.
 * `service` is the part after the repository (`info/refs`, `git-upload-pack`, `git-receive-pack`).
 */
export function serveGitHttp(
  req: IncomingMessage,
  res: ServerResponse,
  repoPath: string,
  service: string,
  remoteUser: string,
  options: GitHttpOptions = {},
  /** The ref-update hook's environment for this push (`RefUpdateHooks.register`), and its release. */
  hook?: { env: NodeJS.ProcessEnv; release: () => void },
  /** How git is started: the work budget's `spawn` (at its nice level). */
  start: StartChild = spawn,
): ChildProcess | undefined {
  const advertisement = service === 'info/refs';
  const name = (
    advertisement ? (new URL(req.url ?? '/', 'http://x').searchParams.get('service') ?? '') : service
  ).replace(/^git-/, '');
  if (!SERVICES.has(name)) {
    hook?.release();
    res.writeHead(403, { 'Content-Type': 'text/plain' }).end('Unsupported service\n');
    return undefined;
  }
  // Passed on only when it looks like what git sends; the preamble below follows what was passed.
  const sent = header(req, 'git-protocol');
  const protocol = GIT_PROTOCOL.test(sent) ? sent : '';
  const headers: Record<string, string> = {
    ...NO_CACHE,
    'Content-Type': `application/x-git-${name}-${advertisement ? 'advertisement' : 'result'}`,
  };
  if (!advertisement) {
    // http-backend's `check_content_type`, in its words.
    const expected = `application/x-git-${name}-request`;
    const received = header(req, 'content-type');
    if (received !== expected) {
      hook?.release();
      res
        .writeHead(415, { ...NO_CACHE, 'Content-Type': 'text/plain' })
        .end(`Expected POST with Content-Type '${expected}', but received '${received || '(null)'}' instead.\n`);
      return undefined;
    }
  }
  // http-backend's `run_service`: receive-pack's reflog entries name the pusher.
  const user = remoteUser || 'anonymous';
  const address = (req as IncomingMessage & { ip?: string }).ip ?? req.socket.remoteAddress ?? '';
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    GIT_TERMINAL_PROMPT: '0',
    GIT_COMMITTER_NAME: user,
    GIT_COMMITTER_EMAIL: `${user}@http.${address || '(none)'}`,
    ...hook?.env,
  };
  // Without it the service silently speaks protocol v0.
  if (protocol) env.GIT_PROTOCOL = protocol;
  const args = advertisement ? [name, '--advertise-refs', repoPath] : [name, '--stateless-rpc', repoPath];
  const child = trackProcess(
    start('git', args, { env, stdio: ['pipe', 'pipe', 'pipe'] }) as ChildProcessWithoutNullStreams,
  );
  const stop = () => {
    if (child.exitCode === null && child.signalCode === null) child.kill();
  };
  /** Answered otherwise (a spawn error, a body that is not gzip): git's output is not sent. */
  let answered = false;
  const refuse = (status: number, message?: string) => {
    if (answered) return;
    answered = true;
    stop();
    // Whatever git still says goes nowhere (never written to a response already ended).
    child.stdout.unpipe(res);
    child.stdout.resume();
    fail(res, status, message);
  };
  // A client that goes away mid-pack must not leave upload-pack or receive-pack running.
  res.on('close', stop);
  child.on('close', () => hook?.release());
  child.on('error', () => {
    hook?.release();
    refuse(500);
  });
  // git may exit before reading the whole body (an error, a refused push): ignore EPIPE.
  child.stdin.on('error', () => undefined);
  child.stderr.resume();
  const encoding = header(req, 'content-encoding');
  if (advertisement) child.stdin.end();
  else if (encoding === 'gzip' || encoding === 'x-gzip') {
    // git gzips large upload-pack requests (http-backend's `inflate_request`).
    const gunzip = createGunzip();
    gunzip.on('error', () => refuse(400, 'The request body is not valid gzip\n'));
    req.pipe(gunzip).pipe(child.stdin);
    collectAsStreamed(gunzip);
  } else {
    req.pipe(child.stdin);
    collectAsStreamed(req);
  }

  // The head goes with git's first bytes, so a service that fails before saying anything is
  // answered as http-backend would have refused it: 404 for a repository gone from the disk
  // (its `enter_repo`), 500 otherwise, rather than a 200 with an empty body.
  let started = false;
  const begin = () => {
    if (started || answered || res.headersSent) return;
    started = true;
    res.writeHead(200, headers);
    // http-backend's preamble: the service's name first, except in protocol v2.
    if (advertisement && requestedProtocolVersion(protocol) < 2) res.write(`${pktLine(`# service=git-${name}\n`)}0000`);
  };
  child.stdout.once('data', begin);
  collectAsStreamed(child.stdout);
  // pipe() pauses git whenever the socket's buffer is full.
  child.stdout.pipe(res, { end: false });
  // The answer ends once git's output has all been handed to the response: a child started by the
  // spawn helper reports its exit as soon as its socket ends, with output the response has not
  // taken yet still buffered (a clone to a slow client).
  const drained = new Promise<void>((resolve) => {
    if (child.stdout.readableEnded) return resolve();
    child.stdout.once('end', resolve);
    res.once('close', resolve);
  });
  const { beforeEnd } = options;
  child.on('close', (code) => {
    const silent = !started && code !== 0;
    if (!silent) begin();
    // A push's record runs whatever git's status (its refs may have moved before a failure or a
    // kill) and before the client hears the end.
    void (beforeEnd ? beforeEnd(code === 0).catch(() => undefined) : Promise.resolve())
      .then(() => (silent ? refuseSilent() : drained))
      .finally(() => {
        if (!answered) res.end();
      });
  });
  const refuseSilent = async () => {
    const exists = await access(repoPath).then(
      () => true,
      () => false,
    );
    refuse(exists ? 500 : 404, exists ? undefined : 'Repository not found\n');
  };
  return child;
}

export function header(req: IncomingMessage, name: string): string {
  const v = req.headers[name];
  return Array.isArray(v) ? v.join(', ') : (v ?? '');
}

export function fail(res: ServerResponse, status: number, message?: string): void {
  if (!res.headersSent) res.writeHead(status, { 'Content-Type': 'text/plain' }).end(message);
  else res.destroy();
}
