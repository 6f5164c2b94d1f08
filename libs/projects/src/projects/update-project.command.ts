import { ACCESS } from '@app/groups';
import { Clock, EventStore, type Actor } from '@app/platform';
import { ProjectAvatarStore, type UploadedFileRef } from '@app/users';
import { Command, CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { changeAvatar, update, validateSettings, type ProjectSettings } from './project';
import { currentAvatar, ProjectQueries, type ProjectRow } from './project.queries';
import { addTakenNameOrPath, decideOnProject } from './project-writes';

/** GitLab's `PUT /projects/:id`: settings, and an avatar (a new one, or null to remove it: GitLab's blank `avatar`). */
export class UpdateProject extends Command<ProjectRow> {
  constructor(
    readonly project: string | number,
    readonly changes: Partial<ProjectSettings>,
    readonly avatar: UploadedFileRef | null | undefined,
    readonly actor: Actor,
  ) {
    super();
  }
}

/**
 * GitLab asks `rename_project` when a name is given and `change_visibility_level` when a visibility
 * is: both are owner rights, while the other settings take maintainer (`admin_project`).
 */
const requiredLevel = (changes: Partial<ProjectSettings>): number =>
  changes.name || changes.visibility ? ACCESS.owner : ACCESS.maintainer;

/** Answers the project as it was before the change (404 invisible, 403 not allowed). */
@CommandHandler(UpdateProject)
export class UpdateProjectHandler implements ICommandHandler<UpdateProject> {
  constructor(
    private readonly store: EventStore,
    private readonly clock: Clock,
    private readonly projects: ProjectQueries,
    private readonly avatars: ProjectAvatarStore,
  ) {}

  async execute({ project, changes, avatar, actor }: UpdateProject): Promise<ProjectRow> {
    const row = await this.projects.require(project, actor, requiredLevel(changes));
    const now = this.clock.now();
    const groupVisibility = row.ns_kind === 'group' ? row.ns_visibility : undefined;
    const errors = validateSettings(changes, groupVisibility);
    const avatarName = avatar ? this.avatars.check(avatar, errors) : undefined;
    (await addTakenNameOrPath(this.projects, errors, row.namespace_id, changes, row.id)).throwIfAny();
    // Removing an avatar the project does not have records nothing.
    const removal = avatar === null && row.avatar !== null;
    const events = await decideOnProject(this.store, row.id, (s) => {
      const updated = update(s, changes, groupVisibility, now);
      if (avatarName) return [...updated, ...changeAvatar(s, avatarName, now)];
      return removal ? [...updated, ...changeAvatar(s, null, now)] : updated;
    });
    // The avatar's file follows once its event is committed: a change that fails leaves the old one.
    const changed = events.find((e) => e.type === 'ProjectAvatarChanged');
    if (changed?.type === 'ProjectAvatarChanged' && avatar !== undefined) {
      const file =
        avatar && changed.data.avatar ? { fileName: changed.data.avatar, upload: avatar } : { fileName: null };
      await this.avatars.publish(this.store, `project-${row.id}`, row.id, file, (db) => currentAvatar(db, row.id));
    }
    return row;
  }
}
