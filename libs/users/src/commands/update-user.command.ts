import { Clock, EventStore } from '@app/platform';
import { Command, CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { AvatarStore, UploadedFileRef } from '../avatars';
import { currentAvatar, userIn, UserQueries } from '../queries/user.queries';
import { hashPassword } from '../domain/secrets';
import {
  update,
  userDecider,
  validateIdentity,
  validateProfile,
  type Identity,
  type UserProfile,
} from '../domain/user';
import { rethrowUserConflict } from './user-conflicts';

export class UpdateUser extends Command<void> {
  constructor(
    readonly userId: number,
    readonly changes: Partial<UserProfile>,
    readonly options: {
      password?: string;
      identity?: Identity;
      /** A new avatar, or null to remove the one there is (GitLab's blank `avatar`). */
      avatar?: UploadedFileRef | null;
    } = {},
  ) {
    super();
  }
}

@CommandHandler(UpdateUser)
export class UpdateUserHandler implements ICommandHandler<UpdateUser> {
  constructor(
    private readonly store: EventStore,
    private readonly clock: Clock,
    private readonly avatars: AvatarStore,
    private readonly users: UserQueries,
  ) {}

  async execute(command: UpdateUser): Promise<void> {
    // GitLab checks another user's e-mail, then username, before anything else: 409 first.
    const { userId, changes } = command;
    await this.update(command).catch((err) =>
      rethrowUserConflict(err, this.users, { userId, email: changes.email, username: changes.username }),
    );
  }

  private async update({ userId, changes, options }: UpdateUser): Promise<void> {
    const errors = validateProfile(changes, options.password);
    validateIdentity(options.identity, errors);
    const avatarName = options.avatar ? this.avatars.check(options.avatar, errors) : undefined;
    errors.throwIfAny();
    const passwordDigest = options.password ? await hashPassword(options.password) : undefined;
    const swapEmailId = changes.email !== undefined ? await this.store.nextId('email_id_seq') : undefined;
    await this.store.transact(async (uow) => {
      // Only real changes are recorded: clients such as python-gitlab send the unchanged e-mail and username again.
      const current = (await userIn(uow.db, userId)) ?? {};
      const all = avatarName || options.avatar === null ? { ...changes, avatar: avatarName ?? null } : changes;
      await uow.decide(`user-${userId}`, userDecider, (s) =>
        update(
          s,
          {
            changes: all,
            current,
            password: options.password,
            passwordDigest,
            identity: options.identity,
            swapEmailId,
          },
          this.clock.now(),
        ),
      );
    });
    if (options.avatar === undefined || (options.avatar && !avatarName)) return;
    const file = options.avatar ? { fileName: avatarName!, upload: options.avatar } : { fileName: null };
    await this.avatars.publish(this.store, `user-${userId}`, userId, file, (db) => currentAvatar(db, userId));
  }
}
