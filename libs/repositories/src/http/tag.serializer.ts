import type { Tag } from '@app/git';
import type { TagReleaseRow } from '@app/projects';
import { serializeCommit } from './commit.serializer';

/** GitLab's Release entity (10.x `Entities::Release`): the tag's name and its release notes. */
export const serializeRelease = (r: TagReleaseRow) => ({ tag_name: r.tagName, description: r.description });

/**
 * GitLab's Tag entity: `target` is the tag object of an annotated tag and the commit of a lightweight
 * one; `message` is null for a lightweight tag; `release` is the tag's release notes, null without.
 */
export const serializeTag = (t: Tag, release: TagReleaseRow | undefined) => ({
  name: t.name,
  message: t.message,
  target: t.target,
  commit: serializeCommit(t.commit),
  release: release ? serializeRelease(release) : null,
});
