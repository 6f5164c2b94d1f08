import { GitRepositories, projectRepo } from '@app/git';
import { NamespaceAccess, projectCreationAccess, type Visibility } from '@app/groups';
import { Clock, EventStore, Forbidden, Invalid, type Actor } from '@app/platform';
import { Logger } from '@nestjs/common';
import { ProjectAvatarStore, UserQueries, type UploadedFileRef } from '@app/users';
import { Command, CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { randomBytes } from 'node:crypto';
import { changeAvatar, create, evolve, projectDecider, validateSettings, type ProjectSettings } from './project';
import { currentAvatar, ProjectQueries } from './project.queries';
import { addTaken, addTakenNameOrPath, rethrowTakenNameOrPath } from './project-writes';

export class CreateProject extends Command<number> {
  /** `namespaceId` undefined: the owner's personal namespace. `ownerId` is who the project is for (POST /projects/user/:id). */
  constructor(
    readonly settings: ProjectSettings,
    readonly namespaceId: number | undefined,
    readonly actor: Actor,
    readonly ownerId = actor.id,
    /** A multipart `avatar`: checked with the settings, recorded as ProjectAvatarChanged, its file placed once committed. */
    readonly avatar?: UploadedFileRef,
  ) {
    super();
  }
}

@CommandHandler(CreateProject)
export class CreateProjectHandler implements ICommandHandler<CreateProject> {
  private readonly logger = new Logger('CreateProject');

  constructor(
    private readonly store: EventStore,
    private readonly clock: Clock,
    private readonly namespaces: NamespaceAccess,
    private readonly projects: ProjectQueries,
    private readonly users: UserQueries,
    private readonly git: GitRepositories,
    private readonly avatars: ProjectAvatarStore,
  ) {}

  async execute({ settings, namespaceId, actor, ownerId, avatar }: CreateProject): Promise<number> {
    const personal = await this.namespaces.personalNamespace(ownerId);
    let target = personal;
    let namespaceVisibility: Visibility | undefined;
    if (namespaceId !== undefined && namespaceId !== personal.id) {
      // GitLab's CreateService: a namespace that does not exist, or where the caller may not create
      // projects, is a validation error on `namespace` (400), not a 404 or 403.
      const denied = new Invalid({ namespace: ['is not valid'] });
      const ns = await this.namespaces.findNamespace(namespaceId);
      if (!ns) throw denied;
      if (ns.kind === 'user') {
        // Another user's personal namespace: only administrators may put projects there.
        if (!actor.isAdmin) throw denied;
      } else {
        // Creating in a group takes the level its `project_creation_level` names (maintainer by default,
        // GitLab 10.x's master rights; `noone` leaves it to administrators).
        const group = await this.namespaces.visibleGroup(ns.id, actor).catch(() => {
          throw denied;
        });
        const needed = projectCreationAccess(group.projectCreationLevel);
        if (!actor.isAdmin && (needed === undefined || group.accessLevel < needed)) throw denied;
        namespaceVisibility = group.visibility;
      }
      target = ns;
    }
    const errors = validateSettings(settings, namespaceVisibility);
    const avatarName = avatar ? this.avatars.check(avatar, errors) : undefined;
    if (target.kind === 'user' && target.ownerId !== null) {
      // A personal namespace's projects are its owner's personal projects: counted with the taken check.
      const owner = await this.users.find(target.ownerId);
      const { count, ...taken } = await this.projects.countAndTaken(target.id, settings);
      if (owner && count >= owner.projectsLimit)
        throw new Forbidden(
          owner.projectsLimit === 0
            ? 'Personal project creation is not allowed. Please contact your administrator with questions'
            : `Your project limit is ${owner.projectsLimit} projects! Please contact your administrator to increase it`,
        );
      addTaken(errors, taken);
    } else await addTakenNameOrPath(this.projects, errors, target.id, settings);
    errors.throwIfAny();
    const projectId = await this.store.nextId('project_id_seq');
    const runnersToken = randomBytes(15).toString('base64url');
    // The bare repository comes with the project, so it is made first, outside the transaction (no git
    // work holds one open). Its id is never reused, so the store's re-runs of the transaction after a
    // version clash find it made, and a client's retry of the command takes a fresh id.
    const repo = projectRepo(projectId);
    await this.git.init(repo, settings.defaultBranch ?? 'master');
    try {
      await this.store.transact(async (uow) => {
        await uow.decideNew(`project-${projectId}`, projectDecider, (s) => {
          const now = this.clock.now();
          const events = create(
            s,
            {
              projectId,
              namespaceId: target.id,
              settings,
              creatorId: ownerId,
              runnersToken,
              namespaceVisibility,
              personalOwnerId: target.kind === 'user' ? (target.ownerId ?? undefined) : undefined,
            },
            now,
          );
          return avatarName ? [...events, ...changeAvatar(events.reduce(evolve, s), avatarName, now)] : events;
        });
      });
    } catch (err) {
      await this.removeUnusedRepository(projectId);
      rethrowTakenNameOrPath(err);
    }
    await this.git.settled(repo);
    // The file is placed once its event is committed: a creation that fails leaves none.
    if (avatar && avatarName)
      await this.avatars.publish(
        this.store,
        `project-${projectId}`,
        projectId,
        { fileName: avatarName, upload: avatar },
        (db) => currentAvatar(db, projectId),
      );
    return projectId;
  }

  /**
   * Removes the repository made for a project whose creation failed, once the event log shows that
   * no project got the id: a commit whose answer was lost may still have created it. When the log
   * cannot be read, an empty repository under a never-reused id is all that is left.
   */
  private async removeUnusedRepository(projectId: number): Promise<void> {
    try {
      const project = await this.store.transact((uow) => uow.load(`project-${projectId}`, projectDecider));
      if (!project.exists) await this.git.remove(projectRepo(projectId));
      await this.git.settled(projectRepo(projectId));
    } catch (err) {
      this.logger.warn(`could not remove the repository of uncreated project ${projectId}: ${String(err)}`);
    }
  }
}
