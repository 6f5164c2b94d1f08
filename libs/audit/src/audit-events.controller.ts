import { ACCESS, NamespaceAccess } from '@app/groups';
import {
  AdminOnly,
  Authenticated,
  BadParameter,
  CurrentActor,
  GitlabParams,
  Page,
  pageParams,
  PaginationDto,
  ToInt,
  type Actor,
} from '@app/platform';
import { ProjectQueries } from '@app/projects';
import { Controller, Get, Param } from '@nestjs/common';
import { IsIn, IsInt, IsOptional, IsString } from 'class-validator';
import { AUDIT_ENTITY_TYPES, type AuditEntityType } from './audit-log';
import { AuditEventQueries, type AuditEventRow } from './audit-event.queries';

/*
 * GitLab's audit events API (doc/api/audit_events.md and ee/lib/api/audit_events.rb,
 * ee/lib/api/groups.rb's and projects.rb's `audit_events` routes, 13.x): the instance's for
 * administrators, a group's for its owners, a project's for its maintainers. A group's list holds
 * the group's own entries (not its projects'), as GitLab's `AuditEventsFinder` with the group as entity.
 */

export class AuditEventsDto extends PaginationDto {
  @IsOptional() @IsString() created_after?: string;
  @IsOptional() @IsString() created_before?: string;
}

export class InstanceAuditEventsDto extends AuditEventsDto {
  @IsOptional() @IsIn(AUDIT_ENTITY_TYPES as AuditEntityType[]) entity_type?: AuditEntityType;
  @IsOptional() @ToInt() @IsInt() entity_id?: number;
}

/** GitLab's AuditEvent entity. */
export const serializeAuditEvent = (r: AuditEventRow) => ({
  id: Number(r.id),
  author_id: r.author_id,
  entity_id: r.entity_id,
  entity_type: r.entity_type,
  details: r.details,
  created_at: new Date(r.created_at).toISOString(),
});

/** Grape's `type: DateTime`: ISO 8601; anything else is `<name> is invalid`. */
function dateTime(value: string | undefined, name: string): Date | undefined {
  if (value === undefined || value === '') return undefined;
  const ok = /^\d{4}-\d{2}-\d{2}([T ][\d:.]+(Z|[+-]\d{2}:?\d{2})?)?$/.test(value.trim());
  const d = ok ? new Date(value.trim()) : undefined;
  if (!d || Number.isNaN(d.getTime())) throw new BadParameter(`${name} is invalid`);
  return d;
}

const range = (q: AuditEventsDto) => ({
  createdAfter: dateTime(q.created_after, 'created_after'),
  createdBefore: dateTime(q.created_before, 'created_before'),
});

/** `GET /audit_events`: administrators (anyone else 403). */
@Controller('audit_events')
@AdminOnly()
export class InstanceAuditEventsController {
  constructor(private readonly audit: AuditEventQueries) {}

  @Get()
  async list(@GitlabParams() q: InstanceAuditEventsDto) {
    const page = pageParams(q);
    const { rows, total, hasNext } = await this.audit.list(
      { ...range(q), entityType: q.entity_type, entityId: q.entity_id },
      page,
    );
    return new Page(rows.map(serializeAuditEvent), total, page, hasNext);
  }

  @Get(':audit_event_id')
  async get(@Param('audit_event_id') id: string) {
    return serializeAuditEvent(await this.audit.get(id));
  }
}

/** `GET /groups/:id/audit_events`: the group's owners and administrators; 404 when the group is invisible. */
@Controller('groups/:id/audit_events')
@Authenticated()
export class GroupAuditEventsController {
  constructor(
    private readonly audit: AuditEventQueries,
    private readonly groups: NamespaceAccess,
  ) {}

  @Get()
  async list(@Param('id') id: string, @GitlabParams() q: AuditEventsDto, @CurrentActor() actor: Actor) {
    const group = await this.groups.requireGroup(id, actor, ACCESS.owner);
    const page = pageParams(q);
    const { rows, total, hasNext } = await this.audit.list(
      { ...range(q), entityType: 'Group', entityId: group.id },
      page,
    );
    return new Page(rows.map(serializeAuditEvent), total, page, hasNext);
  }

  @Get(':audit_event_id')
  async get(@Param('id') id: string, @Param('audit_event_id') eventId: string, @CurrentActor() actor: Actor) {
    const group = await this.groups.requireGroup(id, actor, ACCESS.owner);
    return serializeAuditEvent(await this.audit.get(eventId, { type: 'Group', id: group.id }));
  }
}

/** `GET /projects/:id/audit_events`: the project's maintainers, owners and administrators; 404 when invisible. */
@Controller('projects/:id/audit_events')
@Authenticated()
export class ProjectAuditEventsController {
  constructor(
    private readonly audit: AuditEventQueries,
    private readonly projects: ProjectQueries,
  ) {}

  @Get()
  async list(@Param('id') id: string, @GitlabParams() q: AuditEventsDto, @CurrentActor() actor: Actor) {
    const project = await this.projects.require(id, actor, ACCESS.maintainer);
    const page = pageParams(q);
    const { rows, total, hasNext } = await this.audit.list(
      { ...range(q), entityType: 'Project', entityId: project.id },
      page,
    );
    return new Page(rows.map(serializeAuditEvent), total, page, hasNext);
  }

  @Get(':audit_event_id')
  async get(@Param('id') id: string, @Param('audit_event_id') eventId: string, @CurrentActor() actor: Actor) {
    const project = await this.projects.require(id, actor, ACCESS.maintainer);
    return serializeAuditEvent(await this.audit.get(eventId, { type: 'Project', id: project.id }));
  }
}
