import { avatarUrl, type UrlContext } from '@app/users';
import { GROUP_SETTING_LIST } from '../domain/group-settings';
import type { MemberRow } from '../queries/group.queries';
import type { NamespaceRecord } from '../queries/namespace-access';

/**
 * The settings GitLab shows after `parent_id` (its place for those added after 10.x's), in the table's
 * order; the others (`listed`) are written below at the place GitLab's Group entity gives them.
 */
const APPENDED = GROUP_SETTING_LIST.filter((s) => s.shown === 'appended');

/** GitLab's Group entity (the list and summary shape). */
export const serializeGroup = (g: NamespaceRecord, ctx: UrlContext) => {
  const out = {
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
  };
  for (const s of APPENDED) (out as Record<string, unknown>)[s.wire] = g[s.key];
  return out;
};

export type GroupJson = ReturnType<typeof serializeGroup>;

/** GitLab's PublicGroupDetails (14.x), the items of `GET /projects/:id/groups`. */
export const serializePublicGroup = (g: NamespaceRecord, ctx: UrlContext) => ({
  id: g.id,
  web_url: `${ctx.externalUrl}/groups/${g.fullPath}`,
  name: g.name,
  avatar_url: null as string | null,
  full_name: g.fullName,
  full_path: g.fullPath,
});

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
