import type { GpgCommitSignature } from '@app/users';
import type { BlameRange, CommitInfo, CommitStats, FileDiff, RefName } from '@app/git';

/** GitLab's Commit entity (`lib/api/entities.rb`): lists, compare, branches and tags embed it. */
export const serializeCommit = (c: CommitInfo) => ({
  id: c.id,
  short_id: c.shortId,
  title: c.title,
  created_at: c.committedDate,
  parent_ids: c.parentIds,
  message: c.message,
  author_name: c.authorName,
  author_email: c.authorEmail,
  authored_date: c.authoredDate,
  committer_name: c.committerName,
  committer_email: c.committerEmail,
  committed_date: c.committedDate,
});

/** CommitWithStats: a listed commit with `with_stats=true`. */
export const serializeCommitWithStats = (c: CommitInfo & { stats?: CommitStats }) => ({
  ...serializeCommit(c),
  stats: c.stats ?? { additions: 0, deletions: 0, total: 0 },
});

/**
 * CommitDetail: `stats` unless `stats=false`; `status` and `last_pipeline` are null because Lode has
 * no CI (GitLab answers null for a commit without pipelines).
 */
export const serializeCommitDetail = (c: CommitInfo, projectId: number, stats: CommitStats | undefined) => ({
  ...serializeCommit(c),
  ...(stats ? { stats } : {}),
  status: null,
  last_pipeline: null,
  project_id: projectId,
});

/** GitLab's Diff entity (compare and a commit's diff); a side that does not exist has mode "0". */
export const serializeDiff = (d: FileDiff) => ({
  old_path: d.oldPath,
  new_path: d.newPath,
  a_mode: d.aMode,
  b_mode: d.bMode,
  new_file: d.newFile,
  renamed_file: d.renamedFile,
  deleted_file: d.deletedFile,
  diff: d.diff,
});

/** BasicRef: a branch or tag containing a commit. */
export const serializeRef = (r: RefName) => ({ type: r.type, name: r.name });

/** BlameRangeCommit, which leaves out `short_id`, `title` and `created_at`. */
export const serializeBlameRange = (r: BlameRange) => ({
  commit: {
    id: r.commit.id,
    parent_ids: r.commit.parentIds,
    message: r.commit.message,
    authored_date: r.commit.authoredDate,
    author_name: r.commit.authorName,
    author_email: r.commit.authorEmail,
    committed_date: r.commit.committedDate,
    committer_name: r.commit.committerName,
    committer_email: r.commit.committerEmail,
  },
  lines: r.lines,
});

/**
 * CommitSignature: GitLab 10.7's GpgSignature fields, with later GitLab's `signature_type` ("PGP") and
 * `commit_source` ("gitaly"), which today's clients may read.
 */
export const serializeCommitSignature = (s: GpgCommitSignature) => ({
  signature_type: 'PGP',
  gpg_key_id: s.gpgKeyId,
  gpg_key_primary_keyid: s.gpgKeyPrimaryKeyId,
  gpg_key_user_name: s.gpgKeyUserName,
  gpg_key_user_email: s.gpgKeyUserEmail,
  verification_status: s.verificationStatus,
  gpg_key_subkey_id: s.gpgKeySubkeyId,
  commit_source: 'gitaly',
});
