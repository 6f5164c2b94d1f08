import { Clock, EventStore, Forbidden, NotFound, type Actor } from '@app/platform';
import { UserQueries } from '@app/users';
import { Command, CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { ACCESS } from '../domain/access-level';
import { addMember, groupDecider, removeMember, updateMember } from '../domain/group';
import { NamespaceAccess } from '../queries/namespace-access';

export type MemberChange =
  | { kind: 'add'; userId: number; accessLevel: number; expiresAt: string | null }
  | { kind: 'update'; userId: number; accessLevel: number; expiresAt: string | null }
  | { kind: 'remove'; userId: number };

/** Adds, changes or removes a group member. Owners manage members; any member may leave. */
export class ChangeGroupMember extends Command<void> {
  constructor(
    readonly groupId: string | number,
    readonly change: MemberChange,
    readonly actor: Actor,
  ) {
    super();
  }
}

@CommandHandler(ChangeGroupMember)
export class ChangeGroupMemberHandler implements ICommandHandler<ChangeGroupMember> {
  constructor(
    private readonly store: EventStore,
    private readonly clock: Clock,
    private readonly access: NamespaceAccess,
    private readonly users: UserQueries,
  ) {}

  async execute({ groupId, change, actor }: ChangeGroupMember): Promise<void> {
    const group = await this.access.visibleGroup(groupId, actor);
    const manages = actor.isAdmin || group.accessLevel >= ACCESS.owner;
    // GitLab checks the caller's rights before anything else on POST and PUT; DELETE looks the member up first.
    if (change.kind !== 'remove' && !manages) throw new Forbidden();
    if (change.kind === 'add') {
      if (!(await this.users.find(change.userId))) throw new NotFound('User');
    }
    const now = this.clock.now();
    await this.store.decide(`group-${group.id}`, groupDecider, (s) => {
      if (change.kind === 'add') return addMember(s, change.userId, change.accessLevel, change.expiresAt, now);
      if (change.kind === 'update') return updateMember(s, change.userId, change.accessLevel, change.expiresAt, now);
      return removeMember(s, change.userId, now, manages || change.userId === actor.id);
    });
  }
}
