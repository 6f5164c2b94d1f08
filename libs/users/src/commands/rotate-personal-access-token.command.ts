import { Clock, EventStore } from '@app/platform';
import { Command, CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import {
  accessTokenDecider,
  rotateAwayToken,
  rotatedTokenExpiry,
  type AccessToken,
  type TokenActor,
} from '../domain/access-token';
import { appendAccessToken } from './access-token.commands';

/**
 * POST /personal_access_tokens/:id/rotate and /self/rotate: in one transaction the old token is
 * revoked and a new one with its name, scopes and kind is made, expiring on `expiresAt` or a week
 * from today (GitLab's RotateService). Answers the new token's id and its secret, shown this once.
 */
export class RotatePersonalAccessToken extends Command<{ tokenId: number; secret: string }> {
  constructor(
    readonly tokenId: number,
    readonly actor: TokenActor,
    readonly expiresAt: string | undefined,
  ) {
    super();
  }
}

@CommandHandler(RotatePersonalAccessToken)
export class RotatePersonalAccessTokenHandler implements ICommandHandler<RotatePersonalAccessToken> {
  constructor(
    private readonly store: EventStore,
    private readonly clock: Clock,
  ) {}

  async execute({ tokenId, actor, expiresAt }: RotatePersonalAccessToken) {
    const successorId = await this.store.nextId('access_token_id_seq');
    return this.store.transact(async (uow) => {
      const now = this.clock.now();
      let old: AccessToken = { exists: false };
      await uow.decide(`token-${tokenId}`, accessTokenDecider, (s) => {
        old = s;
        return rotateAwayToken(s, actor, now);
      });
      const rotated = old as AccessToken;
      // rotateAwayToken refuses a token that does not exist, so this only narrows the type.
      if (!rotated.exists) throw new Error(`token ${tokenId} vanished during its rotation`);
      return appendAccessToken(
        uow,
        successorId,
        {
          userId: rotated.userId,
          name: rotated.name,
          scopes: rotated.scopes,
          impersonation: rotated.impersonation,
          expiresAt: expiresAt ?? rotatedTokenExpiry(now),
          rotatedFrom: rotated.tokenId,
        },
        now,
      );
    });
  }
}
