import { AbandonedCreations } from './projects/abandoned-creations';
import { GroupProjects, GroupsModule, NamespaceContents } from '@app/groups';
import { firstRow, Invalidations, OutboxRoutes, ProjectionRegistry } from '@app/platform';
import {
  DeployKeyFingerprints,
  DeployKeyLookup,
  ProjectAvatarStore,
  UsersModule,
  type InstanceDeployKey,
} from '@app/users';
import { Injectable, Module, OnModuleInit } from '@nestjs/common';
import { DataSource, type EntityManager } from 'typeorm';
import { AddDeployKeyHandler } from './deploy-keys/add-deploy-key.command';
import { EnableDeployKeyHandler } from './deploy-keys/enable-deploy-key.command';
import { RemoveDeployKeyHandler } from './deploy-keys/remove-deploy-key.command';
import { UpdateDeployKeyHandler } from './deploy-keys/update-deploy-key.command';
import { AddProjectMemberHandler } from './members/add-project-member.command';
import { ArchiveProjectHandler } from './projects/archive-project.command';
import { DeleteProjectHandler } from './projects/delete-project.command';
import { RemoveProjectCustomAttributeHandler } from './projects/remove-project-custom-attribute.command';
import { RemoveProjectMemberHandler } from './members/remove-project-member.command';
import { SetProjectCustomAttributeHandler } from './projects/set-project-custom-attribute.command';
import { ShareProjectHandler } from './sharing/share-project.command';
import { TransferProjectHandler } from './projects/transfer-project.command';
import { TransferProjectToNamespaceHandler } from './projects/transfer-project-to-namespace.command';
import { InitialReadme } from './projects/initial-readme';
import { UnarchiveProjectHandler } from './projects/unarchive-project.command';
import { UnshareProjectHandler } from './sharing/unshare-project.command';
import { UpdateProjectMemberHandler } from './members/update-project-member.command';
import { UpdateProjectHandler } from './projects/update-project.command';
import { CreateProjectHandler } from './projects/create-project.command';
import { StarProjectHandler } from './forks/star-project.command';
import { UnstarProjectHandler } from './forks/unstar-project.command';
import { ProjectStarsController } from './forks/stars.controller';
import { ForkProjectHandler } from './forks/fork-project.command';
import { CreateProtectedBranchHandler } from './protected-refs/create-protected-branch.command';
import { ProtectRepositoryBranchHandler } from './protected-refs/protect-repository-branch.command';
import { RemoveProtectedBranchHandler } from './protected-refs/remove-protected-branch.command';
import { UnprotectRepositoryBranchHandler } from './protected-refs/unprotect-repository-branch.command';
import { UpdateProtectedBranchHandler } from './protected-refs/update-protected-branch.command';
import { CreateProtectedTagHandler } from './protected-refs/create-protected-tag.command';
import { RemoveProtectedTagHandler } from './protected-refs/remove-protected-tag.command';
import { CreateTagReleaseHandler } from './releases/create-tag-release.command';
import { CreateReleaseHandler } from './releases/create-release.command';
import { UpdateReleaseHandler } from './releases/update-release.command';
import { DeleteReleaseHandler } from './releases/delete-release.command';
import { AddReleaseLinkHandler } from './releases/add-release-link.command';
import { UpdateReleaseLinkHandler } from './releases/update-release-link.command';
import { RemoveReleaseLinkHandler } from './releases/remove-release-link.command';
import { RemoveTagReleaseHandler } from './releases/remove-tag-release.command';
import { UpdateTagReleaseHandler } from './releases/update-tag-release.command';
import { TagReleaseWrites } from './releases/tag-release-writes';
import { CreateForkRelationHandler } from './forks/create-fork-relation.command';
import { RecordForkImportHandler } from './forks/record-fork-import.command';
import { RemoveForkRelationHandler } from './forks/remove-fork-relation.command';
import { RecordHousekeepingFinishedHandler } from './repository-jobs/record-housekeeping-finished.command';
import { RequestHousekeepingHandler } from './repository-jobs/request-housekeeping.command';
import { ForksController } from './forks/forks.controller';
import { HousekeepingController } from './repository-jobs/housekeeping.controller';
import { ProjectAvatarsController } from './projects/project-avatars.controller';
import { gitJobsRoute } from './repository-jobs/git-jobs';
import { ProjectGroupProjects } from './projects/group-projects';
import { ProjectPresenter } from './projects/project-presenter';
import { ProjectCustomAttributesController } from './projects/project-custom-attributes.controller';
import { ProjectStorageController } from './projects/project-storage.controller';
import { UserProjectsController } from './projects/user-projects.controller';
import { ProjectMembersController } from './members/project-members.controller';
import { ProjectGroupsController } from './sharing/project-groups.controller';
import { UserMembershipsController } from './members/user-memberships.controller';
import { UserMembershipQueries } from './members/user-memberships.queries';
import { ProjectSharingController } from './sharing/project-sharing.controller';
import { ProjectsController } from './projects/projects.controller';
import { DeployKeysController } from './deploy-keys/deploy-keys.controller';
import { ProtectedBranchesController } from './protected-refs/protected-branches.controller';
import { ProtectedTagsController } from './protected-refs/protected-tags.controller';
import { DeployKeyProjection } from './deploy-keys/deploy-key.projection';
import { ProjectProjection } from './projects/project.projection';
import { ProtectedBranchProjection } from './protected-refs/protected-branch.projection';
import { ProtectedTagProjection } from './protected-refs/protected-tag.projection';
import { ReleaseProjection } from './releases/release.projection';
import { ActivityProjection } from './activity/activity.projection';
import { ActivityQueries } from './activity/activity.queries';
import { EventsController } from './activity/events.controller';
import { DeployKeyQueries } from './deploy-keys/deploy-key.queries';
import { PendingPushes } from './pushes/pending-pushes';
import { RecordedRefs } from './pushes/recorded-refs';
import { PushInspector } from './pushes/push-inspector';
import { PushReconciler } from './pushes/push-reconciler';
import { PushRecorder } from './pushes/push-recorder';
import { RecordRepositoryPushHandler } from './pushes/record-repository-push.command';
import { ProjectQueries } from './projects/project.queries';
import { ProjectChangeNotices } from './projects/project-change-notices';
import { PublicProjectAnswers, publicProjectInvalidationRoute } from './projects/public-project-answers';
import { ProjectSharingQueries } from './sharing/project-sharing.queries';
import { ProtectedBranchQueries } from './protected-refs/protected-branch.queries';
import { ProtectedTagQueries } from './protected-refs/protected-tag.queries';
import { ReleaseQueries } from './releases/release.queries';
import { ProjectUploadsController, UploadsController } from './uploads/uploads.controller';

