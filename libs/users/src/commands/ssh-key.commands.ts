import { Clock, EventStore, Invalid, UniqueViolation } from '@app/platform';
import { ModuleRef } from '@nestjs/core';
import { Command, CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { parseSshPublicKey, SshKeyError } from '../domain/ssh-public-key';
import { addSshKey, removeSshKey, userDecider } from '../domain/user';
import { DeployKeyFingerprints, lockSshKeyFingerprint } from '../queries/ssh-key-fingerprints';

const TAKEN = { fingerprint: ['has already been taken'] };

export class AddSshKey extends Command<number> {
  constructor(
    readonly userId: number,
    readonly title: string,
    readonly key: string,
    /** ISO 8601, null: never. */
    readonly expiresAt: string | null = null,
  ) {
    super();
  }
}

@CommandHandler(AddSshKey)
export class AddSshKeyHandler implements ICommandHandler<AddSshKey> {
  constructor(
    private readonly store: EventStore,
    private readonly clock: Clock,
    private readonly moduleRef: ModuleRef,
  ) {}

  /**
   * The projects context provides the port from a module that imports this one, so it is looked up
   * across the application; a Lode without projects has no deploy keys to avoid.
   */
  private deployKeys(): DeployKeyFingerprints | undefined {
    try {
      return this.moduleRef.get(DeployKeyFingerprints, { strict: false });
    } catch {
      return undefined;
    }
  }

  async execute({ userId, title, key, expiresAt }: AddSshKey): Promise<number> {
    let parsed;
    try {
      parsed = parseSshPublicKey(key);
    } catch (err) {
      if (!(err instanceof SshKeyError)) throw err;
      // GitLab's Key model: the format check fails and no fingerprint can be computed.
      throw new Invalid({ key: ['is invalid'], fingerprint: ['cannot be generated'] });
    }
    const keyId = await this.store.nextId('ssh_key_id_seq');
    const deployKeys = this.deployKeys();
    await this.store
      .transact(async (uow) => {
        // GitLab's one `keys` table: a deploy key's text cannot become a user's key either.
        await lockSshKeyFingerprint(uow.db, parsed.fingerprintMd5);
        if (await deployKeys?.taken(uow.db, parsed.fingerprintMd5)) throw new Invalid(TAKEN);
        await uow.decide(`user-${userId}`, userDecider, (s) =>
          addSshKey(
            s,
            {
              keyId,
              title,
              key: parsed.key,
              fingerprint: parsed.fingerprintMd5,
              fingerprintSha256: parsed.fingerprintSha256,
              keyType: parsed.type,
              expiresAt,
            },
            this.clock.now(),
          ),
        );
      })
      .catch((err) => {
        // Fingerprints are unique across all users (the key would let two accounts push as each other).
        if (err instanceof UniqueViolation && err.constraint === 'ssh_keys_fingerprint_key') throw new Invalid(TAKEN);
        throw err;
      });
    return keyId;
  }
}

export class RemoveSshKey extends Command<void> {
  constructor(
    readonly userId: number,
    readonly keyId: number,
  ) {
    super();
  }
}

@CommandHandler(RemoveSshKey)
export class RemoveSshKeyHandler implements ICommandHandler<RemoveSshKey> {
  constructor(
    private readonly store: EventStore,
    private readonly clock: Clock,
  ) {}

  async execute({ userId, keyId }: RemoveSshKey): Promise<void> {
    await this.store.decide(`user-${userId}`, userDecider, (s) => removeSshKey(s, keyId, this.clock.now()));
  }
}
