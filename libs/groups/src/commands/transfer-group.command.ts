import { Clock, EventStore, Forbidden, type Actor } from '@app/platform';
import { UserQueries } from '@app/users';
import { ModuleRef } from '@nestjs/core';
import { Command, CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { ACCESS, moreOpenThan, type Visibility } from '../domain/access-level';
import { groupDecider, transfer, type TransferFacts } from '../domain/group';
import { subgroupCreationAccess } from '../domain/group-settings';
import { GroupQueries } from '../queries/group.queries';
import { NamespaceAccess, NamespaceContents } from '../queries/namespace-access';

/** GitLab 14.6's `POST /groups/:id/transfer`: under `newParentId`, or top-level when it is null. */
export class TransferGroup extends Command<number> {
  constructor(
    readonly groupId: string | number,
    readonly newParentId: number | null,
    readonly actor: Actor,
  ) {
    super();
  }
}

/**
 * GitLab finds the group (404), asks that the caller administer it (403), finds the new parent (404
 * `Group Not Found`), then its TransferService refuses with 400 `Transfer failed: ...`. Answers the
 * group's id.
 */
@CommandHandler(TransferGroup)
export class TransferGroupHandler implements ICommandHandler<TransferGroup> {
  constructor(
    private readonly store: EventStore,
    private readonly clock: Clock,
    private readonly access: NamespaceAccess,
    private readonly groups: GroupQueries,
    private readonly users: UserQueries,
    private readonly moduleRef: ModuleRef,
  ) {}

  /** The projects context's port (it sits to the right, so it is looked up); a Lode without projects has none. */
  private contents(): NamespaceContents | undefined {
    try {
      return this.moduleRef.get(NamespaceContents, { strict: false });
    } catch {
      return undefined;
    }
  }

  async execute({ groupId, newParentId, actor }: TransferGroup): Promise<number> {
    const group = await this.access.visibleGroup(groupId, actor);
    if (!actor.isAdmin && group.accessLevel < ACCESS.owner) throw new Forbidden();
    const parent = newParentId === null ? undefined : await this.access.visibleGroup(newParentId, actor);
    const mayCreateThere =
      actor.isAdmin ||
      (parent
        ? parent.accessLevel >= subgroupCreationAccess(parent.subgroupCreationLevel)
        : (await this.users.find(actor.id))?.canCreateGroup === true);
    const subtree = await this.groups.subtree(group.id);
    let widest: Visibility = 'private';
    for (const v of subtree.map((g) => g.visibility)) if (moreOpenThan(v, widest)) widest = v;
    const projects = await this.contents()?.widestProjectVisibilityIn(subtree.map((g) => g.id));
    if (projects && moreOpenThan(projects, widest)) widest = projects;
    const facts: TransferFacts = {
      newParentAncestry: parent ? await this.access.ancestorIds(parent.id) : undefined,
      mayCreateThere,
      pathTaken:
        (await this.groups.pathTaken(parent?.id ?? null, group.path, group.id)) ||
        (parent !== undefined && (await this.contents()?.hasProjectPath(parent.id, group.path)) === true),
      parentVisibility: parent?.visibility,
      widestVisibilityInside: widest,
    };
    await this.store.decide(`group-${group.id}`, groupDecider, (s) =>
      transfer(s, parent?.id ?? null, facts, this.clock.now()),
    );
    return group.id;
  }
}
