import { ACCESS } from '@app/groups';
import { Clock, EventStore, type Actor } from '@app/platform';
import { Command, CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { projectDecider } from '../projects/project';
import {
  protectBranch,
  protectBranchLegacy,
  unprotectBranch,
  unprotectBranchLegacy,
  type ProtectedBranchRule,
} from './protected-branch';
import { ProjectQueries } from '../projects/project.queries';

/**
 * A change to a project's protected branches, as each endpoint asks it:
 * - `create`: `POST /projects/:id/protected_branches` (409 when the name has a rule);
 * - `remove`: `DELETE /projects/:id/protected_branches/:name` (404 `Not found` without one);
 * - `protect`: `PUT .../repository/branches/:branch/protect` (creates, or updates the given flags);
 * - `unprotect`: `PUT .../repository/branches/:branch/unprotect` (removes the rule if there is one).
 * Masters (maintainers), owners and administrators only (GitLab's `admin_project`). Answers the project's id.
 */
export class ChangeProtectedBranch extends Command<number> {
  constructor(
    readonly project: string | number,
    readonly change:
      | { kind: 'create'; rule: ProtectedBranchRule }
      | { kind: 'remove'; name: string }
      | { kind: 'protect'; name: string; developersCanPush?: boolean; developersCanMerge?: boolean }
      | { kind: 'unprotect'; name: string },
    readonly actor: Actor | undefined,
  ) {
    super();
  }
}

@CommandHandler(ChangeProtectedBranch)
export class ChangeProtectedBranchHandler implements ICommandHandler<ChangeProtectedBranch> {
  constructor(
    private readonly store: EventStore,
    private readonly clock: Clock,
    private readonly projects: ProjectQueries,
  ) {}

  async execute({ project, change, actor }: ChangeProtectedBranch): Promise<number> {
    const row = await this.projects.require(project, actor, ACCESS.maintainer);
    const now = this.clock.now();
    await this.store.decide(`project-${row.id}`, projectDecider, (s) => {
      switch (change.kind) {
        case 'create':
          return protectBranch(s, change.rule, now);
        case 'remove':
          return unprotectBranch(s, change.name, now);
        case 'protect':
          return protectBranchLegacy(s, change.name, change, now);
        case 'unprotect':
          return unprotectBranchLegacy(s, change.name, now);
      }
    });
    return row.id;
  }
}
