import { Invalidations } from '@app/platform';
import { Injectable } from '@nestjs/common';
import { ALL_PUBLIC_PROJECTS, publicProjectKey } from './public-project-answers';

/**
 * A wait for news of one project: `heard` settles on the first notice (true) or at the timeout or a
 * cancel (false), whichever comes first.
 */
export interface ProjectNoticeWait {
  readonly heard: Promise<boolean>;
  /** Stops waiting (settles `heard` at once, with false). */
  cancel(): void;
}

/**
 * Tells a waiter when an event about a project has been recorded, in this process or (through
 * `Invalidations`' NOTIFY) in any other: what lets a request that waits for a project's state to
 * change (a fork's copy to finish) read the project again when something happened, instead of polling
 * the database. A notice says only that something may have changed; the waiter reads what. Every
 * project event is announced under `publicProjectKey` (see `publicProjectInvalidationRoute`), and a
 * lost LISTEN connection announces `'all'`, which wakes every waiter.
 */
@Injectable()
export class ProjectChangeNotices {
  /** The waiters of each project; each removes itself when it settles, so nothing stays behind. */
  private readonly waiting = new Map<string, Set<() => void>>();

  constructor(invalidations: Invalidations) {
    invalidations.subscribe((keys) => this.hear(keys));
  }

  /** Starts waiting now (a notice after this call is not missed), for at most `timeoutMs`. */
  wait(projectId: number, timeoutMs: number): ProjectNoticeWait {
    const key = publicProjectKey(projectId);
    let settle!: (noticed: boolean) => void;
    const heard = new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => settle(false), timeoutMs);
      settle = (noticed) => {
        clearTimeout(timer);
        const set = this.waiting.get(key);
        set?.delete(notify);
        if (set?.size === 0) this.waiting.delete(key);
        resolve(noticed);
      };
    });
    const notify = () => settle(true);
    let set = this.waiting.get(key);
    if (!set) this.waiting.set(key, (set = new Set()));
    set.add(notify);
    return { heard, cancel: () => settle(false) };
  }

  private hear(keys: readonly string[] | 'all'): void {
    if (this.waiting.size === 0) return;
    const everyone = keys === 'all' || keys.includes(ALL_PUBLIC_PROJECTS);
    const woken = everyone ? [...this.waiting.keys()] : keys.filter((k) => this.waiting.has(k));
    for (const key of woken) for (const notify of [...(this.waiting.get(key) ?? [])]) notify();
  }
}
