import { serializeUserBasic, type UrlContext } from '@app/users';
import type { ActivityRow } from './activity.queries';

/**
 * GitLab's Event entity (lib/api/entities.rb of 10.x, in its order): the project, `action_name`, the
 * target (none for the events Lode records: `target_iid` is 10.x's, null here), the author as
 * UserBasic, `push_data` for pushes only, and `author_username`. `title` comes first and is always
 * null: events lost their own titles in 9.5, but 10.x's doc/api/events.md still shows the key, and
 * the issue asked for it.
 */
export const serializeActivity = (r: ActivityRow, urls: UrlContext) => ({
  title: null,
  project_id: r.project_id,
  action_name: r.action_name,
  target_id: r.target_id,
  target_iid: r.target_id,
  target_type: r.target_type,
  author_id: r.author_id,
  target_title: r.target_title,
  created_at: r.created_at.toISOString(),
  author: serializeUserBasic(
    {
      id: r.author_id,
      name: r.author_name,
      username: r.author_username,
      state: r.author_state,
      avatar: r.author_avatar,
      email: r.author_email,
    },
    urls,
  ),
  ...(r.push_data ? { push_data: r.push_data } : {}),
  author_username: r.author_username,
});
