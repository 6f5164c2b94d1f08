import { NamespaceAccess, type GroupEvent } from '@app/groups';
import { EventStore, LodeConfig, type Decider, type DomainEvent } from '@app/platform';
import { ProjectQueries, type ProjectEvent, type RepositoryPushedData } from '@app/projects';
import { UserQueries, type UserEvent } from '@app/users';
import { Injectable } from '@nestjs/common';
import { SystemHookQueries, type SystemHookTarget } from '../queries/system-hook.queries';
import type { Pusher } from './push-payload';
import {
  groupMemberPayload,
  groupPayload,
  keyPayload,
  projectPayload,
  repositoryUpdatePayload,
  systemPushKind,
  systemPushPayload,
  teamMemberPayload,
  userPayload,
  type GroupFacts,
  type GroupMemberEventName,
  type MembershipFacts,
  type ProjectFacts,
  type TeamEventName,
  type UserFacts,
} from './system-hook-payloads';
import {
  groupTraceDecider,
  projectTraceDecider,
  userTraceDecider,
  valueBefore,
  type GroupTrace,
  type MemberTrace,
  type ProjectTrace,
  type UserTrace,
} from './system-hook-traces';

/** The domain events a system hook hears of, and nothing else (the route's filter). */
export const SYSTEM_HOOK_SOURCE_EVENTS = [
  'ProjectCreated',
  'ProjectForked',
  'ProjectUpdated',
  'ProjectTransferred',
  'ProjectDeleted',
  'ProjectMemberAdded',
  'ProjectMemberUpdated',
  'ProjectMemberRemoved',
  'UserCreated',
  'UserUpdated',
  'UserDeleted',
  'SshKeyAdded',
  'SshKeyRemoved',
  'GroupCreated',
  'GroupUpdated',
  'GroupDeleted',
  'GroupMemberAdded',
  'GroupMemberUpdated',
  'GroupMemberRemoved',
  'RepositoryPushed',
] as const;

/** The system hook event of each membership change (`user_update_for_*` is GitLab 13.x's). */
const MEMBER_EVENT_NAMES = {
  ProjectMemberAdded: 'user_add_to_team',
  ProjectMemberUpdated: 'user_update_for_team',
  ProjectMemberRemoved: 'user_remove_from_team',
  GroupMemberAdded: 'user_add_to_group',
  GroupMemberUpdated: 'user_update_for_group',
  GroupMemberRemoved: 'user_remove_from_group',
} as const satisfies Record<string, TeamEventName | GroupMemberEventName>;

/** One payload and the system hooks that hear it. */
interface Announcement {
  payload: unknown;
  /** GitLab's hook scope: `all` for every system hook, else the switch the hook must have on. */
  scope: 'all' | 'push_events' | 'tag_push_events' | 'repository_update_events';
}

/** The system fan-out's input: the recorded event, as the outbox route saw it. */
export interface SystemEventInput {
  type: string;
  data: Record<string, unknown>;
  position: string;
}

/** The events of SYSTEM_HOOK_SOURCE_EVENTS with their data's types. */
type SourceEvent = Extract<ProjectEvent | GroupEvent | UserEvent, { type: (typeof SYSTEM_HOOK_SOURCE_EVENTS)[number] }>;

/**
 * Builds a domain event's system hook payloads once and answers one delivery per system hook
 * that hears it. Names, paths, levels and keys come from the fold of the project's, group's or
 * user's stream (system-hook-traces.ts), so a deleted one still has them; full paths and owners from
 * the namespaces as they are now; a push's project and pusher from the rows, as the project hooks'.
 * Nothing is read when there is no system hook.
 */
@Injectable()
export class SystemHookFanOut {
  constructor(
    private readonly hooks: SystemHookQueries,
    private readonly store: EventStore,
    private readonly namespaces: NamespaceAccess,
    private readonly projects: ProjectQueries,
    private readonly users: UserQueries,
    private readonly config: LodeConfig,
  ) {}

  /** The deliveries for one event (none when no system hook hears it), each as `deliver` builds it. */
  async deliveries<D>(
    input: SystemEventInput,
    deliver: (hook: SystemHookTarget, payload: unknown, deliveryId: string) => D,
  ): Promise<D[]> {
    const hooks = await this.hooks.targets();
    if (!hooks.length) return [];
    const announcements = await this.announce(input, hooks);
    return announcements.flatMap((a, i) =>
      hooks
        .filter((h) => a.scope === 'all' || h[a.scope])
        .map((h) => deliver(h, a.payload, `deliver-s${h.id}-p${input.position}-${i}`)),
    );
  }

