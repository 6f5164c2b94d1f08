import { ACCESS, NamespaceAccess, type NamespaceRecord, type Visibility } from '@app/groups';
import { BadRequestMessage, Clock, EventStore, NotFound, UniqueViolation, type Actor } from '@app/platform';
import { Command, CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { projectDecider, transfer } from './project';
import { ProjectQueries } from './project.queries';

/**
 * GitLab's refusal of `PUT /projects/:id/transfer`: the service's `errors.messages` hash, in Ruby's
 * inspect, inside the API's sentence (`render_api_error!("Failed to transfer project #{...}", 400)`).
 */
const failed = (reason: string) =>
  new BadRequestMessage(`Failed to transfer project {:new_namespace=>[${JSON.stringify(reason)}]}`);
/** GitLab 13.x's words for a target the caller may not use, or the namespace the project is in already. */
const NOT_ALLOWED = 'Transfer failed, please contact an admin.';
const TAKEN = 'Project with same name or path in target namespace already exists';

/** `PUT /projects/:id/transfer` (GitLab 11.1+): moves the project into the namespace `namespace` (an id or a full path). */
export class TransferProjectToNamespace extends Command<number> {
  constructor(
    readonly project: string | number,
    readonly namespace: string | number,
    readonly actor: Actor,
  ) {
    super();
  }
}

/**
 * Owners only (GitLab's `change_namespace`: 403 below, 404 when the project is invisible). The target
 * must be visible (else 404 `Namespace`) and the caller must be able to create projects there (maintainer
 * of the group, or the owner of the personal namespace; administrators anywhere), else GitLab's 400.
 * The project takes the lesser of its visibility and the group's; the repository stays where it is
 * (named by project id), so git over HTTP and SSH answer at the new path at once.
 */
@CommandHandler(TransferProjectToNamespace)
export class TransferProjectToNamespaceHandler implements ICommandHandler<TransferProjectToNamespace> {
  constructor(
    private readonly store: EventStore,
    private readonly clock: Clock,
    private readonly projects: ProjectQueries,
    private readonly namespaces: NamespaceAccess,
  ) {}

  async execute({ project, namespace, actor }: TransferProjectToNamespace): Promise<number> {
    const row = await this.projects.require(project, actor, ACCESS.owner);
    const ns = await this.namespaces.findNamespace(namespace);
    if (!ns) throw new NotFound('Namespace');
    const visibility = await this.targetVisibility(ns, actor);
    if (ns.id === row.namespace_id) throw failed(NOT_ALLOWED);
    const taken = await this.projects.takenNameOrPath(ns.id, { name: row.name, path: row.path }, row.id);
    if (taken.name || taken.path) throw failed(TAKEN);
    await this.store
      .decide(`project-${row.id}`, projectDecider, (s) =>
        transfer(s, ns.id, visibility, this.clock.now(), {
          lowerVisibility: true,
          personalOwnerId: ns.kind === 'user' ? (ns.ownerId ?? undefined) : undefined,
        }),
      )
      .catch((err) => {
        // Another project took the name or path in the target meanwhile (the indexes catch it).
        if (err instanceof UniqueViolation && /^projects_(name|path)_key$/.test(err.constraint)) throw failed(TAKEN);
        throw err;
      });
    return row.id;
  }

  /** The group's visibility, which bounds the project's; undefined for a personal namespace. */
  private async targetVisibility(ns: NamespaceRecord, actor: Actor): Promise<Visibility | undefined> {
    if (ns.kind === 'user') {
      // Another user's namespace is invisible to all but administrators (GitLab's `read_namespace`).
      if (ns.ownerId !== actor.id && !actor.isAdmin) throw new NotFound('Namespace');
      return undefined;
    }
    const group = await this.namespaces.visibleGroup(ns.id, actor).catch(() => {
      throw new NotFound('Namespace');
    });
    if (!actor.isAdmin && group.accessLevel < ACCESS.maintainer) throw failed(NOT_ALLOWED);
    return group.visibility;
  }
}
