import { ACCESS } from '@app/groups';
import { Clock, EventStore, type Actor } from '@app/platform';
import { Command, CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { deployKeyDecider, update } from './deploy-key';
import { ProjectQueries } from '../projects/project.queries';
import { deployKeyStream } from './deploy-key-writes';

/** `PUT /projects/:id/deploy_keys/:key_id`: the key's title (on every project) and this project's `can_push`. */
export class UpdateDeployKey extends Command<void> {
  constructor(
    readonly project: string | number,
    readonly keyId: number,
    readonly changes: { title?: string; canPush?: boolean },
    readonly actor: Actor,
  ) {
    super();
  }
}

@CommandHandler(UpdateDeployKey)
export class UpdateDeployKeyHandler implements ICommandHandler<UpdateDeployKey> {
  constructor(
    private readonly store: EventStore,
    private readonly clock: Clock,
    private readonly projects: ProjectQueries,
  ) {}

  // GitLab 10.x also asks `update_deploy_key` of the key: administrators, or members of a project
  // that has the key. A maintainer of this project, which has it, always is one.
  async execute({ project, keyId, changes, actor }: UpdateDeployKey): Promise<void> {
    const p = await this.projects.require(project, actor, ACCESS.maintainer);
    await this.store.decide(deployKeyStream(keyId), deployKeyDecider, (s) =>
      update(s, p.id, changes, this.clock.now()),
    );
  }
}
