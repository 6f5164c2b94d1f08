import { GroupProjects, GroupsModule, NamespaceContents } from '@app/groups';
import { firstRow, OutboxRoutes, ProjectionRegistry } from '@app/platform';
import { ProjectAvatarStore, UsersModule } from '@app/users';
import { Injectable, Module, OnModuleInit } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { ChangeProjectHandler } from './commands/change-project.command';
import { CreateProjectHandler } from './commands/create-project.command';
import { StarProjectHandler } from './commands/star-project.command';
import { ForkProjectHandler } from './commands/fork-project.command';
import {
  ChangeForkRelationHandler,
  RecordGitJobOutcomeHandler,
  RecordRepositoryPushHandler,
  RequestHousekeepingHandler,
} from './commands/project-maintenance.commands';
import { ForksController } from './http/forks.controller';
import { HousekeepingController } from './http/housekeeping.controller';
import { ProjectAvatarsController } from './http/project-avatars.controller';
import { gitJobsRoute } from './jobs/git-jobs';
import { ProjectGroupProjects } from './http/group-projects';
import {
  ProjectCustomAttributesController,
  ProjectListsController,
  ProjectMembersController,
  ProjectSharingController,
} from './http/project-relations.controller';
import { ProjectsController } from './http/projects.controller';
import { ProjectProjection } from './projections/project.projection';
import { ProjectQueries } from './queries/project.queries';
import { ProjectUploadsController, UploadsController } from './uploads/uploads.controller';

/** The groups context asks this port what visibility a namespace's projects need. */
@Injectable()
export class ProjectNamespaceContents extends NamespaceContents {
  constructor(private readonly db: DataSource) {
    super();
  }

  async widestProjectVisibility(namespaceId: number) {
    const row = await firstRow<{ visibility: 'private' | 'internal' | 'public' }>(
      this.db,
      `select visibility from projects where namespace_id = $1
        order by case visibility when 'public' then 2 when 'internal' then 1 else 0 end desc limit 1`,
      [namespaceId],
    );
    return row?.visibility;
  }
}

@Module({
  imports: [UsersModule, GroupsModule],
  providers: [
    CreateProjectHandler,
    ChangeProjectHandler,
    StarProjectHandler,
    ForkProjectHandler,
    ChangeForkRelationHandler,
    RequestHousekeepingHandler,
    RecordGitJobOutcomeHandler,
    RecordRepositoryPushHandler,
    ProjectProjection,
    ProjectQueries,
    { provide: NamespaceContents, useClass: ProjectNamespaceContents },
    ProjectAvatarStore,
  ],
  exports: [ProjectQueries, NamespaceContents, ProjectAvatarStore],
})
export class ProjectsModule implements OnModuleInit {
  constructor(
    private readonly projections: ProjectionRegistry,
    private readonly routes: OutboxRoutes,
    private readonly projection: ProjectProjection,
  ) {}

  onModuleInit(): void {
    this.projections.register(this.projection);
    this.routes.register(gitJobsRoute);
  }
}

@Module({
  imports: [ProjectsModule, UsersModule, GroupsModule],
  controllers: [
    ProjectsController,
    ProjectListsController,
    ProjectMembersController,
    ProjectSharingController,
    ProjectCustomAttributesController,
    ProjectUploadsController,
    UploadsController,
    ForksController,
    HousekeepingController,
    ProjectAvatarsController,
  ],
  providers: [{ provide: GroupProjects, useClass: ProjectGroupProjects }],
})
export class ProjectsHttpModule {}
