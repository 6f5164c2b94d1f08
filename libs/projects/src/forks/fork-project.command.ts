import { ACCESS, NamespaceAccess, moreOpenThan, type Visibility } from '@app/groups';
import { Clock, Conflict, EventStore, NotFound, UniqueViolation, type Actor } from '@app/platform';
import { ProjectAvatarStore } from '@app/users';
import { Command, CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { randomBytes } from 'node:crypto';
import { ProjectAccessPolicy } from '../access/project-access-policy';
import { changeAvatar, evolve, projectDecider, validateSettings, type ProjectSettings } from '../projects/project';
import { fork } from './fork';
import { forkedSettings } from '../projects/project-settings';
import { currentAvatar, ProjectQueries, type ProjectRow } from '../projects/project.queries';

/** What the caller asked the fork to be instead of the source (each undefined: the source's). */
export interface ForkOverrides {
  name?: string;
  path?: string;
  description?: string;
  visibility?: Visibility;
}

const leastOpen = (a: Visibility, b: Visibility | undefined) => (b && moreOpenThan(a, b) ? b : a);

/**
 * The fork takes the source's settings (forkedSettings), with the name, path and description asked
 * for. Its visibility is the least open of the source's, the target group's and the one asked for:
 * GitLab's ForkService never makes a fork more open than its source, and clamps rather than refuses.
 */
function forkSettings(
  source: ProjectRow,
  groupVisibility: Visibility | undefined,
  asked: ForkOverrides,
): ProjectSettings {
  const settings = forkedSettings(source);
  const visibility = leastOpen(leastOpen(source.visibility, groupVisibility), asked.visibility);
  return {
    ...settings,
    name: asked.name ?? settings.name,
    path: asked.path ?? settings.path,
    description: asked.description ?? settings.description,
    visibility,
  };
}

/**
 * `POST /projects/:id/fork`: the new project exists at once with `import_status` scheduled; the
 * `fork-repository` job (outbox) copies the repository and reports started, then finished or failed.
 */
export class ForkProject extends Command<number> {
  constructor(
    readonly source: string | number,
    readonly namespace: string | number | undefined,
    readonly actor: Actor,
    readonly overrides: ForkOverrides = {},
  ) {
    super();
  }
}

@CommandHandler(ForkProject)
export class ForkProjectHandler implements ICommandHandler<ForkProject> {
  constructor(
    private readonly store: EventStore,
    private readonly clock: Clock,
    private readonly projects: ProjectQueries,
    private readonly namespaces: NamespaceAccess,
    private readonly avatars: ProjectAvatarStore,
  ) {}

  async execute({ source, namespace, actor, overrides }: ForkProject): Promise<number> {
    const from = await this.projects.getVisible(source, actor);
    // A fork copies the code, so it needs `download_code`: a guest sees a private project (an external
    // guest an internal one) but may not read its code, so may not copy it either. GitLab 10.x refuses in
    // Projects::CreateService, whose error the API answers as a 409 conflict with `forked_from_project_id: is forbidden`.
    if (!ProjectAccessPolicy.mayFork(from, actor)) throw new Conflict({ forked_from_project_id: ['is forbidden'] });
    const target =
      namespace === undefined || namespace === ''
        ? await this.namespaces.personalNamespace(actor.id)
        : await this.namespaces.findNamespace(namespace);
    if (!target) throw new NotFound('Target Namespace');
    let groupVisibility: Visibility | undefined;
    if (target.kind === 'user') {
      if (target.ownerId !== actor.id && !actor.isAdmin) throw new NotFound('Target Namespace');
    } else {
      const group = await this.namespaces.visibleGroup(target.id, actor).catch(() => undefined);
      if (!group || (!actor.isAdmin && group.accessLevel < ACCESS.maintainer)) throw new NotFound('Target Namespace');
      groupVisibility = group.visibility;
    }
    const settings = forkSettings(from, groupVisibility, overrides);
    // A name or path asked for is checked as on create (400 on the field); the source's passed already.
    validateSettings(
      { name: settings.name, path: settings.path, description: settings.description },
      undefined,
    ).throwIfAny();
    const projectId = await this.store.nextId('project_id_seq');
    await this.store
      .decideNew(`project-${projectId}`, projectDecider, (s) => {
        const now = this.clock.now();
        const events = fork(
          s,
          {
            projectId,
            namespaceId: target.id,
            settings,
            creatorId: actor.id,
            runnersToken: randomBytes(15).toString('base64url'),
            forkedFromId: from.id,
            personalOwnerId: target.kind === 'user' ? (target.ownerId ?? undefined) : undefined,
          },
          now,
        );
        // GitLab's ForkService hands the source's avatar to the new project.
        return from.avatar ? [...events, ...changeAvatar(events.reduce(evolve, s), from.avatar, now)] : events;
      })
      .catch((err) => {
        // GitLab: the name or path is taken in the target namespace → 409 with both fields.
        if (
          err instanceof UniqueViolation &&
          (err.constraint === 'projects_path_key' || err.constraint === 'projects_name_key')
        )
          throw new Conflict({ name: ['has already been taken'], path: ['has already been taken'] });
        throw err;
      });
    if (from.avatar)
      await this.avatars.publish(
        this.store,
        `project-${projectId}`,
        projectId,
        { fileName: from.avatar, copyOf: from.id },
        (db) => currentAvatar(db, projectId),
      );
    return projectId;
  }
}
