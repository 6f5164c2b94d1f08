import { Clock, EventMetadata, EventStore, NotFound, UnitOfWork } from '@app/platform';
import { Command, CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { accessTokenDecider, createToken, revokeImpersonationToken } from '../domain/access-token';
import { newTokenSecret, tokenDigest } from '../domain/secrets';
import { isAdminHeld } from '../queries/user.queries';

export interface NewAccessToken {
  userId: number;
  name: string;
  scopes: string[];
  impersonation: boolean;
  expiresAt: string | null;
  /** A secret chosen by the operator (LODE_ROOT_TOKEN); otherwise one is generated. */
  secret?: string;
  /** The token this one replaces, when made by a rotation. */
  rotatedFrom?: number;
}

/** Creates a personal or impersonation token; answers its id and the secret, shown this once. */
export class CreateAccessToken extends Command<{ tokenId: number; secret: string }> {
  constructor(
    readonly token: NewAccessToken,
    readonly metadata?: EventMetadata,
  ) {
    super();
  }
}

@CommandHandler(CreateAccessToken)
export class CreateAccessTokenHandler implements ICommandHandler<CreateAccessToken> {
  constructor(
    private readonly store: EventStore,
    private readonly clock: Clock,
  ) {}

  async execute({ token, metadata }: CreateAccessToken): Promise<{ tokenId: number; secret: string }> {
    const tokenId = await this.store.nextId('access_token_id_seq');
    return this.store.transact((uow) => appendAccessToken(uow, tokenId, token, this.clock.now()), metadata);
  }
}

/**
 * The token's events inside an existing unit of work (root seeding creates the user and its token
 * together). `tokenId` was just taken from `access_token_id_seq`: the stream is new (`decideNew`).
 */
export async function appendAccessToken(uow: UnitOfWork, tokenId: number, token: NewAccessToken, now: Date) {
  const ownerIsAdmin = await isAdminHeld(uow.db, token.userId);
  if (ownerIsAdmin === undefined) throw new NotFound('User');
  const secret = token.secret ?? newTokenSecret();
  await uow.decideNew(`token-${tokenId}`, accessTokenDecider, (s) =>
    createToken(s, { ...token, tokenId, digest: tokenDigest(secret), ownerIsAdmin }, now),
  );
  return { tokenId, secret };
}

export class RevokeImpersonationToken extends Command<void> {
  constructor(
    readonly userId: number,
    readonly tokenId: number,
  ) {
    super();
  }
}

@CommandHandler(RevokeImpersonationToken)
export class RevokeImpersonationTokenHandler implements ICommandHandler<RevokeImpersonationToken> {
  constructor(
    private readonly store: EventStore,
    private readonly clock: Clock,
  ) {}

  async execute({ userId, tokenId }: RevokeImpersonationToken): Promise<void> {
    await this.store.decide(`token-${tokenId}`, accessTokenDecider, (s) =>
      revokeImpersonationToken(s, userId, this.clock.now()),
    );
  }
}
