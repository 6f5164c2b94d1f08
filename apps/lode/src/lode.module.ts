import {
  dataSourceOptions,
  EventStore1763780000000,
  LodeConfig,
  MetadataController,
  OutboxOutcomes1763780001400,
  PlatformModule,
  queueConnection,
  ThrottleCounters1763780001700,
  VersionController,
} from '@app/platform';
import { ApplicationSettingsController } from './application-settings.controller';
import { GitModule } from '@app/git';
import {
  Groups1763780000300,
  GroupSettings1763780002300,
  GroupShares1763780002310,
  GroupsHttpModule,
  GroupsModule,
  GroupsWorkerModule,
} from '@app/groups';
import {
  HookDeliveries1763780000600,
  DeliveriesOnOwnStreams1763780001900,
  HookBranchFilter1763780002502,
  HookFailures1763780003200,
  HookDeliveryLog1763780003400,
  HookSecrets1763780000700,
  SystemHooks1763780002700,
  Hooks1763780000500,
  HooksHttpModule,
  HooksModule,
  HooksWorkerModule,
} from '@app/hooks';
import {
  ActivityEvents1763780003100,
  DeployKeys1763780001100,
  PendingPushes1763780001500,
  PendingPushOwners1763780003600,
  RecordedRefs1763780004600,
  ProjectAvatars1763780000800,
  Projects1763780000400,
  ProtectedBranches1763780001300,
  ProjectSettingsKept1763780002400,
  ProtectedTags1763780002500,
  ProtectedBranchForcePush1763780002501,
  PushesOnOwnStreams1763780001800,
  ReleaseDetails1763780002100,
  ReleasesOnOwnStreams1763780002150,
  Releases1763780001600,
  ProjectsHttpModule,
  ProjectsModule,
  ProjectsWorkerModule,
} from '@app/projects';
import { RepositoriesHttpModule } from '@app/repositories';
import {
  SshKeyExpiryAndUserNote1763780002600,
  SshKeyFingerprints1763780001200,
  Users1763780000100,
  UserStatuses1763780002610,
  UsersHttpModule,
  WebSessions1763780004000,
  UsersModule,
  UsersWorkerModule,
} from '@app/users';
import { AuditEvents1763780003300, AuditHttpModule, AuditModule } from '@app/audit';
import { WebModule } from '@app/web';
import { BullModule } from '@nestjs/bullmq';
import { DynamicModule, Module } from '@nestjs/common';
import { CqrsModule } from '@nestjs/cqrs';
import { TypeOrmModule } from '@nestjs/typeorm';

/** Every context's migrations, in the order their tables depend on each other. */
export const MIGRATIONS = [
  EventStore1763780000000,
  Users1763780000100,
  Groups1763780000300,
  Projects1763780000400,
  Hooks1763780000500,
  HookDeliveries1763780000600,
  HookSecrets1763780000700,
  ProjectAvatars1763780000800,
  DeployKeys1763780001100,
  SshKeyFingerprints1763780001200,
  ProtectedBranches1763780001300,
  OutboxOutcomes1763780001400,
  PendingPushes1763780001500,
  Releases1763780001600,
  ThrottleCounters1763780001700,
  PushesOnOwnStreams1763780001800,
  DeliveriesOnOwnStreams1763780001900,
  ReleaseDetails1763780002100,
  ReleasesOnOwnStreams1763780002150,
  GroupSettings1763780002300,
  GroupShares1763780002310,
  ProjectSettingsKept1763780002400,
  ProtectedTags1763780002500,
  ProtectedBranchForcePush1763780002501,
  HookBranchFilter1763780002502,
  SshKeyExpiryAndUserNote1763780002600,
  UserStatuses1763780002610,
  SystemHooks1763780002700,
  ActivityEvents1763780003100,
  HookFailures1763780003200,
  AuditEvents1763780003300,
  HookDeliveryLog1763780003400,
  PendingPushOwners1763780003600,
  WebSessions1763780004000,
  RecordedRefs1763780004600,
];

export interface LodeParts {
  /** Serve HTTP (the API, git, health). */
  http: boolean;
  /** Run the outbox relay and the BullMQ processors. */
  worker: boolean;
}

/** The whole of Lode as one Nest module; `parts` says which sides this process runs. */
@Module({})
export class LodeModule {
  static forRoot(
    config: LodeConfig,
    parts: LodeParts = { http: config.runsApi, worker: config.runsWorker },
  ): DynamicModule {
    return {
      module: LodeModule,
      imports: [
        PlatformModule.forRoot(config, { http: parts.http, relay: parts.worker }),
        GitModule,
        TypeOrmModule.forRoot({ ...dataSourceOptions(config), autoLoadEntities: true }),
        CqrsModule.forRoot(),
        UsersModule,
        GroupsModule,
        ProjectsModule,
        HooksModule,
        AuditModule,
        ...(parts.http
          ? [
              UsersHttpModule,
              GroupsHttpModule,
              ProjectsHttpModule,
              HooksHttpModule,
              RepositoriesHttpModule,
              AuditHttpModule,
              WebModule,
            ]
          : []),
        ...(parts.worker
          ? [
              BullModule.forRoot(queueConnection(config, 'worker')),
              UsersWorkerModule,
              GroupsWorkerModule,
              ProjectsWorkerModule,
              HooksWorkerModule,
            ]
          : []),
      ],
      controllers: parts.http ? [VersionController, MetadataController, ApplicationSettingsController] : [],
    };
  }
}
