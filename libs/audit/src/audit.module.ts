import { GroupsModule } from '@app/groups';
import { ProjectionRegistry } from '@app/platform';
import { ProjectsModule } from '@app/projects';
import { Module, OnModuleInit } from '@nestjs/common';
import { AuditEventProjection } from './audit-event.projection';
import { AuditEventQueries } from './audit-event.queries';
import {
  GroupAuditEventsController,
  InstanceAuditEventsController,
  ProjectAuditEventsController,
} from './audit-events.controller';

/** The audit log: its projection of every context's writes, and its reads. */
@Module({
  providers: [AuditEventProjection, AuditEventQueries],
  exports: [AuditEventQueries],
})
export class AuditModule implements OnModuleInit {
  constructor(
    private readonly projections: ProjectionRegistry,
    private readonly projection: AuditEventProjection,
  ) {}

  onModuleInit(): void {
    this.projections.register(this.projection);
  }
}

/** `/audit_events`, `/groups/:id/audit_events`, `/projects/:id/audit_events`. */
@Module({
  imports: [AuditModule, GroupsModule, ProjectsModule],
  controllers: [InstanceAuditEventsController, GroupAuditEventsController, ProjectAuditEventsController],
})
export class AuditHttpModule {}
