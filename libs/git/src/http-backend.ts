import { spawn, type ChildProcess, type ChildProcessWithoutNullStreams } from 'node:child_process';
import type { StartChild } from './work-budget';
import { trackProcess } from './process-gauges';
import { basename, dirname } from 'node:path';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { GitHttpOptions } from './git-repositories';

const BACKEND = '/usr/lib/git-core/git-http-backend';

/**
 * Serves one smart-HTTP request for the bare repository at `repoPath` by running git's own CGI,
 * `git http-backend` (protocol v2, shallow and partial clones, whatever the installed git speaks).
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
  /** How the CGI is started: the work budget's `spawn` (at its nice level). */
  start: StartChild = spawn,
): ChildProcess {
  const query = new URL(req.url ?? '/', 'http://x').search.slice(1);
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    // The CGI resolves PATH_INFO under GIT_PROJECT_ROOT; giving it only the repository's own
    // directory keeps it from ever reaching another project's repository.
    GIT_PROJECT_ROOT: dirname(repoPath),
    PATH_INFO: `/${basename(repoPath)}/${service}`,
    // Our code decided access already; without this the CGI wants a `git-daemon-export-ok` file.
    GIT_HTTP_EXPORT_ALL: '1',
    QUERY_STRING: query,
    REQUEST_METHOD: req.method ?? 'GET',
    CONTENT_TYPE: header(req, 'content-type'),
    // receive-pack is refused by the CGI when REMOTE_USER is empty.
    REMOTE_USER: remoteUser,
    // Express' `req.ip` where there is one: the client behind a trusted proxy (LODE_TRUSTED_PROXIES).
    REMOTE_ADDR: (req as IncomingMessage & { ip?: string }).ip ?? req.socket.remoteAddress ?? '',
    // Without it the CGI silently falls back to protocol v0.
    GIT_PROTOCOL: header(req, 'git-protocol'),
    // git gzips large upload-pack requests; the CGI inflates them only when told.
    HTTP_CONTENT_ENCODING: header(req, 'content-encoding'),
  };
  const length = header(req, 'content-length');
  if (length) env.CONTENT_LENGTH = length;
  Object.assign(env, hook?.env);

  const cgi = trackProcess(
    start(BACKEND, [], { env, stdio: ['pipe', 'pipe', 'pipe'] }) as ChildProcessWithoutNullStreams,
  );
  const stop = () => {
    if (cgi.exitCode === null && cgi.signalCode === null) cgi.kill();
  };
  // A client that goes away mid-pack must not leave upload-pack or receive-pack running.
  res.on('close', stop);
  cgi.on('close', () => hook?.release());
  cgi.on('error', () => fail(res, 500));
  // The CGI may exit before reading the whole body (an error, a refused push): ignore EPIPE.
  cgi.stdin.on('error', () => undefined);
  cgi.stderr.resume();
  req.pipe(cgi.stdin);

  let head = Buffer.alloc(0);
  const onHead = (chunk: Buffer) => {
    head = Buffer.concat([head, chunk]);
    let end = head.indexOf('\r\n\r\n');
    let sep = 4;
    if (end < 0) {
      end = head.indexOf('\n\n');
      sep = 2;
    }
    if (end < 0) {
      if (head.length > 64 * 1024) {
        stop();
        fail(res, 502);
      }
      return;
    }
    cgi.stdout.off('data', onHead);
    cgi.stdout.off('end', onEarlyEnd);
    let status = 200;
    for (const line of head.subarray(0, end).toString('latin1').split(/\r?\n/)) {
      const m = /^([^:]+):\s*(.*)$/.exec(line);
      if (!m) continue;
      if (m[1].toLowerCase() === 'status') status = parseInt(m[2], 10) || 500;
      else res.setHeader(m[1], m[2]);
    }
    res.statusCode = status;
    const rest = head.subarray(end + sep);
    if (rest.length) res.write(rest);
    // pipe() pauses the CGI whenever the socket's buffer is full.
    const { beforeEnd } = options;
    if (!beforeEnd) return void cgi.stdout.pipe(res);
    cgi.stdout.pipe(res, { end: false });
    cgi.on('close', (code) => {
      beforeEnd(code === 0)
        .catch(() => undefined)
        .finally(() => res.end());
    });
  };
  const onEarlyEnd = () => fail(res, 502);
  cgi.stdout.on('data', onHead);
  cgi.stdout.on('end', onEarlyEnd);
  return cgi;
}

function header(req: IncomingMessage, name: string): string {
  const v = req.headers[name];
  return Array.isArray(v) ? v.join(', ') : (v ?? '');
}

export function fail(res: ServerResponse, status: number): void {
  if (!res.headersSent) res.writeHead(status, { 'Content-Type': 'text/plain' }).end();
  else res.destroy();
}
