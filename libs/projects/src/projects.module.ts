import { GroupProjects, GroupsModule, NamespaceContents } from '@app/groups';
import { firstRow, OutboxRoutes, ProjectionRegistry } from '@app/platform';
import { DeployKeyFingerprints, ProjectAvatarStore, UsersModule } from '@app/users';
import { Injectable, Module, OnModuleInit } from '@nestjs/common';
import { DataSource, type EntityManager } from 'typeorm';
import {
  AddDeployKeyHandler,
  EnableDeployKeyHandler,
  RemoveDeployKeyHandler,
  UpdateDeployKeyHandler,
} from './commands/deploy-key.commands';
import { AddProjectMemberHandler } from './commands/add-project-member.command';
import { ArchiveProjectHandler } from './commands/archive-project.command';
import { DeleteProjectHandler } from './commands/delete-project.command';
import { RemoveProjectCustomAttributeHandler } from './commands/remove-project-custom-attribute.command';
import { RemoveProjectMemberHandler } from './commands/remove-project-member.command';
import { SetProjectCustomAttributeHandler } from './commands/set-project-custom-attribute.command';
import { ShareProjectHandler } from './commands/share-project.command';
import { TransferProjectHandler } from './commands/transfer-project.command';
import { UnarchiveProjectHandler } from './commands/unarchive-project.command';
import { UnshareProjectHandler } from './commands/unshare-project.command';
import { UpdateProjectMemberHandler } from './commands/update-project-member.command';
import { UpdateProjectHandler } from './commands/update-project.command';
import { CreateProjectHandler } from './commands/create-project.command';
import { StarProjectHandler } from './commands/star-project.command';
import { ForkProjectHandler } from './commands/fork-project.command';
import { ChangeProtectedBranchHandler } from './commands/protected-branch.commands';
import { ChangeTagReleaseHandler, RemoveTagReleaseHandler } from './commands/release.commands';
import {
  ChangeForkRelationHandler,
  RecordGitJobOutcomeHandler,
  RequestHousekeepingHandler,
} from './commands/project-maintenance.commands';
import { ForksController } from './http/forks.controller';
import { HousekeepingController } from './http/housekeeping.controller';
import { ProjectAvatarsController } from './http/project-avatars.controller';
import { gitJobsRoute } from './jobs/git-jobs';
import { ProjectGroupProjects } from './http/group-projects';
import { ProjectPresenter } from './http/project-presenter';
import {
  ProjectCustomAttributesController,
  ProjectListsController,
  ProjectMembersController,
  ProjectSharingController,
} from './http/project-relations.controller';
import { ProjectsController } from './http/projects.controller';
import { DeployKeysController } from './http/deploy-keys.controller';
import { ProtectedBranchesController } from './http/protected-branches.controller';
import { DeployKeyProjection } from './projections/deploy-key.projection';
import { ProjectProjection } from './projections/project.projection';
import { ProtectedBranchProjection } from './projections/protected-branch.projection';
import { ReleaseProjection } from './projections/release.projection';
import { DeployKeyQueries } from './queries/deploy-key.queries';
import { PendingPushes } from './pushes/pending-pushes';
import { PushInspector } from './pushes/push-inspector';
import { PushReconciler } from './pushes/push-reconciler';
import { PushRecorder } from './pushes/push-recorder';
import { RecordRepositoryPushHandler } from './pushes/record-repository-push.command';
import { ProjectQueries } from './queries/project.queries';
import { ProtectedBranchQueries } from './queries/protected-branch.queries';
import { ReleaseQueries } from './queries/release.queries';
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

/** The users context asks this port whether a key text is a deploy key before it becomes a user's key. */
@Injectable()
export class ProjectDeployKeyFingerprints extends DeployKeyFingerprints {
  constructor(private readonly keys: DeployKeyQueries) {
    super();
  }

  taken(db: EntityManager, fingerprint: string): Promise<boolean> {
    return this.keys.fingerprintTaken(db, fingerprint);
  }
}

@Module({
  imports: [UsersModule, GroupsModule],
  providers: [
    CreateProjectHandler,
    UpdateProjectHandler,
    ArchiveProjectHandler,
    UnarchiveProjectHandler,
    DeleteProjectHandler,
    TransferProjectHandler,
    AddProjectMemberHandler,
    UpdateProjectMemberHandler,
    RemoveProjectMemberHandler,
    ShareProjectHandler,
    UnshareProjectHandler,
    SetProjectCustomAttributeHandler,
    RemoveProjectCustomAttributeHandler,
    StarProjectHandler,
    ForkProjectHandler,
    ChangeForkRelationHandler,
    RequestHousekeepingHandler,
    RecordGitJobOutcomeHandler,
    RecordRepositoryPushHandler,
    AddDeployKeyHandler,
    EnableDeployKeyHandler,
    UpdateDeployKeyHandler,
    RemoveDeployKeyHandler,
    ChangeProtectedBranchHandler,
    ChangeTagReleaseHandler,
    RemoveTagReleaseHandler,
    ProjectProjection,
    DeployKeyProjection,
    ProtectedBranchProjection,
    ReleaseProjection,
    ProjectQueries,
    DeployKeyQueries,
    PendingPushes,
    PushInspector,
    PushRecorder,
    ProtectedBranchQueries,
    ReleaseQueries,
    { provide: NamespaceContents, useClass: ProjectNamespaceContents },
    { provide: DeployKeyFingerprints, useClass: ProjectDeployKeyFingerprints },
    ProjectAvatarStore,
  ],
  exports: [
    ProjectQueries,
    DeployKeyQueries,
    PendingPushes,
    PushRecorder,
    ProtectedBranchQueries,
    ReleaseQueries,
    NamespaceContents,
    DeployKeyFingerprints,
    ProjectAvatarStore,
  ],
})
export class ProjectsModule implements OnModuleInit {
  constructor(
    private readonly projections: ProjectionRegistry,
    private readonly routes: OutboxRoutes,
    private readonly projection: ProjectProjection,
    private readonly deployKeys: DeployKeyProjection,
    private readonly protectedBranches: ProtectedBranchProjection,
    private readonly releases: ReleaseProjection,
  ) {}

  onModuleInit(): void {
    // Deploy keys after projects: a project's deletion removes its row before its keys' orphans are dropped.
    // Protected branches and releases after projects: their rows reference the project's.
    this.projections.register(this.projection, this.deployKeys, this.protectedBranches, this.releases);
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
    DeployKeysController,
    ProtectedBranchesController,
  ],
  // The reconciler runs beside the API (the processes that take pushes), not in a worker or the command line.
  providers: [{ provide: GroupProjects, useClass: ProjectGroupProjects }, ProjectPresenter, PushReconciler],
  exports: [PushReconciler],
})
export class ProjectsHttpModule {}
