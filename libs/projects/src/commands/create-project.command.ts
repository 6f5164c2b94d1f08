import { ACCESS, NamespaceAccess, type Visibility } from '@app/groups';
import { Clock, EventStore, Forbidden, Invalid, NotFound, UniqueViolation, type Actor } from '@app/platform';
import { Command, CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { randomBytes } from 'node:crypto';
import { DataSource } from 'typeorm';
import { create, projectDecider, type ProjectSettings } from '../domain/project';
import { ProjectQueries } from '../queries/project.queries';

/** GitLab: a taken name or path in the namespace is a 400 on the field(s) concerned. */
export function rethrowTakenNameOrPath(err: unknown): never {
  if (err instanceof UniqueViolation && err.constraint === 'projects_path_key') throw new Invalid({ path: ['has already been taken'] });
  if (err instanceof UniqueViolation && err.constraint === 'projects_name_key') throw new Invalid({ name: ['has already been taken'] });
  throw err;
}

export class CreateProject extends Command<number> {
  /** `namespaceId` undefined: the owner's personal namespace. `ownerId` is who the project is for (POST /projects/user/:id). */
  constructor(readonly settings: ProjectSettings, readonly namespaceId: number | undefined, readonly actor: Actor, readonly ownerId = actor.id) {
    super();
  }
}

@CommandHandler(CreateProject)
export class CreateProjectHandler implements ICommandHandler<CreateProject> {
  constructor(
    private readonly store: EventStore,
    private readonly clock: Clock,
    private readonly namespaces: NamespaceAccess,
    private readonly projects: ProjectQueries,
    private readonly db: DataSource,
  ) {}

  async execute({ settings, namespaceId, actor, ownerId }: CreateProject): Promise<number> {
    const personal = await this.namespaces.personalNamespace(ownerId);
    let target = personal;
    let namespaceVisibility: Visibility | undefined;
    if (namespaceId !== undefined && namespaceId !== personal.id) {
      const ns = await this.namespaces.findNamespace(namespaceId);
      if (!ns) throw new NotFound('Namespace');
      if (ns.kind === 'user') {
        // Another user's personal namespace: only administrators may put projects there.
        if (!actor.isAdmin) throw new NotFound('Namespace');
      } else {
        // Creating in a group takes maintainer (GitLab 10.x: master) rights there.
        const group = await this.namespaces.visibleGroup(ns.id, actor).catch(() => {
          throw new NotFound('Namespace');
        });
        if (!actor.isAdmin && group.accessLevel < ACCESS.maintainer) throw new Forbidden();
        namespaceVisibility = group.visibility;
      }
      target = ns;
    }
    if (target.kind === 'user' && target.ownerId !== null) {
      const [owner] = await this.db.query(`select projects_limit from users where id = $1`, [target.ownerId]);
      const count = await this.projects.personalProjectCount(target.ownerId);
      if (owner && count >= owner.projects_limit)
        throw new Forbidden(`Your project limit is ${owner.projects_limit} projects! Please contact your administrator to increase it`);
    }
    const projectId = await this.store.nextId('project_id_seq');
    const runnersToken = randomBytes(15).toString('base64url');
    await this.store
      .decide(`project-${projectId}`, projectDecider, (s) =>
        create(s, {
          projectId, namespaceId: target.id, settings, creatorId: actor.id, runnersToken, namespaceVisibility,
          personalOwnerId: target.kind === 'user' ? target.ownerId ?? undefined : undefined,
        }, this.clock.now()),
      )
      .catch(rethrowTakenNameOrPath);
    return projectId;
  }
}
