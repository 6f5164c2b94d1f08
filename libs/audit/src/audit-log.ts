import type { Recorded } from '@app/platform';

/*
 * What the audit log says about one event: pure, given what the projector remembers (`Recall`). The
 * entries follow GitLab's audit events (doc/api/audit_events.md, ee/lib/api/audit_events.rb and
 * ee/app/services/audit_event_service.rb of 13.x): an entity (`User`, `Group`, `Project`), an author,
 * and `details` with `change`, `from`, `to`, `author_name`, `target_id`, `target_type`,
 * `target_details`, `entity_path`, `ip_address`; Lode adds the token used (`token_id`, `token_name`,
 * never its secret) and the administrator behind a sudo (`sudo_by_id`, `sudo_by_username`,
 * `sudo_by_name`) or an impersonation token (`impersonated_by_*`).
 */

export type AuditEntityType = 'User' | 'Group' | 'Project';
export const AUDIT_ENTITY_TYPES: readonly AuditEntityType[] = ['User', 'Group', 'Project'];

/** What the projector remembers of a thing (`audit_entities`): `Namespace` is a user's personal namespace. */
export type RememberedType = AuditEntityType | 'Namespace' | 'Token';
export interface Remembered {
  path: string | null;
  name: string | null;
  state: Record<string, unknown>;
}
export type Recall = (type: RememberedType, id: number) => Promise<Remembered | undefined>;
/** Several recalls at once, in order (the table's memory asks them in one statement). */
export type RecallMany = (keys: readonly (readonly [RememberedType, number])[]) => Promise<(Remembered | undefined)[]>;

/** RecallMany as one `recall` after another (a memory with nothing to batch). */
export const recallEach =
  (recall: Recall): RecallMany =>
  async (keys) => {
    const found: (Remembered | undefined)[] = [];
    for (const [type, id] of keys) found.push(await recall(type, id));
    return found;
  };

export interface AuditEntry {
  authorId: number;
  entityType: AuditEntityType;
  entityId: number;
  details: Record<string, unknown>;
}

/** Events that are no one's write: activity, deliveries and what jobs report back. */
const NOT_AUDITED = new Set([
  'UserActivityRecorded',
  'ProjectHookDelivered',
  'ProjectHousekeepingFinished',
  'ProjectImportStatusChanged',
]);

/** Keys whose values never reach the audit log (or its memory): digests, tokens, sealed secrets. */
export const SECRET_KEYS = new Set([
  'runnersToken',
  'passwordDigest',
  'digest',
  'token',
  'identities',
  'identity',
  'secret',
  'sealed',
  'url',
]);

/** A write someone made: a request's or the command line's event with an actor, not a job's report. */
export function audited(e: Recorded): boolean {
  const m = e.metadata ?? {};
  return typeof m.actorId === 'number' && m.origin !== 'worker' && !NOT_AUDITED.has(e.type);
}

const num = (v: unknown): number | undefined => (typeof v === 'number' && Number.isInteger(v) ? v : undefined);

/** Whose audit log an event is in: its project, else its group, else its user, else its stream's. */
export function entityOf(e: Recorded): { type: AuditEntityType; id: number } | undefined {
  const d = (e.data ?? {}) as Record<string, unknown>;
  const projectId = num(d.projectId);
  if (projectId !== undefined) return { type: 'Project', id: projectId };
  const groupId = num(d.groupId);
  if (groupId !== undefined) return { type: 'Group', id: groupId };
  const userId = num(d.userId);
  if (userId !== undefined) return { type: 'User', id: userId };
  const m = /^(project|group|user)-(\d+)$/.exec(e.streamId);
  if (m) return { type: (m[1][0].toUpperCase() + m[1].slice(1)) as AuditEntityType, id: Number(m[2]) };
  return undefined;
}

const snake = (key: string) => key.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);

