import { avatarUrl, type UrlContext } from '@app/users';
import type { NamespaceRecord } from '../projections/namespace.record';
import type { MemberRow } from '../queries/group.queries';

/** GitLab's Group entity (the list and summary shape). */
export const serializeGroup = (g: NamespaceRecord, ctx: UrlContext) => ({
  id: g.id,
  name: g.name,
  path: g.path,
  description: g.description,
  visibility: g.visibility,
  lfs_enabled: g.lfsEnabled,
  avatar_url: null as string | null,
  web_url: `${ctx.externalUrl}/groups/${g.fullPath}`,
  request_access_enabled: g.requestAccessEnabled,
  full_name: g.fullName,
  full_path: g.fullPath,
  parent_id: g.parentId,
});

export type GroupJson = ReturnType<typeof serializeGroup>;

/** GitLab's Member entity: the user's basic view plus the membership. */
export const serializeMember = (m: MemberRow, ctx: UrlContext) => ({
  id: m.id,
  name: m.name,
  username: m.username,
  state: m.state,
  avatar_url: avatarUrl({ id: m.id, avatar: m.avatar, email: m.email }, ctx),
  web_url: `${ctx.externalUrl}/${m.username}`,
  access_level: m.access_level,
  expires_at: m.expires_at,
});
