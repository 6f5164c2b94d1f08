import {
  Authenticated,
  BadParameter,
  CurrentActor,
  GitlabParams,
  LodeConfig,
  NotFound,
  Page,
  PaginationDto,
  pageParams,
  type Actor,
} from '@app/platform';
import { UserQueries } from '@app/users';
import { Controller, Get, Param } from '@nestjs/common';
import { IsIn, IsOptional, IsString } from 'class-validator';
import { ProjectQueries } from '../projects/project.queries';
import { EVENT_ACTIONS, EVENT_TARGET_TYPES, type EventAction, type EventTargetType } from './activity';
import { ActivityQueries, type ActivityFilters, type ActivitySource } from './activity.queries';
import { serializeActivity } from './activity.serializer';

/** GitLab 10.x's `event_filter_params` and `sort_params` (lib/api/events.rb). */
export class ListEventsDto extends PaginationDto {
  @IsOptional() @IsIn(EVENT_ACTIONS) action?: EventAction;
  @IsOptional() @IsIn(Object.keys(EVENT_TARGET_TYPES)) target_type?: EventTargetType;
  @IsOptional() @IsString() before?: string;
  @IsOptional() @IsString() after?: string;
  @IsOptional() @IsIn(['asc', 'desc']) sort?: 'asc' | 'desc';
}

/**
 * Grape's `type: Date`, for the dates clients send (`2016-12-31`, also `2016-12-1` as GitLab's own
 * spec does): a calendar day, else 400 `<name> is invalid`.
 */
function dayParam(value: string | undefined, name: string): string | undefined {
  if (value === undefined) return undefined;
  const m = /^(\d{4})-(\d{1,2})-(\d{1,2})$/.exec(value.trim());
  const day = m && new Date(Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3])));
  if (!m || !day || day.getUTCMonth() !== Number(m[2]) - 1 || day.getUTCDate() !== Number(m[3]))
    throw new BadParameter(`${name} is invalid`);
  return day.toISOString().slice(0, 10);
}

/**
 * The Events API as GitLab 10.x has it (lib/api/events.rb and spec/requests/api/events_spec.rb at
 * 10.x): the caller's own events, a user's, a project's, with the same filters and GitLab's pages.
 * Only the `api` scope reaches them: 10.x's Events API does not `allow_access_with_scope :read_user`
 * (11.x added it).
 */
@Controller()
export class EventsController {
  constructor(
    private readonly activity: ActivityQueries,
    private readonly projects: ProjectQueries,
    private readonly users: UserQueries,
    private readonly config: LodeConfig,
  ) {}

  /** The caller's events (401 without a token), in the projects the caller can see. */
  @Get('events')
  @Authenticated()
  async mine(@GitlabParams() q: ListEventsDto, @CurrentActor() actor: Actor) {
    return this.page({ authorId: actor.id }, q, actor);
  }

  /**
   * A user's events (`:id` an id or a username; 404 `User Not Found`), in the projects the caller can
   * see. GitLab 10.x skipped that check for an anonymous caller; Lode shows an anonymous caller the
   * events of public projects only, so a private project's activity never leaks.
   */
  @Get('users/:id/events')
  async user(@Param('id') id: string, @GitlabParams() q: ListEventsDto, @CurrentActor() actor?: Actor) {
    const user = await this.users.findByIdOrUsername(id);
    if (!user) throw new NotFound('User');
    return this.page({ authorId: user.id }, q, actor);
  }

  /** A project's events (404 `Project Not Found` when the caller cannot see the project). */
  @Get('projects/:id/events')
  async project(@Param('id') id: string, @GitlabParams() q: ListEventsDto, @CurrentActor() actor?: Actor) {
    const row = await this.projects.getVisible(id, actor);
    return this.page({ projectId: row.id }, q, actor);
  }

  private async page(source: ActivitySource, q: ListEventsDto, actor: Actor | undefined) {
    const filters: ActivityFilters = {
      action: q.action,
      targetType: q.target_type ? EVENT_TARGET_TYPES[q.target_type] : undefined,
      before: dayParam(q.before, 'before'),
      after: dayParam(q.after, 'after'),
      sort: q.sort ?? 'desc',
    };
    const page = pageParams(q);
    const { rows, total } = await this.activity.list(source, actor, filters, page);
    const urls = { externalUrl: this.config.externalUrl, gravatar: this.config.gravatar };
    return new Page(
      rows.map((r) => serializeActivity(r, urls)),
      total,
      page,
    );
  }
}