/** The groups context asks this port what visibility a namespace's projects need, and which paths they hold. */
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

  async widestProjectVisibilityIn(namespaceIds: number[]) {
    const row = await firstRow<{ visibility: 'private' | 'internal' | 'public' }>(
      this.db,
      `select visibility from projects where namespace_id = any($1::int[])
        order by case visibility when 'public' then 2 when 'internal' then 1 else 0 end desc limit 1`,
      [namespaceIds],
    );
    return row?.visibility;
  }

  async hasProjectPath(namespaceId: number, path: string) {
    const row = await firstRow<{ one: number }>(
      this.db,
      `select 1 as one from projects where namespace_id = $1 and lower(path) = lower($2)`,
      [namespaceId, path],
    );
    return row !== undefined;
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

/** Users' `GET /keys` asks this port for a deploy key it did not find among users' keys. */
@Injectable()
export class ProjectDeployKeyLookup extends DeployKeyLookup {
  constructor(private readonly keys: DeployKeyQueries) {
    super();
  }

  byFingerprint(fingerprint: { md5: string } | { sha256: string }): Promise<InstanceDeployKey | undefined> {
    return this.keys.ofInstance(fingerprint);
  }

  byId(id: number): Promise<InstanceDeployKey | undefined> {
    return this.keys.ofInstance({ id });
  }
}

@Module({
  imports: [UsersModule, GroupsModule],
  providers: [
    AbandonedCreations,
    CreateProjectHandler,
    UpdateProjectHandler,
    ArchiveProjectHandler,
    UnarchiveProjectHandler,
    DeleteProjectHandler,
    TransferProjectHandler,
    TransferProjectToNamespaceHandler,
    AddProjectMemberHandler,
    UpdateProjectMemberHandler,
    RemoveProjectMemberHandler,
    ShareProjectHandler,
    UnshareProjectHandler,
    SetProjectCustomAttributeHandler,
    RemoveProjectCustomAttributeHandler,
    StarProjectHandler,
    UnstarProjectHandler,
    ForkProjectHandler,
    CreateForkRelationHandler,
    RemoveForkRelationHandler,
    RecordForkImportHandler,
    RequestHousekeepingHandler,
    RecordHousekeepingFinishedHandler,
    RecordRepositoryPushHandler,
    AddDeployKeyHandler,
    EnableDeployKeyHandler,
    UpdateDeployKeyHandler,
    RemoveDeployKeyHandler,
    CreateProtectedBranchHandler,
    RemoveProtectedBranchHandler,
    ProtectRepositoryBranchHandler,
    UnprotectRepositoryBranchHandler,
    UpdateProtectedBranchHandler,
    CreateProtectedTagHandler,
    RemoveProtectedTagHandler,
    CreateTagReleaseHandler,
    UpdateTagReleaseHandler,
    TagReleaseWrites,
    RemoveTagReleaseHandler,
    CreateReleaseHandler,
    UpdateReleaseHandler,
    DeleteReleaseHandler,
    AddReleaseLinkHandler,
    UpdateReleaseLinkHandler,
    RemoveReleaseLinkHandler,
    ProjectProjection,
    DeployKeyProjection,
    ProtectedBranchProjection,
    ProtectedTagProjection,
    ReleaseProjection,
    ActivityProjection,
    ActivityQueries,
    ProjectQueries,
    PublicProjectAnswers,
    ProjectChangeNotices,
    ProjectSharingQueries,
    DeployKeyQueries,
    PendingPushes,
    RecordedRefs,
    PushInspector,
    PushRecorder,
    ProtectedBranchQueries,
    ProtectedTagQueries,
    ReleaseQueries,
    { provide: NamespaceContents, useClass: ProjectNamespaceContents },
    { provide: DeployKeyFingerprints, useClass: ProjectDeployKeyFingerprints },
    { provide: DeployKeyLookup, useClass: ProjectDeployKeyLookup },
    ProjectAvatarStore,
  ],
  exports: [
    ProjectQueries,
    PublicProjectAnswers,
    ProjectChangeNotices,
    ProjectSharingQueries,
    DeployKeyQueries,
    PendingPushes,
    PushRecorder,
    ProtectedBranchQueries,
    ProtectedTagQueries,
    ReleaseQueries,
    ActivityQueries,
    NamespaceContents,
    DeployKeyFingerprints,
    DeployKeyLookup,
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
    private readonly protectedTags: ProtectedTagProjection,
    private readonly releases: ReleaseProjection,
    private readonly activity: ActivityProjection,
    private readonly invalidations: Invalidations,
  ) {}

  onModuleInit(): void {
    // Deploy keys after projects: a project's deletion removes its row before its keys' orphans are dropped.
    // Protected branches, tags, releases and contribution events after projects: their rows reference the project's.
    this.projections.register(
      this.projection,
      this.deployKeys,
      this.protectedBranches,
      this.protectedTags,
      this.releases,
      this.activity,
    );
    this.routes.register(gitJobsRoute);
    // In every process that writes events (API, worker, command line): the writer names what is stale.
    this.invalidations.register(publicProjectInvalidationRoute);
  }
}

@Module({
  imports: [ProjectsModule, UsersModule, GroupsModule],
  controllers: [
    ProjectsController,
    UserProjectsController,
    ProjectMembersController,
    ProjectSharingController,
    ProjectGroupsController,
    ProjectCustomAttributesController,
    ProjectStorageController,
    ProjectUploadsController,
    UploadsController,
    ForksController,
    ProjectStarsController,
    HousekeepingController,
    ProjectAvatarsController,
    DeployKeysController,
    ProtectedBranchesController,
    UserMembershipsController,
    ProtectedTagsController,
    EventsController,
  ],
  // The reconciler runs beside the API (the processes that take pushes), not in a worker or the command line.
  providers: [
    { provide: GroupProjects, useClass: ProjectGroupProjects },
    ProjectPresenter,
    PushReconciler,
    InitialReadme,
    UserMembershipQueries,
  ],
  exports: [PushReconciler],
})
export class ProjectsHttpModule {}