/** `ProtectedBranchCreated` in a project's log: `protected branch created`. */
function words(type: string, entity: AuditEntityType): string {
  const parts = type.split(/(?=[A-Z])/).map((w) => w.toLowerCase());
  return (parts[0] === entity.toLowerCase() && parts.length > 1 ? parts.slice(1) : parts).join(' ');
}

/** GitLab's names where it has one (AuditEventService: `add`/`remove` of members, `change` of access). */
const CHANGE_NAMES: Record<string, string> = {
  ProjectMemberAdded: 'added member',
  GroupMemberAdded: 'added member',
  ProjectMemberUpdated: 'access level',
  GroupMemberUpdated: 'access level',
  ProjectMemberRemoved: 'removed member',
  GroupMemberRemoved: 'removed member',
  ProjectTransferred: 'namespace',
  GroupTransferred: 'parent',
  RepositoryPushed: 'push',
  AccessTokenCreated: 'personal access token created',
  AccessTokenRevoked: 'personal access token revoked',
  ProjectCreated: 'created',
  ProjectForked: 'created (fork)',
  GroupCreated: 'created',
  UserCreated: 'created',
  ProjectDeleted: 'destroyed',
  GroupDeleted: 'destroyed',
  UserDeleted: 'destroyed',
};

/** The events whose `changes` are the entity's own settings, which the projector remembers. */
const VALUE_CHANGES = new Set(['ProjectUpdated', 'GroupUpdated', 'UserUpdated']);

/** GitLab's access level names (Gitlab::Access.human_access). */
const ACCESS_NAMES: Record<number, string> = {
  10: 'Guest',
  20: 'Reporter',
  30: 'Developer',
  40: 'Maintainer',
  50: 'Owner',
};
const accessName = (level: unknown) => (typeof level === 'number' ? (ACCESS_NAMES[level] ?? String(level)) : null);

/** GitLab audits the visibility level by its name (`Gitlab::VisibilityLevel.level_name`): `Private`. */
function shown(key: string, value: unknown): unknown {
  if (value === undefined) return null;
  if (key === 'visibility' && typeof value === 'string') return value[0].toUpperCase() + value.slice(1);
  return value;
}

/** A value GitLab would show as text; objects (feature maps) are flattened one level by the caller. */
const plain = (v: unknown) => v === null || ['string', 'number', 'boolean'].includes(typeof v);

interface Change {
  change: string;
  from?: unknown;
  to?: unknown;
  target?: { id: number | string; type: string; details: string | null };
}

/** One `Change` per changed value of a `*Updated` event with `changes`; `from` is what was remembered. */
function valueChanges(changes: Record<string, unknown>, before: Record<string, unknown>): Change[] {
  const out: Change[] = [];
  for (const [key, to] of Object.entries(changes)) {
    if (SECRET_KEYS.has(key)) continue;
    if (to !== null && typeof to === 'object' && !Array.isArray(to)) {
      const was = (before[key] ?? {}) as Record<string, unknown>;
      for (const [sub, value] of Object.entries(to as Record<string, unknown>))
        out.push({ change: `${snake(sub)}_enabled`, from: was[sub] ?? null, to: value });
      continue;
    }
    out.push({
      change: snake(key),
      from: plain(before[key]) || Array.isArray(before[key]) ? shown(key, before[key]) : null,
      to: shown(key, to),
    });
  }
  return out;
}

