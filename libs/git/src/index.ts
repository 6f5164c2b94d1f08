/** Everything git behind one port: libgit2 through nodegit, the cat-file pool, the command helper, `git http-backend`, archives. */
/** The Nest module that provides GitRepositories to every context. */
export { GitModule } from './git.module';
/** The port, and the shapes its answers take. */
export {
  GitRepositories,
  CommitRefused,
  projectRepo,
  type Archive,
  type ArchiveExtension,
  type BlameRange,
  type BlobInfo,
  type Branch,
  type CommitInfo,
  type CommitLogPage,
  type CommitSignature,
  type CommitLogQuery,
  type CommitStats,
  type CompareLimits,
  type Comparison,
  type Contributor,
  type FileDiff,
  type FileAtRef,
  type FastForward,
  type FileEntry,
  type GitHttpOptions,
  type FileAction,
  type NewCommit,
  type NewCherryPick,
  type NewRevert,
  type RevertOutcome,
  type NewTagObject,
  type Person,
  type GitPackIo,
  type GitPackOptions,
  type GitPackService,
  type GitPackSession,
  type ProposedRefUpdate,
  type RefUpdateCheck,
  type HeldBlob,
  type PushedCommit,
  type RawBlob,
  type RefCommand,
  type RefName,
  type RefUpdate,
  type RepoRef,
  type RepositoryStatistics,
  type Tag,
  type TreeEntry,
} from './git-repositories';
/** git's `check-ref-format --branch`, without a process (GitLab's GitRefValidator). */
export { validRefName } from './ref-names';
/** GitLab's archive format names to files, and an archive's ETag before it is made (for If-None-Match). */
export { archiveEtag, archiveExtension } from './archive-store';
/** A file of a tree with its size (`GitRepositories.sizedFiles`). */
export type { SizedFile } from './repository-contents';
/** Where a project's bare repository lives under the data directory: for tests and tools that look at the disk. */
export { repositoryPath } from './git-cli';
/** What the git port's processes are doing (running processes, the cat-file pool), for the metrics. */
export { GitProcessGauges } from './process-gauges';
/** A repository's bundle, HEAD and config for a backup, and its restore from them. */
export {
  bundleRepository,
  describeRepository,
  restoreRepository,
  type RepositoryDescription,
} from './repository-backup';
/** The heavy git work budget (one per process): its slots, for operators' metrics and tests. */
export { GitWorkBudget } from './work-budget';
export { drainHandedOff } from './spawn-helper';
