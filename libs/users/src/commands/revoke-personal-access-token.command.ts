import { Clock, EventStore } from '@app/platform';
import { Command, CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { accessTokenDecider, revokePersonalToken, type TokenActor } from '../domain/access-token';

/** DELETE /personal_access_tokens/:id and /self: the owner revokes one of their tokens, an administrator anyone's. */
export class RevokePersonalAccessToken extends Command<void> {
  constructor(
    readonly tokenId: number,
    readonly actor: TokenActor,
  ) {
    super();
  }
}

@CommandHandler(RevokePersonalAccessToken)
export class RevokePersonalAccessTokenHandler implements ICommandHandler<RevokePersonalAccessToken> {
  constructor(
    private readonly store: EventStore,
    private readonly clock: Clock,
  ) {}

  async execute({ tokenId, actor }: RevokePersonalAccessToken): Promise<void> {
    await this.store.decide(`token-${tokenId}`, accessTokenDecider, (s) =>
      revokePersonalToken(s, actor, this.clock.now()),
    );
  }
}
