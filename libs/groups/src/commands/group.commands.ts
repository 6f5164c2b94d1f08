import { Clock, EventStore, Forbidden, Invalid, UniqueViolation, type Actor } from '@app/platform';
import { UserQueries } from '@app/users';
import { ModuleRef } from '@nestjs/core';
import { Command, CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { ACCESS, moreOpenThan, type Visibility } from '../domain/access-level';
import { create, groupDecider, remove, update, type GroupSettings, type Surroundings } from '../domain/group';
import { subgroupCreationAccess } from '../domain/group-settings';
import { GroupQueries } from '../queries/group.queries';
import { NamespaceAccess, NamespaceContents } from '../queries/namespace-access';

/** GitLab: a taken path answers 400 `Failed to save group {:path=>["has already been taken"]}`. */
function rethrowPathTaken(err: unknown): never {
  if (
    err instanceof UniqueViolation &&
    (err.constraint === 'namespaces_path_key' || err.constraint === 'namespaces_full_path_key')
  )
    throw new Invalid({ path: ['has already been taken'] });
  throw err;
}

export class CreateGroup extends Command<number> {
  constructor(
    readonly settings: GroupSettings,
    readonly parentId: number | null,
    readonly actor: Actor,
  ) {
    super();
  }
}

/** Users allowed to create groups may create top-level ones; a subgroup needs the parent's `subgroup_creation_level`. */
@CommandHandler(CreateGroup)
export class CreateGroupHandler implements ICommandHandler<CreateGroup> {
  constructor(
    private readonly store: EventStore,
    private readonly clock: Clock,
    private readonly access: NamespaceAccess,
    private readonly users: UserQueries,
  ) {}

  async execute({ settings, parentId, actor }: CreateGroup): Promise<number> {
    let parentVisibility: Visibility | undefined;
    if (parentId !== null) {
      // Owners, or maintainers too where the parent's `subgroup_creation_level` says so.
      const parent = await this.access.visibleGroup(parentId, actor);
      if (!actor.isAdmin && parent.accessLevel < subgroupCreationAccess(parent.subgroupCreationLevel))
        throw new Forbidden();
      parentVisibility = parent.visibility;
    } else if (!actor.isAdmin) {
      const user = await this.users.find(actor.id);
      if (!user?.canCreateGroup) throw new Forbidden();
    }
    const groupId = await this.store.nextId('namespace_id_seq');
    await this.store
      .decideNew(`group-${groupId}`, groupDecider, (s) =>
        create(s, { groupId, parentId, settings, creatorId: actor.id }, { parentVisibility }, this.clock.now()),
      )
      .catch(rethrowPathTaken);
    return groupId;
  }
}

export class UpdateGroup extends Command<void> {
  constructor(
    readonly groupId: number,
    readonly changes: Partial<GroupSettings>,
    readonly actor: Actor,
  ) {
    super();
  }
}

@CommandHandler(UpdateGroup)
export class UpdateGroupHandler implements ICommandHandler<UpdateGroup> {
  constructor(
    private readonly store: EventStore,
    private readonly clock: Clock,
    private readonly access: NamespaceAccess,
    private readonly groups: GroupQueries,
    private readonly moduleRef: ModuleRef,
  ) {}

  /**
   * The projects context provides the port from a module this one cannot import (it sits to the
   * right), so it is looked up across the application; a Lode without projects has none to bound.
   */
  private contents(): NamespaceContents | undefined {
    try {
      return this.moduleRef.get(NamespaceContents, { strict: false });
    } catch {
      return undefined;
    }
  }

  async execute({ groupId, changes, actor }: UpdateGroup): Promise<void> {
    const group = await this.access.requireGroup(groupId, actor, ACCESS.owner);
    const around = await this.surroundings(group.id, group.parentId);
    await this.store
      .decide(`group-${group.id}`, groupDecider, (s) => update(s, changes, around, this.clock.now()))
      .catch(rethrowPathTaken);
  }

  /** The parent's visibility and the widest visibilities below (subgroups, projects), which bound a change. */
  private async surroundings(groupId: number, parentId: number | null): Promise<Surroundings> {
    const parentVisibility = parentId === null ? undefined : await this.groups.visibility(parentId);
    const subgroups = await this.groups.subgroupVisibilities(groupId);
    const widestSubgroupVisibility = subgroups.reduce<Visibility | undefined>(
      (w, v) => (!w || moreOpenThan(v, w) ? v : w),
      undefined,
    );
    const widestProjectVisibility = await this.contents()?.widestProjectVisibility(groupId);
    return {
      parentVisibility,
      widestSubgroupVisibility,
      widestProjectVisibility,
    };
  }
}

export class DeleteGroup extends Command<void> {
  constructor(
    readonly groupId: number,
    readonly actor: Actor,
  ) {
    super();
  }
}

/** Owners and administrators; the subgroups and projects inside go with it. */
@CommandHandler(DeleteGroup)
export class DeleteGroupHandler implements ICommandHandler<DeleteGroup> {
  constructor(
    private readonly store: EventStore,
    private readonly clock: Clock,
    private readonly access: NamespaceAccess,
  ) {}

  async execute({ groupId, actor }: DeleteGroup): Promise<void> {
    const group = await this.access.requireGroup(groupId, actor, ACCESS.owner);
    await this.store.decide(`group-${group.id}`, groupDecider, (s) => remove(s, this.clock.now()));
  }
}
