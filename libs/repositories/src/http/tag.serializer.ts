import type { Tag } from '@app/git';
import { serializeCommit } from './commit.serializer';

/**
 * GitLab's Tag entity: `target` is the tag object of an annotated tag and the commit of a lightweight
 * one; `message` is null for a lightweight tag. `release` is null: Lode has no release notes yet.
 */
export const serializeTag = (t: Tag) => ({
  name: t.name,
  message: t.message,
  target: t.target,
  commit: serializeCommit(t.commit),
  release: null,
});
