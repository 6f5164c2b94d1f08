import { Clock, EventStore, type EventMetadata } from '@app/platform';
import { Command, CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { AvatarStore, UploadedFileRef } from '../avatars';
import { currentAvatar, UserQueries } from '../queries/user.queries';
import { hashPassword } from '../domain/secrets';
import { create, userDecider, validateProfile, type Identity, type UserProfile } from '../domain/user';
import { rethrowUserConflict } from './user-conflicts';

export class CreateUser extends Command<number> {
  constructor(
    readonly profile: UserProfile,
    readonly options: { password?: string; identity?: Identity; skipConfirmation: boolean; avatar?: UploadedFileRef },
    /** For a change made outside a request (the command line: `{ origin: 'cli' }`). */
    readonly metadata?: EventMetadata,
  ) {
    super();
  }
}

@CommandHandler(CreateUser)
export class CreateUserHandler implements ICommandHandler<CreateUser> {
  constructor(
    private readonly store: EventStore,
    private readonly clock: Clock,
    private readonly avatars: AvatarStore,
    private readonly users: UserQueries,
  ) {}

  async execute(command: CreateUser): Promise<number> {
    // A taken e-mail or username wins over every other validation error, as in GitLab.
    return this.create(command).catch((err) => rethrowUserConflict(err, this.users, command.profile));
  }

  private async create({ profile, options, metadata }: CreateUser): Promise<number> {
    // Validate before taking an id and spending time on the password hash.
    const errors = validateProfile(profile, options.password);
    const avatarName = options.avatar ? this.avatars.check(options.avatar, errors) : undefined;
    errors.throwIfAny();
    const userId = await this.store.nextId('user_id_seq');
    const namespaceId = await this.store.nextId('namespace_id_seq');
    const passwordDigest = options.password ? await hashPassword(options.password) : null;
    await this.store.transact(async (uow) => {
      await uow.decideNew(`user-${userId}`, userDecider, (s) =>
        create(
          s,
          {
            userId,
            namespaceId,
            profile: { ...profile, avatar: avatarName ?? null },
            password: options.password,
            passwordDigest,
            identity: options.identity,
            confirmed: options.skipConfirmation,
          },
          this.clock.now(),
        ),
      );
    }, metadata);
    if (options.avatar && avatarName)
      await this.avatars.publish(
        this.store,
        `user-${userId}`,
        userId,
        { fileName: avatarName, upload: options.avatar },
        (db) => currentAvatar(db, userId),
      );
    return userId;
  }
}
