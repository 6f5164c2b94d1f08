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
    // Where each ref's recorded chain now ends (a deleted ref's head is its zeros). A push may hold
    // several updates of one ref (grouped API commits, recorded gaps): the last one is where it ends,
    // and one statement may upsert a row only once.
    const heads = new Map(d.updates.map((u) => [u.ref, u.after]));
    if (heads.size)
      await db.query(
        `insert into recorded_refs (project_id, ref, sha)
         select $1, u.ref, u.after from unnest($2::text[], $3::text[]) as u(ref, after)
             where exists (select 1 from projects where id = $1)
         on conflict (project_id, ref) do update set sha = excluded.sha`,
        [d.projectId, [...heads.keys()], [...heads.values()]],
      );
  },
};
