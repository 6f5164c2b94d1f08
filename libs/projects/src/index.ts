/** The projects context: projects, stars, shares, members of projects, and the projects group answers show (GroupProjects). */
export { ProjectsModule, ProjectsHttpModule } from './projects.module';
export { ProjectsWorkerModule } from './projects-worker.module';
export { GIT_QUEUE } from './repository-jobs/git-jobs';
export { Projects1763780000400 } from './migrations/1763780000400-projects';
export { ProjectAvatars1763780000800 } from './migrations/1763780000800-project-avatars';
export { DeployKeys1763780001100 } from './migrations/1763780001100-deploy-keys';
export { ProtectedBranches1763780001300 } from './migrations/1763780001300-protected-branches';
export { ProtectedTags1763780002500 } from './migrations/1763780002500-protected-tags';
export { ProtectedBranchForcePush1763780002501 } from './migrations/1763780002501-protected-branch-force-push';
export {
  ProjectQueries,
  type AuthorizedProject,
  type ProjectRow,
  type ProjectSummary,
} from './projects/project.queries';
export { allProjectIds, projectExistsSql } from './projects/project-sql';
export { ProjectChangeNotices, type ProjectNoticeWait } from './projects/project-change-notices';
export {
  PublicProjectAnswers,
  publicProjectReads,
  publicProjectInvalidationRoute,
} from './projects/public-project-answers';
export type { ProjectEvent } from './projects/project';
export type { DeployKeyEvent } from './deploy-keys/deploy-key';
/** Deploy keys for the SSH server: an offered key by its SHA256 fingerprint, with the projects it is enabled on. */
export {
  DeployKeyQueries,
  deployKeyLink,
  type DeployKeyGrant,
  type DeployKeyRow,
  type ProjectDeployKeyRow,
} from './deploy-keys/deploy-key.queries';
/** The one policy of who may read, download, fork and push a project, which every transport asks. */
export {
  ProjectAccessPolicy,
  type ProjectAccessFacts,
  type ProjectCaller,
  type PushRefusal,
  DEPLOY_KEY_REFUSALS,
  type DeployKeyLink,
  type DeployKeyPushRefusal,
} from './access/project-access-policy';
export {
  ZERO_SHA,
  isZeroSha,
  isBranchRef,
  isTagRef,
  type PushedCommit,
  type RefUpdate,
  type RepositoryPushedData,
  type RepositoryStatistics,
} from './pushes/repository-push';
export { serializeProject, serializeProjectSimple } from './projects/project.serializer';
/**
 * The push's one path: `PushRecorder.session` is every transport's entry (the gate at pre-receive, the
 * push written down, its record after git); `PushReconciler` records what a dead process could not.
 */
export { PushRecorder, type PushSession } from './pushes/push-recorder';
export { PushReconciler } from './pushes/push-reconciler';
export { RecordRepositoryPush } from './pushes/record-repository-push.command';
/** Pushes written down at their pre-receive until recorded: what the git transports and the reconciler use. */
export {
  PendingPushes,
  type OverduePushes,
  type PendingPush,
  type ProposedUpdate,
  type Pusher,
} from './pushes/pending-pushes';
export { PendingPushes1763780001500 } from './migrations/1763780001500-pending-pushes';
export { PendingPushOwners1763780003600 } from './migrations/1763780003600-pending-push-owners';
export { RecordedRefs1763780004600 } from './migrations/1763780004600-recorded-refs';
/**
 * Protected branches: a project's rules in one indexed query (`ProtectedBranchQueries.forProject`),
 * the pure decisions on them (`ProtectedBranchPolicy.refusal` for the pre-receive gate,
 * `ProtectedBranchPolicy.branchFlags` for the Branch entity), and the command behind the endpoints.
 */
export { ProtectedBranchQueries } from './protected-refs/protected-branch.queries';
export {
  ProtectedBranchPolicy,
  PROTECTED_BRANCH_REFUSALS,
  ruleMatches,
  type BranchCaller,
  type BranchChange,
  type BranchProtectionFlags,
  type BranchRepositoryFacts,
  type DefaultBranchProtection,
  type ProtectedBranchRule,
} from './protected-refs/protected-branch';
export { ProtectRepositoryBranch } from './protected-refs/protect-repository-branch.command';
export { UnprotectRepositoryBranch } from './protected-refs/unprotect-repository-branch.command';
/** Protected tags: a project's rules (`ProtectedTagQueries.forProject`) and the pre-receive gate's decision on them. */
export { ProtectedTagQueries } from './protected-refs/protected-tag.queries';
export {
  ProtectedTagPolicy,
  PROTECTED_TAG_REFUSALS,
  type ProtectedTagRule,
  type TagChange,
} from './protected-refs/protected-tag';
/**
 * Release notes of tags: the command behind `POST|PUT .../tags/:tag_name/release`, the releases of a
 * page of tags in one query (`ReleaseQueries.forTags`), and for the tag deletion endpoint the command
 * (`RemoveTagRelease`) or the pure decision (`removeTagRelease`, to append with the deletion's record).
 */
export { CreateTagRelease } from './releases/create-tag-release.command';
export { UpdateTagRelease } from './releases/update-tag-release.command';
export { RemoveTagRelease } from './releases/remove-tag-release.command';
export {
  ReleaseQueries,
  type ReleaseLinkRow,
  type ReleaseOrder,
  type ReleaseRow,
  type TagReleaseRow,
} from './releases/release.queries';
export { removeTagRelease, type ReleaseChanges, type TagRelease } from './releases/release';
/** The Releases API (11.7) over the same releases, and their asset links. */
export { CreateRelease } from './releases/create-release.command';
export { UpdateRelease } from './releases/update-release.command';
export { DeleteRelease } from './releases/delete-release.command';
export { AddReleaseLink } from './releases/add-release-link.command';
export { UpdateReleaseLink } from './releases/update-release-link.command';
export { RemoveReleaseLink } from './releases/remove-release-link.command';
export { LINK_TYPES, type LinkType, type ReleaseLinkValues } from './releases/release-link';
export { Releases1763780001600 } from './migrations/1763780001600-releases';
export { ReleaseDetails1763780002100 } from './migrations/1763780002100-release-details';
export { PushesOnOwnStreams1763780001800 } from './migrations/1763780001800-pushes-on-own-streams';
export { ReleasesOnOwnStreams1763780002150 } from './migrations/1763780002150-releases-on-own-streams';
export { ProjectSettingsKept1763780002400 } from './migrations/1763780002400-project-settings-kept';
/** GitLab's contribution events (the Events API), a read model projected from the event store. */
export { ActivityEvents1763780003100 } from './migrations/1763780003100-activity-events';
