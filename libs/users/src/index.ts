/** The users context: identity, credentials and authentication. Other contexts import only this file. */
export { UsersModule, UsersHttpModule } from './users.module';
export { UsersWorkerModule } from './users-worker.module';
export { Users1763780000100 } from './migrations/1763780000100-users';
export { SshKeyFingerprints1763780001200 } from './migrations/1763780001200-ssh-key-fingerprints';
export { SshKeyExpiryAndUserNote1763780002600 } from './migrations/1763780002600-ssh-key-expiry-and-user-note';
export { UserStatuses1763780002610 } from './migrations/1763780002610-user-statuses';
export { WebSessions1763780004000 } from './migrations/1763780004000-web-sessions';
/** Sign-ins to the web pages (password or token), checked against the user's and token's state on every request. */
export { WebSessions, type SignInRefusal, type SignInResult } from './sessions/web-sessions';
export { UserQueries } from './queries/user.queries';
/** A commit's GPG signature checked against the keys users registered (GitLab's Gitlab::Gpg::Commit). */
export { CommitSignatures, type GpgCommitSignature, type GpgVerificationStatus } from './queries/commit-signatures';
/** Credentials (a token, HTTP Basic) to the `Actor` every transport acts as. */
export {
  ActorResolver,
  AuthThrottled,
  UserBlocked,
  type Authenticated,
  type SshKeyHolder,
} from './queries/actor-resolver';
export { userJoinSql, usersFromSql, isInternalUserSql, isExternalUserSql } from './queries/user-sql';
export { TopLevelPaths } from './commands/delete-user.command';
/** One key text is a user's key or a deploy key, never both: the port projects implements, and the lock both sides take. */
export {
  DeployKeyFingerprints,
  lockSshKeyFingerprint,
  userSshKeyFingerprintTaken,
} from './queries/ssh-key-fingerprints';
/** `GET /keys` finds deploy keys too: the port projects implements. */
export { DeployKeyLookup, type DeployKeyProjectLink, type InstanceDeployKey } from './queries/deploy-key-lookup';
/** GitLab's SSH public key parsing and fingerprints, for every kind of key (users' and deploy keys). */
export { parseSshPublicKey, SshKeyError, type ParsedSshKey } from './domain/ssh-public-key';
export type { UserRecord } from './projections/user.record';
export type { UserEvent, UserProfile } from './domain/user';
export { newUserProfile, type NewUserProfile } from './domain/user';
export { namespacePathErrors, RESERVED_TOP_LEVEL } from './domain/namespace-path';
export {
  serializeUserBasic,
  serializeUser,
  avatarUrl,
  type UrlContext,
  type UserBasicJson,
} from './http/user.serializer';
export { ReadUserScope, type ActorRequest } from './http/private-token.guard';
export { SeedRoot, ROOT_TOKEN_SCOPES } from './commands/seed-root.command';
export { CreateAccessToken } from './commands/access-token.commands';
export { gitScopesAllow } from './domain/access-token';
/** A user made by an administrator (POST /users, `lode create-user`): GitLab's validation and 409s. */
export { CreateUser } from './commands/create-user.command';
export { ChangeUserBlock } from './commands/block-user.command';
export { MAINTENANCE_QUEUE } from './jobs/remove-user-files.job';
export { RecordUserActivity } from './commands/record-user-activity.command';
/** Avatars: GitLab's AvatarUploader rules, files under the data directory, and serving them. */
export {
  AvatarStore,
  ProjectAvatarStore,
  OwnerAvatarStore,
  MAX_AVATAR_BYTES,
  avatarPath,
  type AvatarOwnerKind,
  type UploadedFileRef,
} from './avatars';
export { avatarParam, uploadedFile } from './http/request-files';
export { sendAvatar } from './http/avatars.controller';