/** Every entry an audited event makes, in order (their ordinals make their ids). */
export async function describe(
  e: Recorded,
  recall: Recall,
  recallMany: RecallMany = recallEach(recall),
): Promise<AuditEntry[]> {
  const m = e.metadata;
  const authorId = m.actorId!;
  const entity = entityOf(e) ?? { type: 'User' as const, id: authorId };
  // Every entry names these: asked together (one statement against the table, not up to five).
  const asked: (readonly [RememberedType, number])[] = [
    [entity.type, entity.id],
    ['User', authorId],
  ];
  const at = (type: RememberedType, id: number | undefined) => (id === undefined ? -1 : asked.push([type, id]) - 1);
  const [tokenAt, sudoAt, impersonatorAt] = [
    at('Token', m.tokenId),
    at('User', m.sudoBy),
    at('User', m.impersonatedBy),
  ];
  // A creation names its thing before the projector remembers it: its parent's path and its own (the
  // parent asked with the rest; what the projector then remembers of it finds the parent held).
  const creation = creationOf(e);
  const [parentGroupAt, parentNamespaceAt] = creation
    ? [at('Group', creation.parentId), creation.inNamespace ? at('Namespace', creation.parentId) : -1]
    : [-1, -1];
  const found = await recallMany(asked);
  const [self, author] = found;
  const token = found[tokenAt];
  const sudo = found[sudoAt];
  const impersonator = found[impersonatorAt];
  const entityPath =
    self?.path ??
    (creation
      ? joinedPath(found[parentGroupAt]?.path ?? found[parentNamespaceAt]?.path ?? null, creation.path)
      : pathFromEvent(e));
  const itself = { id: entity.id, type: entity.type, details: entityPath };

  const changes = await changesOf(e, entity.type, self, recall, recallMany);
  return changes.map((c) => {
    const target = c.target ?? itself;
    const details: Record<string, unknown> = { change: c.change };
    if (c.from !== undefined) details.from = c.from;
    if (c.to !== undefined) details.to = c.to;
    Object.assign(details, {
      author_name: author?.name ?? null,
      target_id: target.id,
      target_type: target.type,
      target_details: target.details,
      entity_path: entityPath,
      ip_address: m.ipAddress ?? null,
    });
    if (m.tokenId !== undefined) Object.assign(details, { token_id: m.tokenId, token_name: token?.name ?? null });
    if (m.sudoBy !== undefined)
      Object.assign(details, {
        sudo_by_id: m.sudoBy,
        sudo_by_username: sudo?.path ?? null,
        sudo_by_name: sudo?.name ?? null,
      });
    if (m.impersonatedBy !== undefined)
      Object.assign(details, {
        impersonated_by_id: m.impersonatedBy,
        impersonated_by_username: impersonator?.path ?? null,
        impersonated_by_name: impersonator?.name ?? null,
      });
    return { authorId, entityType: entity.type, entityId: entity.id, details };
  });
}

/**
 * A project's or group's creation: the id of the namespace it is made in (a group, or for a project
 * also a user's namespace; undefined for a top-level group) and its own path.
 */
function creationOf(e: Recorded): { parentId: number | undefined; inNamespace: boolean; path: string } | undefined {
  const d = (e.data ?? {}) as Record<string, unknown>;
  if (d.path === undefined || d.path === null) return undefined;
  if (e.type === 'ProjectCreated' || e.type === 'ProjectForked')
    return typeof d.namespaceId === 'number'
      ? { parentId: d.namespaceId, inNamespace: true, path: String(d.path) }
      : undefined;
  if (e.type === 'GroupCreated')
    return {
      parentId: typeof d.parentId === 'number' ? d.parentId : undefined,
      inNamespace: false,
      path: String(d.path),
    };
  return undefined;
}

const joinedPath = (parent: string | null, path: string) => (parent ? `${parent}/${path}` : path);

/** A user's creation names them before the projector remembers them. */
function pathFromEvent(e: Recorded): string | null {
  const d = (e.data ?? {}) as Record<string, unknown>;
  if (e.type === 'UserCreated' && typeof d.username === 'string') return d.username;
  return null;
}

