import { ACCESS } from '@app/groups';
import { Clock, EventStore, type Actor } from '@app/platform';
import { Command, CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { deployKeyDecider, disable } from './deploy-key';
import { DeployKeyQueries } from './deploy-key.queries';
import { ProjectQueries } from '../projects/project.queries';
import { deployKeyStream } from './deploy-key-writes';

/** `DELETE /projects/:id/deploy_keys/:key_id`: off this project only; the key goes with its last project. */
export class RemoveDeployKey extends Command<void> {
  constructor(
    readonly project: string | number,
    readonly keyId: number,
    readonly actor: Actor,
  ) {
    super();
  }
}

@CommandHandler(RemoveDeployKey)
export class RemoveDeployKeyHandler implements ICommandHandler<RemoveDeployKey> {
  constructor(
    private readonly store: EventStore,
    private readonly clock: Clock,
    private readonly projects: ProjectQueries,
    private readonly keys: DeployKeyQueries,
  ) {}

  async execute({ project, keyId, actor }: RemoveDeployKey): Promise<void> {
    const p = await this.projects.require(project, actor, ACCESS.maintainer);
    await this.store.transact(async (uow) => {
      await uow.decide(deployKeyStream(keyId), deployKeyDecider, async (s) => {
        const linked = s.exists ? Object.keys(s.links).map(Number) : [];
        return disable(s, p.id, await this.keys.goneProjectIds(uow.db, linked), this.clock.now());
      });
    });
  }
}