  private async announce(input: SystemEventInput, hooks: SystemHookTarget[]): Promise<Announcement[]> {
    const e = { type: input.type, data: input.data } as SourceEvent;
    const all = (payload: unknown | undefined): Announcement[] => (payload ? [{ payload, scope: 'all' }] : []);
    switch (e.type) {
      case 'ProjectCreated':
      case 'ProjectForked': {
        const p = await this.projectFacts(e.data.projectId);
        return all(p && projectPayload('project_create', p.facts));
      }
      case 'ProjectDeleted': {
        const p = await this.projectFacts(e.data.projectId, e.data.namespaceId);
        return all(p && projectPayload('project_destroy', { ...p.facts, updatedAt: e.data.at }));
      }
      case 'ProjectUpdated': {
        const p = await this.projectFacts(e.data.projectId);
        if (!p) return [];
        // A transfer into a less open group lowers the project's visibility with an update of the
        // same instant: GitLab's TransferService does that without UpdateService, so no `project_update`.
        const changed = Object.keys(e.data.changes);
        if (p.trace.transferredAt === e.data.at && changed.length === 1 && changed[0] === 'visibility') return [];
        // 10.x Projects::UpdateService: a changed path is `project_rename` (with the old path), else `project_update`.
        if (e.data.changes.path !== undefined) {
          const oldPath = valueBefore(p.trace.paths, e.data.at, e.data.changes.path);
          const oldFull = oldPath === undefined ? undefined : `${p.namespacePath}/${oldPath}`;
          return all(projectPayload('project_rename', p.facts, oldFull));
        }
        return all(projectPayload('project_update', p.facts));
      }
      case 'ProjectTransferred': {
        const p = await this.projectFacts(e.data.projectId);
        const from = await this.namespaces.findNamespace(e.data.fromNamespaceId);
        return all(
          p && projectPayload('project_transfer', p.facts, from ? `${from.fullPath}/${p.facts.path}` : undefined),
        );
      }
      case 'ProjectMemberAdded':
      case 'ProjectMemberUpdated':
      case 'ProjectMemberRemoved': {
        const p = await this.projectFacts(e.data.projectId);
        const m = p && (await this.membership(p.trace.members[e.data.userId], e.data.userId, e.data.at));
        return all(p && m && teamMemberPayload(MEMBER_EVENT_NAMES[e.type], m, p.facts));
      }
      case 'GroupCreated': {
        const g = await this.groupFacts(e.data.groupId);
        return all(g && groupPayload('group_create', g.facts));
      }
      case 'GroupDeleted': {
        const g = await this.groupFacts(e.data.groupId);
        return g ? this.groupGone(g.facts, g.trace, e.data.at) : [];
      }
      case 'GroupUpdated': {
        // 10.x Group `after_update :path_changed_hook, if: :path_changed?`: only a new path is heard.
        if (e.data.changes.path === undefined) return [];
        const g = await this.groupFacts(e.data.groupId);
        if (!g) return [];
        const oldPath = valueBefore(g.trace.paths, e.data.at, e.data.changes.path);
        return all(
          groupPayload(
            'group_rename',
            g.facts,
            oldPath === undefined ? undefined : { path: oldPath, fullPath: g.parentPath + oldPath },
          ),
        );
      }
      case 'GroupMemberAdded':
      case 'GroupMemberUpdated':
      case 'GroupMemberRemoved': {
        const g = await this.groupFacts(e.data.groupId);
        const m = g && (await this.membership(g.trace.members[e.data.userId], e.data.userId, e.data.at));
        return all(g && m && groupMemberPayload(MEMBER_EVENT_NAMES[e.type], m, g.facts));
      }
      case 'UserCreated': {
        // The ghost user is GitLab's internal placeholder, made on demand: no `user_create` for it.
        if (e.data.ghost) return [];
        const u = await this.userFacts(e.data.userId);
        return all(u && userPayload('user_create', u.facts));
      }
      case 'UserDeleted': {
        const u = await this.userFacts(e.data.userId);
        if (!u) return [];
        // 10.x Users::DestroyService: the personal projects go first (Projects::DestroyService each).
        const projects = await this.projectsLastIn(u.trace.namespaceId);
        const owner = { fullPath: u.facts.username, ownerName: u.facts.name, ownerEmail: u.facts.email };
        return [
          ...projects.map((p) => this.projectGone(p.id, p.trace, owner, e.data.at)),
          ...all(userPayload('user_destroy', { ...u.facts, updatedAt: e.data.at })),
        ];
      }
      case 'UserUpdated': {
        // 10.x User `after_update :username_changed_hook, if: :username_changed?`.
        if (e.data.changes.username === undefined) return [];
        const u = await this.userFacts(e.data.userId);
        if (!u) return [];
        return all(
          userPayload('user_rename', u.facts, valueBefore(u.trace.usernames, e.data.at, e.data.changes.username)),
        );
      }
      case 'SshKeyAdded':
      case 'SshKeyRemoved': {
        const u = await this.userFacts(e.data.userId);
        const key = u?.trace.keys[e.data.keyId];
        if (!u || !key) return [];
        return all(
          keyPayload(e.type === 'SshKeyAdded' ? 'key_create' : 'key_destroy', {
            id: e.data.keyId,
            key: key.key,
            username: u.facts.username,
            createdAt: key.createdAt,
            updatedAt: e.type === 'SshKeyAdded' ? key.createdAt : e.data.at,
          }),
        );
      }
      case 'RepositoryPushed':
        return this.announcePush(e.data, hooks);
    }
  }

