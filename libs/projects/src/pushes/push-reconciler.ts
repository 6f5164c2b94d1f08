import { LodeConfig } from '@app/platform';
import { Injectable, Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { ProjectQueries } from '../projects/project.queries';
import { PendingPushes } from './pending-pushes';
import { PushRecorder } from './push-recorder';

/**
 * How often each process that serves git looks for such pushes: with LODE_PUSH_RECONCILE_AFTER's 30 s,
 * a push left behind by a process that is not known to be gone (another machine's, a container's) is
 * recorded within 45 s of its pre-receive.
 */
const RECONCILE_EVERY_MS = 15_000;

/**
 * Records the pushes git applied whose own process could not record them: killed between the ref
 * update and its `RepositoryPushed`, or PostgreSQL away through all its retries. Each such push is
 * still written down (`PendingPushes`, from its pre-receive); the reconciler records the updates
 * that moved their ref, as the pusher written down, so hooks, statistics and `last_activity_at` catch
 * up: those whose ref holds the proposed value, and those a later push overtook (see `planChain`; a
 * later push's record may also have taken them already). Updates whose ref holds something else and
 * that no later move started from moved nothing (refused, lost a race). Several processes may run it:
 * each claims the pushes it records.
 */
@Injectable()
export class PushReconciler implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('PushReconciler');
  private timer?: NodeJS.Timeout;
  private firstTick?: NodeJS.Timeout;
  private running?: Promise<number>;

  constructor(
    private readonly config: LodeConfig,
    private readonly pending: PendingPushes,
    private readonly projects: ProjectQueries,
    private readonly recorder: PushRecorder,
  ) {}

  onApplicationBootstrap(): void {
    if (!this.config.runsApi) return;
    // At start (a crash leaves its pushes behind: a dead process's are taken at once) and then every
    // 15 s; never what keeps a process up.
    this.timer = setInterval(() => this.tick(), RECONCILE_EVERY_MS);
    this.timer.unref();
    this.firstTick = setTimeout(() => this.tick(), 1_000);
    this.firstTick.unref();
  }

  async onApplicationShutdown(): Promise<void> {
    await this.stop();
  }

  /**
   * Stops the background rounds and waits for one under way; `reconcile` still works when called.
   * Shutdown uses it, and so do tests that drive the reconciler by hand and count what it took.
   */
  async stop(): Promise<void> {
    clearInterval(this.timer);
    clearTimeout(this.firstTick);
    await this.running?.catch(() => undefined);
  }

  /**
   * Records every written-down push older than `olderThanMs`; answers how many it took. The default,
   * LODE_PUSH_RECONCILE_AFTER (30 s), is past the end of any live push (its refs move right after its
   * pre-receive, its record follows git's exit within the recorder's ~8 s of retries); a push taken
   * by its own process and the reconciler alike is recorded once all the same (the strike-off in the
   * record's transaction), and the move of one taken before its refs moved is recorded by the next
   * push of its ref, as the range its chain misses.
   */
  async reconcile(olderThanMs = this.config.pushReconcileAfter * 1000): Promise<number> {
    let taken = 0;
    // A dead process's pushes (killed on this machine) are taken at once, whatever their age.
    const gone = await this.pending.goneOwners();
    for (;;) {
      const batch = await this.pending.claimStale(olderThanMs, 20, gone);
      if (!batch.length) return taken;
      for (const push of batch) {
        taken += 1;
        const project = await this.projects.findForSystem(push.projectId);
        if (!project) {
          await this.pending.forget(push.id);
          continue;
        }
        this.logger.warn(`recording push ${push.id} to project ${push.projectId} by ${push.pusher.username} late`);
        await this.recorder.record(project, push.pusher, push.updates, push.id, 'reconciler');
      }
    }
  }

  private tick(): void {
    if (this.running) return;
    this.running = this.reconcile()
      .catch((err: unknown) => {
        this.logger.warn(`could not reconcile pushes: ${String(err)}`);
        return 0;
      })
      .finally(() => (this.running = undefined));
  }
}
