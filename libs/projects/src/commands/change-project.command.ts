import { ACCESS, GroupQueries, NamespaceAccess, type Visibility } from '@app/groups';
import { Clock, EventStore, Forbidden, NotFound, type Actor } from '@app/platform';
import { ProjectAvatarStore, UserQueries, type UploadedFileRef } from '@app/users';
import { Command, CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import {
  addMember,
  archive,
  changeAvatar,
  projectDecider,
  remove,
  removeCustomAttribute,
  removeMember,
  setCustomAttribute,
  share,
  transfer,
  unarchive,
  unshare,
  update,
  updateMember,
  validateSettings,
  type ProjectEvent,
  type ProjectSettings,
  type Project,
} from '../domain/project';
import { currentAvatar, ProjectQueries, type ProjectRow } from '../queries/project.queries';
import { addTakenNameOrPath, rethrowTakenNameOrPath } from './project-writes';

/** Every change to an existing project, with the level each needs (administrators pass every check). */
export type ProjectChange =
  /** `avatar`: a new one, or null to remove it (GitLab's blank `avatar`). */
  | { kind: 'update'; changes: Partial<ProjectSettings>; avatar?: UploadedFileRef | null }
  | { kind: 'archive' }
  | { kind: 'unarchive' }
  | { kind: 'delete' }
  | { kind: 'transfer'; namespaceId: number }
  | { kind: 'add-member'; userId: number; accessLevel: number; expiresAt: string | null }
  | { kind: 'update-member'; userId: number; accessLevel: number; expiresAt: string | null }
  | { kind: 'remove-member'; userId: number }
  | { kind: 'share'; groupId: number; groupAccess: number; expiresAt: string | null }
  | { kind: 'unshare'; groupId: number }
  | { kind: 'custom-attribute'; key: string; value: string | undefined };

const REQUIRED: Record<ProjectChange['kind'], number> = {
  update: ACCESS.maintainer,
  archive: ACCESS.owner,
  unarchive: ACCESS.owner,
  delete: ACCESS.owner,
  transfer: ACCESS.owner,
  'add-member': ACCESS.maintainer,
  'update-member': ACCESS.maintainer,
  'remove-member': ACCESS.maintainer,
  share: ACCESS.maintainer,
  unshare: ACCESS.maintainer,
  'custom-attribute': Number.POSITIVE_INFINITY, // administrators only
};

/**
 * GitLab's PUT asks `rename_project` when a name is given and `change_visibility_level` when a
 * visibility is: both are owner rights, while the other settings take maintainer (`admin_project`).
 */
function requiredLevel(change: ProjectChange): number {
  if (change.kind === 'update' && (change.changes.name || change.changes.visibility)) return ACCESS.owner;
  return REQUIRED[change.kind];
}

export class ChangeProject extends Command<ProjectRow> {
  constructor(
    readonly project: string | number,
    readonly change: ProjectChange,
    readonly actor: Actor,
  ) {
    super();
  }
}

/** Answers the project as it was before the change (404 invisible, 403 not allowed). */
@CommandHandler(ChangeProject)
export class ChangeProjectHandler implements ICommandHandler<ChangeProject> {
  constructor(
    private readonly store: EventStore,
    private readonly clock: Clock,
    private readonly projects: ProjectQueries,
    private readonly namespaces: NamespaceAccess,
    private readonly groups: GroupQueries,
    private readonly users: UserQueries,
    private readonly avatars: ProjectAvatarStore,
  ) {}

  async execute({ project, change, actor }: ChangeProject): Promise<ProjectRow> {
    let row: ProjectRow;
    if (change.kind === 'remove-member') {
      // GitLab looks the membership up (404) before asking whether the caller may remove it; any
      // member may leave a project on their own.
      row = await this.projects.getVisible(project, actor);
      if (!(await this.groups.hasMember('project', row.id, change.userId))) throw new NotFound();
      if (change.userId !== actor.id && !actor.isAdmin && row.access < ACCESS.maintainer) throw new Forbidden();
    } else {
      row = await this.projects.require(project, actor, requiredLevel(change));
    }
    // GitLab's ProjectMemberPolicy: the owner of a personal project keeps their membership, whoever asks.
    if (
      (change.kind === 'update-member' || change.kind === 'remove-member') &&
      row.ns_kind === 'user' &&
      row.owner_id === change.userId
    )
      throw new Forbidden();
    const now = this.clock.now();
    const decide = await this.decision(row, change, now, actor);
    const events = await this.store.decide(`project-${row.id}`, projectDecider, decide).catch(rethrowTakenNameOrPath);
    // The avatar's file follows once its event is committed: a change that fails leaves the old one.
    const changed = events.find((e) => e.type === 'ProjectAvatarChanged');
    const avatar = change.kind === 'update' ? change.avatar : undefined;
    if (changed?.type === 'ProjectAvatarChanged' && avatar !== undefined) {
      const file =
        avatar && changed.data.avatar ? { fileName: changed.data.avatar, upload: avatar } : { fileName: null };
      await this.avatars.publish(this.store, `project-${row.id}`, row.id, file, (db) => currentAvatar(db, row.id));
    }
    return row;
  }

  private async decision(
    row: ProjectRow,
    c: ProjectChange,
    now: Date,
    actor: Actor,
  ): Promise<(s: Project) => ProjectEvent[]> {
    const groupVisibility = row.ns_kind === 'group' ? row.ns_visibility : undefined;
    switch (c.kind) {
      case 'update': {
        const errors = validateSettings(c.changes, groupVisibility);
        const avatarName = c.avatar ? this.avatars.check(c.avatar, errors) : undefined;
        (await addTakenNameOrPath(this.projects, errors, row.namespace_id, c.changes, row.id)).throwIfAny();
        // Removing an avatar the project does not have records nothing.
        const removal = c.avatar === null && row.avatar !== null;
        return (s) => {
          const events = update(s, c.changes, groupVisibility, now);
          if (avatarName) return [...events, ...changeAvatar(s, avatarName, now)];
          return removal ? [...events, ...changeAvatar(s, null, now)] : events;
        };
      }
      case 'archive':
        return (s) => archive(s, now);
      case 'unarchive':
        return (s) => unarchive(s, now);
      case 'delete':
        return (s) => remove(s, now);
      case 'transfer': {
        const ns = await this.namespaces.findNamespace(c.namespaceId);
        if (!ns) throw new NotFound('Namespace');
        const target: Visibility | undefined = ns.kind === 'group' ? ns.visibility : undefined;
        return (s) => transfer(s, ns.id, target, now);
      }
      case 'add-member': {
        if (!(await this.users.find(c.userId))) throw new NotFound('User');
        return (s) => addMember(s, c.userId, c.accessLevel, c.expiresAt, now);
      }
      case 'update-member':
        return (s) => updateMember(s, c.userId, c.accessLevel, c.expiresAt, now);
      case 'remove-member':
        return (s) => removeMember(s, c.userId, now);
      case 'share': {
        // The group must exist and be visible to the caller (404 otherwise).
        await this.namespaces.visibleGroup(c.groupId, actor);
        const ancestry = await this.namespaces.ancestorIds(row.namespace_id);
        const linkId = await this.store.nextId('project_group_link_id_seq');
        return (s) =>
          share(s, { linkId, groupId: c.groupId, groupAccess: c.groupAccess, expiresAt: c.expiresAt }, ancestry, now);
      }
      case 'unshare':
        return (s) => unshare(s, c.groupId, now);
      case 'custom-attribute':
        return (s) =>
          c.value === undefined ? removeCustomAttribute(s, c.key, now) : setCustomAttribute(s, c.key, c.value, now);
    }
  }
}
