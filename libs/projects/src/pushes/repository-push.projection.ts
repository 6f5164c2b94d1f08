import type { EventHandlers } from '@app/platform';
import type { RepositoryPushedData } from './repository-push';

/** The push's part of the `projects` read model. Keyed on the project in the event's data, not its stream, wherever pushes are appended. */
export const repositoryPushHandlers: EventHandlers<{ type: 'RepositoryPushed'; data: RepositoryPushedData }> = {
  RepositoryPushed: async ({ data: d }, db) => {
    // GitLab moves `last_activity_at` on a push (not `updated_at`), and the first push names the default branch.
    await db.query(
      `update projects set last_activity_at = $2, default_branch = coalesce($3, default_branch), commit_count = $4, repository_size = $5
            where id = $1`,
      [d.projectId, d.at, d.defaultBranch, d.statistics.commitCount, d.statistics.repositorySize],
    );
  },
};
