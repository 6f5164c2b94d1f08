import { ACCESS } from '@app/groups';
import { Clock, EventStore } from '@app/platform';
import { Command, CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { deployKeyDecider, update } from './deploy-key';
import type { AuthorizedProject } from '../projects/project.queries';
import { deployKeyStream } from './deploy-key-writes';

/** `PUT /projects/:id/deploy_keys/:key_id`: the key's title (on every project) and this project's `can_push`. */
export class UpdateDeployKey extends Command<void> {
  constructor(
    /** Required at maintainer by the route, before it validated the parameters (GitLab's order). */
    readonly project: AuthorizedProject<typeof ACCESS.maintainer>,
    readonly keyId: number,
    readonly changes: { title?: string; canPush?: boolean },
  ) {
    super();
  }
}

@CommandHandler(UpdateDeployKey)
export class UpdateDeployKeyHandler implements ICommandHandler<UpdateDeployKey> {
  constructor(
    private readonly store: EventStore,
    private readonly clock: Clock,
  ) {}

  // GitLab 10.x also asks `update_deploy_key` of the key: administrators, or members of a project
  // that has the key. A maintainer of this project, which has it, always is one.
  async execute({ project: p, keyId, changes }: UpdateDeployKey): Promise<void> {
    await this.store.decide(deployKeyStream(keyId), deployKeyDecider, (s) =>
      update(s, p.id, changes, this.clock.now()),
    );
  }
}
