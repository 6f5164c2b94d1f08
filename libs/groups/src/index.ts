/** The groups context: namespaces (personal and groups), their ancestry and memberships, and all of `/groups`. */
export { GroupsModule, GroupsHttpModule } from './groups.module';
export { GroupsWorkerModule } from './groups-worker.module';
export { Groups1763780000300 } from './migrations/1763780000300-groups';
export { GroupSettings1763780002300 } from './migrations/1763780002300-group-settings';
export { GroupShares1763780002310 } from './migrations/1763780002310-group-shares';
export {
  ACCESS,
  GROUP_ACCESS_LEVELS,
  PROJECT_ACCESS_LEVELS,
  VISIBILITIES,
  visibilityLevel,
  moreOpenThan,
  type Visibility,
} from './domain/access-level';
export type { GroupEvent, GroupSettings } from './domain/group';
export { groupSettingsFrom, projectCreationAccess } from './domain/group-settings';
export { CreateGroup, UpdateGroup, DeleteGroup } from './commands/group.commands';
export { ChangeGroupMember } from './commands/group-member.commands';
export {
  NamespaceAccess,
  NamespaceContents,
  groupVisibleSql,
  groupAccessSql,
  type NamespaceRecord,
} from './queries/namespace-access';
export {
  ACTIVE_MEMBER,
  groupMembershipsSql,
  directMembershipsSql,
  personalOwnerMembershipSql,
  memberLevelSql,
  inheritedGroupLevelSql,
  personalOwnerLevelSql,
  memberSourceIdsSql,
  fromMemberGroupsSql,
  fromPersonalNamespaceSql,
  memberUserIdsSql,
  groupMemberUserIdsSql,
  personalOwnerIdSql,
  namespaceJoinSql,
  namespaceColumnsSql,
  personalNamespaceOfSql,
  userMembershipsSql,
} from './queries/group-sql';
export { GroupQueries, type GroupListFilters, type MemberRow } from './queries/group.queries';
export { upsertMember, removeMember, removeMembers, removeMembersWhere } from './projections/members';
export { serializeGroup, serializeMember, serializePublicGroup, type GroupJson } from './http/group.serializer';
export { ListMembersDto, expiresAtParam } from './http/exports';
export { GroupProjects, type EmbeddedProjectJson } from './http/group-projects';
