import { GitRepositories, projectRepo } from '@app/git';
import { EventStore } from '@app/platform';
import { Injectable, Logger, type OnApplicationBootstrap } from '@nestjs/common';
import { projectDecider } from './project';

/**
 * At start: the repositories a killed process made for projects it never wrote (CreateProject makes
 * the repository first, outside the transaction) are removed, and the markers of creations that did
 * commit are forgotten. Only creations whose maker is known to be gone are looked at (a process of
 * this machine that no longer runs, see @app/git's process owners), so a live neighbour's creation
 * in progress is never touched. Ids are never reused, so a removed repository has no later claimant.
 */
@Injectable()
export class AbandonedCreations implements OnApplicationBootstrap {
  private readonly logger = new Logger('Projects');

  constructor(
    private readonly git: GitRepositories,
    private readonly store: EventStore,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    try {
      const removed = await this.sweep();
      if (removed.length)
        this.logger.log(
          `removed ${removed.length} repositories made for projects a stopped process never created: ${removed.join(', ')}`,
        );
    } catch (err) {
      // Starting matters more; `lode check` reports what is left.
      this.logger.warn(`could not look for unfinished project creations: ${String(err)}`);
    }
  }

  /** The project ids whose repository was removed. */
  async sweep(): Promise<number[]> {
    const removed: number[] = [];
    for (const projectId of await this.git.abandonedCreations()) {
      const repo = projectRepo(projectId);
      const project = await this.store.transact((uow) => uow.load(`project-${projectId}`, projectDecider));
      if (!project.exists && (await this.git.exists(repo))) {
        await this.git.remove(repo);
        removed.push(projectId);
      }
      await this.git.settled(repo);
    }
    return removed;
  }
}
