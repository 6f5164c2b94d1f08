import { Clock, EventStore, type UnitOfWork } from '@app/platform';
import { ModuleRef } from '@nestjs/core';
import { Command, CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import type { EntityManager } from 'typeorm';
import { block, create, newUserProfile, remove, userDecider } from '../domain/user';
import { ghostUserId, lockGhostCreation, nextIdOn } from '../queries/user.queries';

/**
 * The top-level paths a username competes with (a user's personal namespace and the top-level groups
 * share them). The groups context owns namespaces and implements this port; users never reads them.
 */
export abstract class TopLevelPaths {
  /** How many top-level paths are `base` alone or followed by digits, case-insensitively, read in `db`'s transaction. */
  abstract countNumbered(db: EntityManager, base: string): Promise<number>;
}

/**
 * Deletes a user. `UserDeleted` says whether it was a hard delete, so the contexts that own
 * contributions move them to the ghost user (named in the event) or remove them; the user's files
 * and group memberships go in background jobs.
 */
export class DeleteUser extends Command<void> {
  constructor(
    readonly userId: number,
    readonly hardDelete: boolean,
  ) {
    super();
  }
}

@CommandHandler(DeleteUser)
export class DeleteUserHandler implements ICommandHandler<DeleteUser> {
  constructor(
    private readonly store: EventStore,
    private readonly clock: Clock,
    private readonly moduleRef: ModuleRef,
  ) {}

  async execute({ userId, hardDelete }: DeleteUser): Promise<void> {
    await this.store.transact(async (uow) => {
      const ghostUserId = hardDelete ? undefined : await this.ghost(uow);
      await uow.decide(`user-${userId}`, userDecider, (s) => remove(s, hardDelete, this.clock.now(), ghostUserId));
    });
  }

  /**
   * The groups context provides the port from a module that imports this one, so it is looked up
   * across the application; a Lode without groups has no namespaces to avoid.
   */
  private topLevelPaths(): TopLevelPaths | undefined {
    try {
      return this.moduleRef.get(TopLevelPaths, { strict: false });
    } catch {
      return undefined;
    }
  }

  /** GitLab's ghost user: made the first time someone is deleted, blocked, never signing in. */
  private async ghost(uow: UnitOfWork): Promise<number> {
    await lockGhostCreation(uow.db);
    const existing = await ghostUserId(uow.db);
    if (existing !== undefined) return existing;
    const userId = await nextIdOn(uow.db, 'user_id_seq');
    const namespaceId = await nextIdOn(uow.db, 'namespace_id_seq');
    const taken = (await this.topLevelPaths()?.countNumbered(uow.db, 'ghost')) ?? 0;
    const username = taken ? `ghost${taken}` : 'ghost';
    const now = this.clock.now();
    await uow.decide(`user-${userId}`, userDecider, (s) => {
      const created = create(
        s,
        {
          userId,
          namespaceId,
          passwordDigest: null,
          confirmed: true,
          profile: newUserProfile({
            name: 'Ghost User',
            username,
            email: `${username}@lode.invalid`,
            bio: 'This is a "Ghost User", created to hold all issues authored by users that have since been deleted. This user cannot be removed.'.slice(
              0,
              255,
            ),
            projectsLimit: 0,
            canCreateGroup: false,
          }),
        },
        now,
      );
      (created[0].data as { ghost?: boolean }).ghost = true;
      const state = created.reduce(userDecider.evolve, s);
      return [...created, ...block(state, now)];
    });
    return userId;
  }
}
