import { createHash } from 'node:crypto';
import { hostname } from 'node:os';

/**
 * Which process built a file that is not finished yet (a repository mid-create, mid-fork), written
 * into its name or its marker, so a later start on the same machine can tell a dead builder's
 * leftovers from a live one's work and remove them at once, instead of waiting for them to go quiet.
 */
export interface ProcessOwner {
  pid: number;
  /** Seconds since the epoch at the process's start: a pid used again (PID 1 in a container) is another process. */
  startedAt: number;
  /** The first 8 hex digits of the host name's SHA-256: a data directory may be shared between machines. */
  host: string;
}

const hostTag = (name: string) => createHash('sha256').update(name).digest('hex').slice(0, 8);

export const THIS_PROCESS: ProcessOwner = {
  pid: process.pid,
  startedAt: Math.floor(performance.timeOrigin / 1000),
  host: hostTag(hostname()),
};

/** `o<pid>-<startedAt>-<host>`: the owner as file names carry it (digits, `o`, `-` and hex only). */
export const ownerTag = (o: ProcessOwner = THIS_PROCESS) => `o${o.pid}-${o.startedAt}-${o.host}`;

const TAG = /o(\d+)-(\d+)-([0-9a-f]{8})/;

export function parseOwnerTag(text: string): ProcessOwner | undefined {
  const m = TAG.exec(text);
  return m ? { pid: Number(m[1]), startedAt: Number(m[2]), host: m[3] } : undefined;
}

/**
 * Whether the owner is known to be gone: a process of this machine that no longer runs, or an earlier
 * process under this very pid. Another machine's, or a live pid of this one, is not known to be gone.
 */
export function ownerGone(o: ProcessOwner, self: ProcessOwner = THIS_PROCESS): boolean {
  if (o.host !== self.host) return false;
  if (o.pid === self.pid) return o.startedAt !== self.startedAt;
  try {
    process.kill(o.pid, 0);
    return false;
  } catch (err) {
    // EPERM: it runs, as another user.
    return (err as NodeJS.ErrnoException).code === 'ESRCH';
  }
}
