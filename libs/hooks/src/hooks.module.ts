import { GroupsModule } from '@app/groups';
import { OutboxRoutes, ProjectionRegistry } from '@app/platform';
import { ProjectsModule } from '@app/projects';
import { UsersModule } from '@app/users';
import { BullModule } from '@nestjs/bullmq';
import { Module, OnModuleInit } from '@nestjs/common';
import { ChangeProjectHookHandler } from './commands/hook.commands';
import { ChangeSystemHookHandler } from './commands/system-hook.commands';
import { ProjectHooksController } from './http/project-hooks.controller';
import { SystemHooksController } from './http/system-hooks.controller';
import { ProjectHookProjection } from './projections/project-hook.projection';
import { SystemHookProjection } from './projections/system-hook.projection';
import { DeliveryLog } from './delivery/delivery-log';
import { DeliveryTargets } from './delivery/delivery-targets';
import { HookFailures } from './delivery/hook-failures';
import { HookDelivery } from './webhooks/hook-delivery';
import { ProjectHookTest } from './webhooks/project-hook-test';
import { HookQueries } from './queries/hook.queries';
import { SystemHookQueries } from './queries/system-hook.queries';
import { SystemHookTest } from './webhooks/system-hook-test';
import { HookSecrets } from './secrets/hook-secrets';
import { SystemHookFanOut } from './webhooks/system-hook-fanout';
import { SystemHookListeners } from './webhooks/system-hook-listeners';
import {
  hookSecretsRoute,
  systemHookJobsRoute,
  WEBHOOKS_QUEUE,
  WebhookJobsProcessor,
  webhookJobsRoute,
} from './webhooks/webhook-jobs';

/**
 * Project hooks: their records, the delivery log, and the outbox route that queues deliveries for
 * pushes; system hooks: their records.
 */
@Module({
  imports: [GroupsModule, ProjectsModule],
  providers: [
    ChangeProjectHookHandler,
    ProjectHookProjection,
    HookQueries,
    HookSecrets,
    HookFailures,
    ChangeSystemHookHandler,
    SystemHookProjection,
    SystemHookQueries,
    DeliveryLog,
    HookDelivery,
    SystemHookListeners,
  ],
  exports: [HookQueries, HookSecrets, HookFailures, SystemHookQueries, DeliveryLog, HookDelivery],
})
export class HooksModule implements OnModuleInit {
  constructor(
    private readonly projections: ProjectionRegistry,
    private readonly projection: ProjectHookProjection,
    private readonly systemHookProjection: SystemHookProjection,
    private readonly routes: OutboxRoutes,
    private readonly listeners: SystemHookListeners,
  ) {}

  onModuleInit(): void {
    this.projections.register(this.projection);
    this.projections.register(this.systemHookProjection);
    this.routes.register(webhookJobsRoute, hookSecretsRoute, systemHookJobsRoute(this.listeners));
  }
}

/** Webhook delivery (the `webhooks` queue); loaded where the process runs workers. */
@Module({
  imports: [HooksModule, GroupsModule, ProjectsModule, UsersModule, BullModule.registerQueue({ name: WEBHOOKS_QUEUE })],
  providers: [WebhookJobsProcessor, SystemHookFanOut, DeliveryTargets],
})
export class HooksWorkerModule {}

@Module({
  imports: [HooksModule, ProjectsModule, UsersModule],
  providers: [SystemHookTest, ProjectHookTest],
  controllers: [ProjectHooksController, SystemHooksController],
})
export class HooksHttpModule {}
