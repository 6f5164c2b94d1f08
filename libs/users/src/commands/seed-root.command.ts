import { Clock, EventStore, LodeConfig } from '@app/platform';
import { Logger } from '@nestjs/common';
import { Command, CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { chmod, mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { hashPassword, tokenDigest } from '../domain/secrets';
import { create, newUserProfile, userDecider } from '../domain/user';
import { lockRootSeeding, rootUserId, tokenDigestKnown, userCount } from '../queries/user.queries';
import { appendAccessToken } from './access-token.commands';

export const ROOT_TOKEN_SCOPES = ['api', 'read_user', 'sudo'];

/**
 * First start: when no user exists, creates the administrator `root` and its first token
 * (`LODE_ROOT_TOKEN`, or a generated one written once to `$LODE_DATA_DIR/initial_root_token`).
 * Later starts change nothing, except registering a `LODE_ROOT_TOKEN` that was never registered.
 */
export class SeedRoot extends Command<void> {}

@CommandHandler(SeedRoot)
export class SeedRootHandler implements ICommandHandler<SeedRoot> {
  private readonly logger = new Logger('SeedRoot');

  constructor(
    private readonly store: EventStore,
    private readonly clock: Clock,
    private readonly config: LodeConfig,
  ) {}

  async execute(): Promise<void> {
    const { rootToken } = this.config;
    if (rootToken !== undefined && rootToken.length < 16)
      throw new Error('LODE_ROOT_TOKEN must be at least 16 characters long');
    const passwordDigest = this.config.rootPassword ? await hashPassword(this.config.rootPassword) : null;
    const generated = await this.store.transact(
      async (uow) => {
        // Serialises an API and a worker starting at the same moment.
        await lockRootSeeding(uow.db);
        const users = await userCount(uow.db);
        const now = this.clock.now();
        if (users > 0) {
          if (rootToken === undefined) return undefined;
          const known = await tokenDigestKnown(uow.db, tokenDigest(rootToken));
          const rootId = await rootUserId(uow.db);
          if (known || rootId === undefined) return undefined;
          const tokenId = await this.store.nextId('access_token_id_seq');
          await appendAccessToken(
            uow,
            tokenId,
            {
              userId: rootId,
              name: 'LODE_ROOT_TOKEN',
              scopes: ROOT_TOKEN_SCOPES,
              impersonation: false,
              expiresAt: null,
              secret: rootToken,
            },
            now,
          );
          this.logger.log('registered LODE_ROOT_TOKEN for root');
          return undefined;
        }
        const userId = await this.store.nextId('user_id_seq');
        const namespaceId = await this.store.nextId('namespace_id_seq');
        await uow.decide(`user-${userId}`, userDecider, (s) =>
          create(
            s,
            {
              userId,
              namespaceId,
              profile: newUserProfile({
                name: 'Administrator',
                username: 'root',
                email: this.config.rootEmail,
                isAdmin: true,
              }),
              passwordDigest,
              confirmed: true,
            },
            now,
          ),
        );
        const tokenId = await this.store.nextId('access_token_id_seq');
        const { secret } = await appendAccessToken(
          uow,
          tokenId,
          {
            userId,
            name: rootToken ? 'LODE_ROOT_TOKEN' : 'initial root token',
            scopes: ROOT_TOKEN_SCOPES,
            impersonation: false,
            expiresAt: null,
            secret: rootToken,
          },
          now,
        );
        this.logger.log(`created the administrator root (user ${userId})`);
        return rootToken ? undefined : secret;
      },
      { origin: 'startup' },
    );
    if (generated) {
      await mkdir(this.config.dataDir, { recursive: true });
      const file = join(this.config.dataDir, 'initial_root_token');
      await writeFile(file, `${generated}\n`, { mode: 0o600 });
      await chmod(file, 0o600);
      this.logger.log(`root's first access token was written to ${file} (readable by this user only)`);
    }
  }
}
