import { ACCESS, NamespaceAccess, type Visibility } from '@app/groups';
import { Clock, EventStore, NotFound, type Actor } from '@app/platform';
import { Command, CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { transfer } from './project';
import { ProjectQueries, type ProjectRow } from './project.queries';
import { decideOnProject } from './project-writes';

/** Moves a project into another namespace (the groups context's `POST /groups/:id/projects/:project_id`). */
export class TransferProject extends Command<ProjectRow> {
  constructor(
    readonly project: string | number,
    readonly namespaceId: number,
    readonly actor: Actor,
  ) {
    super();
  }
}

/** Answers the project as it was before the move (404 invisible, 403 below owner, 404 `Namespace` unknown). */
@CommandHandler(TransferProject)
export class TransferProjectHandler implements ICommandHandler<TransferProject> {
  constructor(
    private readonly store: EventStore,
    private readonly clock: Clock,
    private readonly projects: ProjectQueries,
    private readonly namespaces: NamespaceAccess,
  ) {}

  async execute({ project, namespaceId, actor }: TransferProject): Promise<ProjectRow> {
    const row = await this.projects.require(project, actor, ACCESS.owner);
    const now = this.clock.now();
    const ns = await this.namespaces.findNamespace(namespaceId);
    if (!ns) throw new NotFound('Namespace');
    const target: Visibility | undefined = ns.kind === 'group' ? ns.visibility : undefined;
    await decideOnProject(this.store, row.id, (s) => transfer(s, ns.id, target, now));
    return row;
  }
}
