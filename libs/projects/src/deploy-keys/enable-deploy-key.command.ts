import { ACCESS } from '@app/groups';
import { Clock, EventStore, NotFound, type Actor } from '@app/platform';
import { Command, CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { deployKeyDecider, enable } from './deploy-key';
import { DeployKeyQueries } from './deploy-key.queries';
import { ProjectQueries } from '../projects/project.queries';
import { deployKeyStream } from './deploy-key-writes';

/**
 * `POST /projects/:id/deploy_keys/:key_id/enable`: a key the caller can reach on another project,
 * read-only here (the link's `can_push` starts false). Already enabled: answered unchanged.
 */
export class EnableDeployKey extends Command<number> {
  constructor(
    readonly project: string | number,
    readonly keyId: number,
    readonly actor: Actor,
  ) {
    super();
  }
}

@CommandHandler(EnableDeployKey)
export class EnableDeployKeyHandler implements ICommandHandler<EnableDeployKey> {
  constructor(
    private readonly store: EventStore,
    private readonly clock: Clock,
    private readonly projects: ProjectQueries,
    private readonly keys: DeployKeyQueries,
  ) {}

  async execute({ project, keyId, actor }: EnableDeployKey): Promise<number> {
    const p = await this.projects.require(project, actor, ACCESS.maintainer);
    await this.store.transact(async (uow) => {
      // A key the caller cannot reach is as missing as one that does not exist: its id reveals nothing.
      if ((await this.keys.accessibleId(uow.db, actor, { id: keyId, adminReachesAll: true })) === undefined)
        throw new NotFound('Deploy Key');
      await uow.decide(deployKeyStream(keyId), deployKeyDecider, (s) => enable(s, p.id, false, this.clock.now()));
    });
    return keyId;
  }
}