  /**
   * 10.x PostReceive: each ref's `push` / `tag_push` to the hooks with that switch on (`push_hooks`,
   * `tag_push_hooks`), then one `repository_update` for the whole push (`repository_update_hooks`).
   */
  private async announcePush(push: RepositoryPushedData, hooks: SystemHookTarget[]): Promise<Announcement[]> {
    const wanted = hooks.some((h) => h.push_events || h.tag_push_events || h.repository_update_events);
    if (!wanted || !push.updates.length) return [];
    const project = await this.projects.findForSystem(push.projectId);
    if (!project) return []; // deleted meanwhile
    const user = await this.users.find(push.userId);
    const pusher: Pusher = user
      ? { id: user.id, name: user.name, username: user.username, email: user.email }
      : { id: push.userId, name: 'Ghost User', username: 'ghost', email: '' };
    const refs: Announcement[] = push.updates.map((u) => ({
      payload: systemPushPayload(u, project, pusher, this.config),
      scope: systemPushKind(u.ref) === 'tag_push' ? 'tag_push_events' : 'push_events',
    }));
    return [
      ...refs,
      {
        payload: repositoryUpdatePayload(push.updates, project, pusher, this.config),
        scope: 'repository_update_events',
      },
    ];
  }

  /**
   * A deleted group takes its projects and subgroups with it by the read model's cascade, with no
   * events of their own. 10.x Groups::DestroyService destroys each project (`project_destroy`; a
   * project's members go by `delete_all`, no hook), then each subgroup the same way, then the group:
   * its members by `dependent: :destroy`, each a `user_remove_from_group` (Member's
   * `post_destroy_hook`), then `group_destroy`. The streams say which they were.
   */
  private async groupGone(g: GroupFacts, trace: GroupTrace, at: string): Promise<Announcement[]> {
    const owner = { fullPath: g.fullPath, ownerName: g.name, ownerEmail: '' };
    const projects = (await this.projectsLastIn(g.id)).map((p) => this.projectGone(p.id, p.trace, owner, at));
    const subgroups: Announcement[] = [];
    for (const sub of await this.subgroupsLastOf(g.id)) {
      const facts: GroupFacts = {
        id: sub.id,
        name: sub.trace.name,
        path: sub.trace.path,
        fullPath: `${g.fullPath}/${sub.trace.path}`,
        createdAt: sub.trace.createdAt,
        updatedAt: sub.trace.updatedAt,
      };
      subgroups.push(...(await this.groupGone(facts, sub.trace, at)));
    }
    const members: Announcement[] = [];
    // In the order they joined (the association's order), those still members; a deleted user's
    // memberships went with them.
    const current = Object.entries(trace.members)
      .filter(([, m]) => !m.gone)
      .sort(([a, m], [b, n]) => m.since.localeCompare(n.since) || Number(a) - Number(b));
    for (const [userId, m] of current) {
      const membership = await this.membership(m, Number(userId), at, { skipDeleted: true });
      if (membership)
        members.push({ payload: groupMemberPayload('user_remove_from_group', membership, g), scope: 'all' });
    }
    return [
      ...projects,
      ...subgroups,
      ...members,
      { payload: groupPayload('group_destroy', { ...g, updatedAt: at }), scope: 'all' },
    ];
  }

  /** A membership's facts for its payload: its level and dates from the stream, the member's own. */
  private async membership(
    m: MemberTrace | undefined,
    userId: number,
    at: string,
    { skipDeleted = false } = {},
  ): Promise<MembershipFacts | undefined> {
    if (!m) return undefined;
    const user = await this.userFacts(userId);
    if (!user || (skipDeleted && user.trace.deleted)) return undefined;
    return { accessLevel: m.level, createdAt: m.since, updatedAt: at, user: user.facts };
  }

  private projectGone(
    id: number,
    trace: ProjectTrace,
    ns: { fullPath: string; ownerName: string; ownerEmail: string },
    at: string,
  ): Announcement {
    const facts: ProjectFacts = {
      id,
      name: trace.name,
      path: trace.path,
      pathWithNamespace: `${ns.fullPath}/${trace.path}`,
      ownerName: ns.ownerName,
      ownerEmail: ns.ownerEmail,
      visibility: trace.visibility,
      createdAt: trace.createdAt,
      updatedAt: at,
    };
    return { payload: projectPayload('project_destroy', facts), scope: 'all' };
  }

