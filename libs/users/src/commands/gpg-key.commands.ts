import { Clock, EventStore, Invalid, UniqueViolation } from '@app/platform';
import { Command, CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { GpgKeyError, parseGpgPublicKey } from '../domain/gpg-public-key';
import { addGpgKey, removeGpgKey, userDecider } from '../domain/user';

export class AddGpgKey extends Command<number> {
  constructor(
    readonly userId: number,
    readonly key: string,
  ) {
    super();
  }
}

@CommandHandler(AddGpgKey)
export class AddGpgKeyHandler implements ICommandHandler<AddGpgKey> {
  constructor(
    private readonly store: EventStore,
    private readonly clock: Clock,
  ) {}

  async execute({ userId, key }: AddGpgKey): Promise<number> {
    let parsed;
    try {
      parsed = await parseGpgPublicKey(key);
    } catch (err) {
      if (!(err instanceof GpgKeyError)) throw err;
      throw new Invalid({ key: ['is invalid'] });
    }
    const keyId = await this.store.nextId('gpg_key_id_seq');
    await this.store
      .decide(`user-${userId}`, userDecider, (s) =>
        addGpgKey(
          s,
          { keyId, key: parsed.key, fingerprint: parsed.fingerprint, primaryKeyId: parsed.primaryKeyId },
          this.clock.now(),
        ),
      )
      .catch((err) => {
        // GitLab's GpgKey model: `key` is unique, and the fingerprint is not validated once `key` has an error.
        if (err instanceof UniqueViolation && err.constraint === 'gpg_keys_fingerprint_key')
          throw new Invalid({ key: ['has already been taken'] });
        throw err;
      });
    return keyId;
  }
}

export class RemoveGpgKey extends Command<void> {
  constructor(
    readonly userId: number,
    readonly keyId: number,
  ) {
    super();
  }
}

@CommandHandler(RemoveGpgKey)
export class RemoveGpgKeyHandler implements ICommandHandler<RemoveGpgKey> {
  constructor(
    private readonly store: EventStore,
    private readonly clock: Clock,
  ) {}

  async execute({ userId, keyId }: RemoveGpgKey): Promise<void> {
    await this.store.decide(`user-${userId}`, userDecider, (s) => removeGpgKey(s, keyId, this.clock.now()));
  }
}
