import { ACCESS } from '@app/groups';
import { Clock, EventStore, Invalid, NotFound, UniqueViolation, type Actor } from '@app/platform';
import {
  lockSshKeyFingerprint,
  parseSshPublicKey,
  SshKeyError,
  userSshKeyFingerprintTaken,
  type ParsedSshKey,
} from '@app/users';
import { Command, CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { add, deployKeyDecider, disable, enable, update } from './deploy-key';
import { DeployKeyQueries } from './deploy-key.queries';
import { ProjectQueries } from '../projects/project.queries';

const stream = (keyId: number) => `deploy-key-${keyId}`;

/** The nested model's errors, as GitLab words them (see `domain/deploy-key.ts`). */
const TAKEN = { 'deploy_key.fingerprint': ['has already been taken'] };

/** GitLab's Key model: the format check fails and no fingerprint can be computed. */
function parse(key: string): ParsedSshKey {
  try {
    return parseSshPublicKey(key);
  } catch (err) {
    if (!(err instanceof SshKeyError)) throw err;
    throw new Invalid({ 'deploy_key.key': ['is invalid'], 'deploy_key.fingerprint': ['cannot be generated'] });
  }
}

/**
 * `POST /projects/:id/deploy_keys`, as GitLab's API: the same key text already on the project answers
 * that key unchanged; a key the caller can reach on another project is enabled here with this
 * `can_push`; anything else is a new key. Answers the key's id.
 */
export class AddDeployKey extends Command<number> {
  constructor(
    readonly project: string | number,
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
    private readonly projects: ProjectQueries,
    private readonly keys: DeployKeyQueries,
  ) {}

  async execute({ project, title, key, canPush, actor }: AddDeployKey): Promise<number> {
    const p = await this.projects.require(project, actor, ACCESS.maintainer);
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
          await uow.decide(stream(reusable), deployKeyDecider, (s) => enable(s, p.id, canPush, now));
          return reusable;
        }
        // GitLab keeps user keys and deploy keys in one table with one unique fingerprint.
        if (await userSshKeyFingerprintTaken(uow.db, parsed.fingerprintMd5)) throw new Invalid(TAKEN);
        const keyId = await this.store.nextId('deploy_key_id_seq');
        await uow.decide(stream(keyId), deployKeyDecider, (s) =>
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
      await uow.decide(stream(keyId), deployKeyDecider, (s) => enable(s, p.id, false, this.clock.now()));
    });
    return keyId;
  }
}

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
    await this.store.decide(stream(keyId), deployKeyDecider, (s) => update(s, p.id, changes, this.clock.now()));
  }
}

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
      await uow.decide(stream(keyId), deployKeyDecider, async (s) => {
        const linked = s.exists ? Object.keys(s.links).map(Number) : [];
        return disable(s, p.id, await this.keys.goneProjectIds(uow.db, linked), this.clock.now());
      });
    });
  }
}
