import { OutboxRoutes, ProjectionRegistry } from '@app/platform';
import { TopLevelPaths, UsersModule } from '@app/users';
import { Module, OnModuleInit } from '@nestjs/common';
import { ChangeGroupCustomAttributeHandler } from './commands/group-custom-attribute.commands';
import { ChangeGroupMemberHandler } from './commands/group-member.commands';
import { CreateGroupHandler, DeleteGroupHandler, UpdateGroupHandler } from './commands/group.commands';
import { ShareGroupHandler, UnshareGroupHandler } from './commands/group-share.commands';
import { TransferGroupHandler } from './commands/transfer-group.command';
import { GroupCustomAttributesController } from './http/group-custom-attributes.controller';
import { GroupMembersController } from './http/group-members.controller';
import { GroupsController } from './http/groups.controller';
import { NamespacesController } from './http/namespaces.controller';
import { NamespaceProjection } from './projections/namespace.projection';
import { GroupQueries } from './queries/group.queries';
import { NamespaceQueries } from './queries/namespace.queries';
import { deletedUserRoute, ForgetDeletedUserHandler } from './jobs/deleted-user.job';
import { NamespaceAccess, NamespaceTopLevelPaths } from './queries/namespace-access';

/** Namespaces, groups and memberships: commands, projection and queries. */
@Module({
  imports: [UsersModule],
  providers: [
    CreateGroupHandler,
    UpdateGroupHandler,
    DeleteGroupHandler,
    ChangeGroupMemberHandler,
    ChangeGroupCustomAttributeHandler,
    ShareGroupHandler,
    UnshareGroupHandler,
    TransferGroupHandler,
    ForgetDeletedUserHandler,
    NamespaceProjection,
    NamespaceAccess,
    GroupQueries,
    NamespaceQueries,
    { provide: TopLevelPaths, useClass: NamespaceTopLevelPaths },
  ],
  exports: [NamespaceAccess, GroupQueries, NamespaceQueries, TopLevelPaths],
})
export class GroupsModule implements OnModuleInit {
  constructor(
    private readonly projections: ProjectionRegistry,
    private readonly routes: OutboxRoutes,
    private readonly projection: NamespaceProjection,
  ) {}

  onModuleInit(): void {
    this.projections.register(this.projection);
    this.routes.register(deletedUserRoute);
  }
}

/** Every `/groups` and `/namespaces` endpoint; the projects shown come through the GroupProjects port. */
@Module({
  imports: [GroupsModule],
  controllers: [GroupsController, GroupMembersController, GroupCustomAttributesController, NamespacesController],
})
export class GroupsHttpModule {}
