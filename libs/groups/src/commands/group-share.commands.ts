import { Clock, EventStore, Forbidden, NotFound, type Actor } from '@app/platform';
import { Command, CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { ACCESS } from '../domain/access-level';
import { groupDecider, shareWithGroup, unshareWithGroup } from '../domain/group';
import { GroupQueries } from '../queries/group.queries';
import { NamespaceAccess } from '../queries/namespace-access';

/**
 * GitLab's `Groups::GroupLinks::CreateService` refuses with `error('Not Found', 404)`, a bare
 * `{"message":"Not Found"}`, not the resource's `404 Group Not Found`.
 */
class ShareNotAllowed extends NotFound {
  constructor() {
    super();
    this.message = 'Not Found';
  }
}

/** Shares group `groupId` with group `sharedWithGroupId`: its members get up to `groupAccess` here and below. */
export class ShareGroup extends Command<number> {
  constructor(
    readonly groupId: string | number,
    readonly sharedWithGroupId: number,
    readonly groupAccess: number,
    readonly expiresAt: string | null,
    readonly actor: Actor,
  ) {
    super();
  }
}

/**
 * GitLab finds both groups first (404 `Group Not Found` for either the caller cannot see), then asks
 * that the caller administer the shared group (owner, or administrator): anyone else gets 404 too.
 * Answers the shared group's id.
 */
@CommandHandler(ShareGroup)
export class ShareGroupHandler implements ICommandHandler<ShareGroup> {
  constructor(
    private readonly store: EventStore,
    private readonly clock: Clock,
    private readonly access: NamespaceAccess,
  ) {}

  async execute({ groupId, sharedWithGroupId, groupAccess, expiresAt, actor }: ShareGroup): Promise<number> {
    const group = await this.access.visibleGroup(groupId, actor);
    const sharedWith = await this.access.visibleGroup(sharedWithGroupId, actor);
    if (!actor.isAdmin && group.accessLevel < ACCESS.owner) throw new ShareNotAllowed();
    const now = this.clock.now();
    await this.store.decide(`group-${group.id}`, groupDecider, (s) =>
      shareWithGroup(s, { sharedWithGroupId: sharedWith.id, groupAccess, expiresAt }, now),
    );
    return group.id;
  }
}

export class UnshareGroup extends Command<void> {
  constructor(
    readonly groupId: string | number,
    readonly sharedWithGroupId: number,
    readonly actor: Actor,
  ) {
    super();
  }
}

/**
 * GitLab finds the group, then the link (404 `Group Link Not Found`), then its DestroyService does
 * nothing for a caller who may not administer the group while the API still answers 204. Lode answers
 * that caller 403 instead: a 204 that deleted nothing would tell a client the link is gone.
 */
@CommandHandler(UnshareGroup)
export class UnshareGroupHandler implements ICommandHandler<UnshareGroup> {
  constructor(
    private readonly store: EventStore,
    private readonly clock: Clock,
    private readonly access: NamespaceAccess,
    private readonly groups: GroupQueries,
  ) {}

  async execute({ groupId, sharedWithGroupId, actor }: UnshareGroup): Promise<void> {
    const group = await this.access.visibleGroup(groupId, actor);
    // The read model, not the stream: a link to a group deleted since went with that group.
    if (!(await this.groups.isSharedWith(group.id, sharedWithGroupId))) throw new NotFound('Group Link');
    if (!actor.isAdmin && group.accessLevel < ACCESS.owner) throw new Forbidden();
    await this.store.decide(`group-${group.id}`, groupDecider, (s) =>
      unshareWithGroup(s, sharedWithGroupId, this.clock.now()),
    );
  }
}
