import { collectAsStreamed } from '@app/platform';
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import type { StartChild } from './work-budget';
import { trackProcess } from './process-gauges';
import type { GitPackIo, GitPackOptions, GitPackService, GitPackSession } from './git-repositories';

/** What each service runs: `git <subcommand> <repository>`. */
const SUBCOMMANDS: Record<GitPackService, string> = {
  'git-upload-pack': 'upload-pack',
  'git-receive-pack': 'receive-pack',
  'git-upload-archive': 'upload-archive',
};

/** A protocol request git itself would pass on: `version=2`, possibly with other `key=value` pairs. */
export const GIT_PROTOCOL = /^[\w.=:-]{1,256}$/;

/**
 * The protocol version a client's `GIT_PROTOCOL` asks for, as git's `determine_protocol_version_server`
 * reads it: the highest of the colon-separated `version=0|1|2` keys (any other value is unknown and
 * ignored); 0 for none, or for a value git would not be passed (not GIT_PROTOCOL).
 */
export function requestedProtocolVersion(protocol: string): number {
  if (!GIT_PROTOCOL.test(protocol)) return 0;
  return Math.max(0, ...protocol.split(':').map((key) => Number(/^version=([012])$/.exec(key)?.[1] ?? 0)));
}

/**
 * Runs one git service over a byte stream (git over SSH: the channel is the stream), the way sshd
 * and gitlab-shell run them: `git upload-pack <path>` with the client's bytes on its standard input,
 * its answer and progress on the channel's stdout and stderr. Piped both ways, so a pack is never held
 * in memory and a slow client slows git rather than filling a buffer. `options.beforeEnd` runs after git
 * exits and before the session reports its exit status (a push is recorded before the client is told).
 */
export function servePack(
  repoPath: string,
  service: GitPackService,
  io: GitPackIo,
  options: GitPackOptions = {},
  /** The ref-update hook's environment for this push (`RefUpdateHooks.register`), and its release. */
  hook?: { env: NodeJS.ProcessEnv; release: () => void },
  /** How git is started: the work budget's `spawn` (at its nice level). */
  start: StartChild = spawn,
): GitPackSession {
  const env: NodeJS.ProcessEnv = { PATH: process.env.PATH, GIT_TERMINAL_PROMPT: '0', ...hook?.env };
  // Protocol v2 (and later) is asked for through GIT_PROTOCOL, as OpenSSH's AcceptEnv passes it.
  if (options.protocol && GIT_PROTOCOL.test(options.protocol)) env.GIT_PROTOCOL = options.protocol;
  const child = trackProcess(
    start('git', [SUBCOMMANDS[service], repoPath], {
      env,
      stdio: ['pipe', 'pipe', 'pipe'],
    }) as ChildProcessWithoutNullStreams,
  );
  let finished = false;
  const cancel = () => {
    if (!finished && child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  };
  // git may exit before reading all it was sent (a refused push, an error): its stdin's EPIPE is expected.
  child.stdin.on('error', () => undefined);
  io.stdin.on('error', cancel);
  io.stdin.pipe(child.stdin);
  child.stdout.pipe(io.stdout, { end: false });
  collectAsStreamed(io.stdin);
  collectAsStreamed(child.stdout);
  child.stderr.pipe(io.stderr, { end: false });
  const exited = new Promise<number>((resolve) => {
    child.on('error', () => resolve(128));
    // 'close': its output streams are drained too, so every byte git wrote was handed to the channel.
    child.on('close', (code, signal) => resolve(code ?? (signal ? 128 : 1)));
  });
  const done = exited.then(async (code) => {
    finished = true;
    hook?.release();
    io.stdin.unpipe(child.stdin);
    if (options.beforeEnd) await options.beforeEnd(code === 0).catch(() => undefined);
    return code;
  });
  return { done, cancel };
}