  /** The projects whose last namespace was `namespaceId` and that were not deleted on their own. */
  private async projectsLastIn(namespaceId: number): Promise<{ id: number; trace: ProjectTrace }[]> {
    const found: { id: number; trace: ProjectTrace }[] = [];
    for (const id of await this.streamIds(
      ['ProjectCreated', 'ProjectForked', 'ProjectTransferred'],
      'namespaceId',
      namespaceId,
      'project',
    )) {
      const trace = await this.fold(`project-${id}`, projectTraceDecider);
      if (trace && !trace.deleted && trace.namespaceId === namespaceId) found.push({ id, trace });
    }
    return found;
  }

  /** The groups whose last parent was `groupId` and that were not deleted on their own. */
  private async subgroupsLastOf(groupId: number): Promise<{ id: number; trace: GroupTrace }[]> {
    const found: { id: number; trace: GroupTrace }[] = [];
    for (const id of await this.streamIds(['GroupCreated', 'GroupTransferred'], 'parentId', groupId, 'group')) {
      const trace = await this.fold(`group-${id}`, groupTraceDecider);
      if (trace && !trace.deleted && trace.parentId === groupId) found.push({ id, trace });
    }
    return found;
  }

  /** The ids of the `<kind>-<id>` streams holding an event of these types with `data[field] = value`, ascending. */
  private async streamIds(types: string[], field: string, value: number, kind: string): Promise<number[]> {
    const ids = new Set<number>();
    for (const type of types)
      for (const streamId of await this.store.streamIdsWith(type, field, value)) {
        const m = new RegExp(`^${kind}-(\\d+)$`).exec(streamId);
        if (m) ids.add(Number(m[1]));
      }
    return [...ids].sort((a, b) => a - b);
  }

  /** The stream as committed (no transaction, no stream lock: a fan-out decides nothing, and runs often). */
  private fold<S>(streamId: string, decider: Decider<S, DomainEvent>): Promise<S> {
    return this.store.read(streamId, decider);
  }

  /**
   * A project's facts: its name, path and visibility from its stream (so a deleted project has them
   * too), its namespace's path and owner from the namespace (a deleted project's namespace is
   * `namespaceId`, still there). 10.x `project_data`: the owner is the personal namespace's user,
   * or the group, which has no e-mail (`""`).
   */
  private async projectFacts(
    projectId: number,
    namespaceId?: number,
  ): Promise<{ facts: ProjectFacts; trace: ProjectTrace; namespacePath: string } | undefined> {
    const trace = await this.fold(`project-${projectId}`, projectTraceDecider);
    if (!trace) return undefined;
    const ns = await this.namespaces.findNamespace(namespaceId ?? trace.namespaceId);
    if (!ns) return undefined;
    const owner = ns.kind === 'user' && ns.ownerId !== null ? await this.users.find(ns.ownerId) : null;
    const facts: ProjectFacts = {
      id: projectId,
      name: trace.name,
      path: trace.path,
      pathWithNamespace: `${ns.fullPath}/${trace.path}`,
      ownerName: owner ? owner.name : ns.kind === 'group' ? ns.name : null,
      ownerEmail: owner?.email ?? '',
      visibility: trace.visibility,
      createdAt: trace.createdAt,
      updatedAt: trace.updatedAt,
    };
    return { facts, trace, namespacePath: ns.fullPath };
  }

  /** A group's facts from its stream; its full path is its parent's (read now) and its path. */
  private async groupFacts(
    groupId: number,
  ): Promise<{ facts: GroupFacts; trace: GroupTrace; parentPath: string } | undefined> {
    const trace = await this.fold(`group-${groupId}`, groupTraceDecider);
    if (!trace) return undefined;
    const parent = trace.parentId === null ? undefined : await this.namespaces.findNamespace(trace.parentId);
    const parentPath = parent ? `${parent.fullPath}/` : '';
    const facts: GroupFacts = {
      id: groupId,
      name: trace.name,
      path: trace.path,
      fullPath: parentPath + trace.path,
      createdAt: trace.createdAt,
      updatedAt: trace.updatedAt,
    };
    return { facts, trace, parentPath };
  }

  /** A user's facts from their stream (a deleted user has them too). */
  private async userFacts(userId: number): Promise<{ facts: UserFacts; trace: UserTrace } | undefined> {
    const trace = await this.fold(`user-${userId}`, userTraceDecider);
    if (!trace) return undefined;
    const facts: UserFacts = {
      id: userId,
      name: trace.name,
      username: trace.username,
      email: trace.email,
      createdAt: trace.createdAt,
      updatedAt: trace.updatedAt,
    };
    return { facts, trace };
  }
}
