import { spawn, type ChildProcess } from 'node:child_process';
import { commandStarted, trackProcess } from './process-gauges';

/*
 * Node starts a child process with fork() on the event loop's own thread, and fork copies the
 * parent's page tables: on this project's machines the call blocks the loop for about 0.8 ms in a
 * 40 MB process and 6 ms (11 ms at P95) in the 200 MB server (measured). A push ran six git
 * commands from the server, so forks alone capped pushes near 30 a second and stalled every other
 * request meanwhile. Short commands (plumbing whose whole output is read) therefore run from one
 * small helper process, which forks cheaply and off the server's loop; only the streaming
 * processes (the smart-HTTP CGI, cat-file streams, archives) are still started by the server.
 */

/** The helper: runs each command it is sent and answers its status and output (structured clone keeps Buffers whole). */
const HELPER_SOURCE = `
const { execFile } = require('node:child_process');
process.on('disconnect', () => process.exit(0));
process.on('message', (m) => {
  execFile(m.file, m.args, { cwd: m.cwd, encoding: 'buffer', maxBuffer: m.maxBuffer }, (err, stdout, stderr) => {
    const code = err ? (typeof err.code === 'number' ? err.code : -1) : 0;
    const failure = err && typeof err.code !== 'number' ? String(err.message) : undefined;
    if (process.connected) process.send({ id: m.id, code, failure, stdout, stderr });
  });
});
`;

export interface CommandResult {
  code: number;
  stdout: Buffer;
  stderr: Buffer;
}

export class CommandFailed extends Error {
  constructor(
    readonly file: string,
    readonly args: string[],
    readonly result: CommandResult,
    detail?: string,
  ) {
    super(`${file} ${args.join(' ')} failed (${result.code}): ${detail ?? result.stderr.toString().trim()}`);
  }
}

interface Pending {
  file: string;
  args: string[];
  resolve: (r: CommandResult) => void;
  reject: (e: Error) => void;
}

let helper: ChildProcess | undefined;
const pending = new Map<number, Pending>();
let nextId = 1;

function start(): ChildProcess {
  const child = trackProcess(
    spawn(process.execPath, ['-e', HELPER_SOURCE], {
      stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
      serialization: 'advanced',
      env: { ...process.env, GIT_TERMINAL_PROMPT: '0' },
    }),
  );
  child.on('message', (m: { id: number; code: number; failure?: string; stdout: Uint8Array; stderr: Uint8Array }) => {
    const p = pending.get(m.id);
    if (!p) return;
    pending.delete(m.id);
    idle();
    const result = { code: m.code, stdout: Buffer.from(m.stdout), stderr: Buffer.from(m.stderr) };
    if (m.code === 0) p.resolve(result);
    else p.reject(new CommandFailed(p.file, p.args, result, m.failure));
  });
  const gone = () => {
    if (helper === child) helper = undefined;
    for (const [id, p] of pending) {
      pending.delete(id);
      p.reject(new Error(`the command helper exited while running ${p.file} ${p.args.join(' ')}`));
    }
  };
  child.on('exit', gone);
  child.on('error', gone);
  return child;
}

/** The helper keeps the process alive only while it has work, so a CLI or a test run can end. */
function idle(): void {
  const channel = helper?.channel as { ref(): void; unref(): void } | undefined;
  if (pending.size) {
    channel?.ref();
    helper?.ref();
  } else {
    channel?.unref();
    helper?.unref();
  }
}

/**
 * Runs `file` with `args` in `cwd` from the helper process and answers its output; rejects with
 * CommandFailed when it exits with another status than 0 (or when the helper dies meanwhile: the
 * next call starts a new one).
 */
export function runCommand(
  file: string,
  args: string[],
  cwd?: string,
  maxBuffer = 64 * 1024 * 1024,
): Promise<CommandResult> {
  return new Promise((resolve, reject) => {
    helper ??= start();
    const id = nextId++;
    const ended = commandStarted();
    pending.set(id, {
      file,
      args,
      resolve: (r) => {
        ended();
        resolve(r);
      },
      reject: (e) => {
        ended();
        reject(e);
      },
    });
    idle();
    helper.send({ id, file, args, cwd, maxBuffer }, (err) => {
      if (!err || !pending.has(id)) return;
      pending.delete(id);
      idle();
      ended();
      reject(err);
    });
  });
}

/** Ends the helper (at shutdown); calls made afterwards start another. */
export function stopCommandRunner(): void {
  helper?.kill();
  helper = undefined;
}
