import { ACCESS } from '@app/groups';
import { Clock, EventStore, Invalid, UniqueViolation, type Actor } from '@app/platform';
import { lockSshKeyFingerprint, userSshKeyFingerprintTaken } from '@app/users';
import { Command, CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { add, deployKeyDecider, enable } from './deploy-key';
import { DeployKeyQueries } from './deploy-key.queries';
import type { AuthorizedProject } from '../projects/project.queries';
import { deployKeyStream, TAKEN, parse } from './deploy-key-writes';

/**
 * `POST /projects/:id/deploy_keys`, as GitLab's API: the same key text already on the project answers
 * that key unchanged; a key the caller can reach on another project is enabled here with this
 * `can_push`; anything else is a new key. Answers the key's id.
 */
export class AddDeployKey extends Command<number> {
  constructor(
    /** Required at maintainer by the route, before it validated the parameters (GitLab's order). */
    readonly project: AuthorizedProject<typeof ACCESS.maintainer>,
    readonly title: string,
    readonly key: string,
    readonly canPush: boolean,
    readonly actor: Actor,
  ) {
    super();
  }
}

@CommandHandler(AddDeployKey)
export class AddDeployKeyHandler implements ICommandHandler<AddDeployKey> {
  constructor(
    private readonly store: EventStore,
    private readonly clock: Clock,
    private readonly keys: DeployKeyQueries,
  ) {}

  async execute({ project: p, title, key, canPush, actor }: AddDeployKey): Promise<number> {
    const parsed = parse(key);
    const now = this.clock.now();
    return this.store
      .transact(async (uow) => {
        // Under the fingerprint's lock, so neither a concurrent user key nor a concurrent deploy key
        // with this fingerprint slips between the checks below and the insert.
        await lockSshKeyFingerprint(uow.db, parsed.fingerprintMd5);
        const here = await this.keys.idOnProject(uow.db, p.id, parsed.key);
        if (here !== undefined) return here;
        const reusable = await this.keys.accessibleId(uow.db, actor, { key: parsed.key });
        if (reusable !== undefined) {
          await uow.decide(deployKeyStream(reusable), deployKeyDecider, (s) => enable(s, p.id, canPush, now));
          return reusable;
        }
        // GitLab keeps user keys and deploy keys in one table with one unique fingerprint.
        if (await userSshKeyFingerprintTaken(uow.db, parsed.fingerprintMd5)) throw new Invalid(TAKEN);
        const keyId = await this.store.nextId('deploy_key_id_seq');
        await uow.decideNew(deployKeyStream(keyId), deployKeyDecider, (s) =>
          add(
            s,
            {
              keyId,
              projectId: p.id,
              userId: actor.id,
              title,
              key: parsed.key,
              keyType: parsed.type,
              fingerprint: parsed.fingerprintMd5,
              fingerprintSha256: parsed.fingerprintSha256,
              canPush,
            },
            now,
          ),
        );
        return keyId;
      })
      .catch((err) => {
        // Another deploy key with this fingerprint, on a project the caller cannot reach.
        if (err instanceof UniqueViolation && err.constraint.startsWith('deploy_keys_fingerprint'))
          throw new Invalid(TAKEN);
        throw err;
      });
  }
}
