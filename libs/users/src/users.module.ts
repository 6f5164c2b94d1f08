import { OutboxRoutes, ProjectionRegistry } from '@app/platform';
import { Module, OnModuleInit } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import { AvatarStore } from './avatars';
import { CreateAccessTokenHandler, RevokeImpersonationTokenHandler } from './commands/access-token.commands';
import { ChangeUserBlockHandler } from './commands/block-user.command';
import { ChangeUserStateHandler } from './commands/change-user-state.command';
import { CreateUserHandler } from './commands/create-user.command';
import { RemoveUserCustomAttributeHandler, SetUserCustomAttributeHandler } from './commands/custom-attribute.commands';
import { DeleteUserHandler } from './commands/delete-user.command';
import { AddEmailHandler, RemoveEmailHandler } from './commands/email.commands';
import { AddGpgKeyHandler, RemoveGpgKeyHandler } from './commands/gpg-key.commands';
import { RemoveIdentityHandler } from './commands/remove-identity.command';
import { SetUserStatusHandler } from './commands/set-user-status.command';
import { RecordUserActivityHandler } from './commands/record-user-activity.command';
import { SeedRootHandler } from './commands/seed-root.command';
import { AddSshKeyHandler, RemoveSshKeyHandler } from './commands/ssh-key.commands';
import { RevokePersonalAccessTokenHandler } from './commands/revoke-personal-access-token.command';
import { RotatePersonalAccessTokenHandler } from './commands/rotate-personal-access-token.command';
import { UpdateUserHandler } from './commands/update-user.command';
import { AvatarsController } from './http/avatars.controller';
import { CredentialsController } from './http/credentials.controller';
import { CurrentUserController } from './http/current-user.controller';
import { UserCustomAttributesController } from './http/custom-attributes.controller';
import { ImpersonationTokensController } from './http/impersonation-tokens.controller';
import { PersonalAccessTokensController } from './http/personal-access-tokens.controller';
import { KeysController } from './http/keys.controller';
import { UserStatusController } from './http/user-status.controller';
import { PrivateTokenGuard } from './http/private-token.guard';
import { UsersController } from './http/users.controller';
import { removeUserFilesRoute } from './jobs/remove-user-files.job';
import { UserProjection } from './projections/user.projection';
import { ActorResolver } from './queries/actor-resolver';
import { TokenResolver } from './queries/token-resolver';
import { CommitSignatures } from './queries/commit-signatures';
import { UserQueries } from './queries/user.queries';
import { WebSessions } from './sessions/web-sessions';

const HANDLERS = [
  CreateUserHandler,
  UpdateUserHandler,
  DeleteUserHandler,
  ChangeUserBlockHandler,
  ChangeUserStateHandler,
  RemoveIdentityHandler,
  SetUserStatusHandler,
  AddSshKeyHandler,
  RemoveSshKeyHandler,
  AddGpgKeyHandler,
  RemoveGpgKeyHandler,
  AddEmailHandler,
  RemoveEmailHandler,
  CreateAccessTokenHandler,
  RevokeImpersonationTokenHandler,
  RevokePersonalAccessTokenHandler,
  RotatePersonalAccessTokenHandler,
  SetUserCustomAttributeHandler,
  RemoveUserCustomAttributeHandler,
  RecordUserActivityHandler,
  SeedRootHandler,
];

/** Commands, projections and queries of the users context: always loaded, whatever the process role. */
@Module({
  providers: [
    ...HANDLERS,
    UserProjection,
    UserQueries,
    CommitSignatures,
    TokenResolver,
    ActorResolver,
    AvatarStore,
    WebSessions,
  ],
  exports: [UserQueries, CommitSignatures, ActorResolver, AvatarStore, WebSessions],
})
export class UsersModule implements OnModuleInit {
  constructor(
    private readonly projections: ProjectionRegistry,
    private readonly routes: OutboxRoutes,
    private readonly projection: UserProjection,
  ) {}

  onModuleInit(): void {
    this.projections.register(this.projection);
    this.routes.register(removeUserFilesRoute);
  }
}

/** The users API: its controllers and the authentication guard that every API route passes. */
@Module({
  imports: [UsersModule],
  controllers: [
    UsersController,
    CurrentUserController,
    CredentialsController,
    ImpersonationTokensController,
    PersonalAccessTokensController,
    UserCustomAttributesController,
    AvatarsController,
    KeysController,
    UserStatusController,
  ],
  providers: [{ provide: APP_GUARD, useClass: PrivateTokenGuard }],
})
export class UsersHttpModule {}