async function changesOf(
  e: Recorded,
  entity: AuditEntityType,
  self: Remembered | undefined,
  recall: Recall,
  recallMany: RecallMany,
): Promise<Change[]> {
  const d = (e.data ?? {}) as Record<string, unknown>;
  const state = self?.state ?? {};
  const name = CHANGE_NAMES[e.type] ?? words(e.type, entity);
  const userTarget = async (userId: number) => ({
    id: userId,
    type: 'User',
    details: (await recall('User', userId))?.path ?? null,
  });

  // Only the entity's own settings have remembered values to show as `from`.
  if (VALUE_CHANGES.has(e.type) && d.changes && typeof d.changes === 'object') {
    const out = valueChanges(d.changes as Record<string, unknown>, state);
    // The password's digest is never shown; that it changed is.
    if (e.type === 'UserUpdated' && d.passwordDigest !== undefined) out.push({ change: 'password' });
    return out.length ? out : [{ change: name }];
  }
  if (/Member(Added|Updated|Removed)$/.test(e.type) && typeof d.userId === 'number') {
    const members = (state.members ?? {}) as Record<string, number>;
    const target = await userTarget(d.userId);
    if (e.type.endsWith('Added')) return [{ change: name, to: accessName(d.accessLevel), target }];
    if (e.type.endsWith('Updated'))
      return [{ change: name, from: accessName(members[d.userId]), to: accessName(d.accessLevel), target }];
    return [{ change: name, from: accessName(members[d.userId]), target }];
  }
  if (e.type === 'ProjectTransferred' || e.type === 'GroupTransferred') {
    const parentId = num(e.type === 'ProjectTransferred' ? d.namespaceId : d.parentId);
    const parent = parentId === undefined ? undefined : await namespacePath(parentId, recallMany);
    const last = self?.path?.split('/').pop() ?? null;
    const to = last === null ? null : parent ? `${parent}/${last}` : last;
    return [{ change: name, from: self?.path ?? null, to }];
  }
  if (e.type === 'RepositoryPushed') {
    const updates = (Array.isArray(d.updates) ? d.updates : []) as { ref: string; before: string; after: string }[];
    const target = { id: entityIdOf(d), type: 'Project', details: updates.map((u) => u.ref).join(', ') || null };
    if (updates.length === 1) return [{ change: name, from: updates[0].before, to: updates[0].after, target }];
    return [{ change: name, target }];
  }
  if (e.type.startsWith('AccessToken') && typeof d.tokenId === 'number') {
    const remembered = await recall('Token', d.tokenId);
    const tokenName = typeof d.name === 'string' ? d.name : (remembered?.name ?? null);
    return [{ change: name, target: { id: d.tokenId, type: 'PersonalAccessToken', details: tokenName } }];
  }
  if ((e.type.includes('Shared') || e.type.includes('Unshared')) && entity === 'Project' && num(d.groupId)) {
    const groupId = num(d.groupId)!;
    const target = { id: groupId, type: 'Group', details: (await recall('Group', groupId))?.path ?? null };
    return [{ change: name, to: accessName(d.groupAccess) ?? undefined, target }];
  }
  if (e.type.includes('Shared') && entity === 'Group' && num(d.sharedWithGroupId)) {
    const groupId = num(d.sharedWithGroupId)!;
    const target = { id: groupId, type: 'Group', details: (await recall('Group', groupId))?.path ?? null };
    return [{ change: name, to: accessName(d.groupAccess) ?? undefined, target }];
  }
  if (entity !== 'User' && typeof d.userId === 'number' && /Star/.test(e.type) === false) {
    return [{ change: name, target: await userTarget(d.userId) }];
  }
  return [{ change: name }];
}

const entityIdOf = (d: Record<string, unknown>) => num(d.projectId) ?? 0;

/** A namespace's full path: a group's, or a user's personal namespace (their username). */
export async function namespacePath(id: number, recallMany: RecallMany): Promise<string | null> {
  // A namespace id is a group's or a user's: both asked at once (one statement against the table).
  const [group, personal] = await recallMany([
    ['Group', id],
    ['Namespace', id],
  ]);
  return group?.path ?? personal?.path ?? null;
}
