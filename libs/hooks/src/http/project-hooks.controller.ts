import { ACCESS } from '@app/groups';
import {
  Authenticated,
  BadParameter,
  CurrentActor,
  GitlabParams,
  intParam,
  Page,
  pageParams,
  PaginationDto,
  ToBool,
  type Actor,
} from '@app/platform';
import { ProjectQueries } from '@app/projects';
import { Controller, Delete, Get, HttpCode, Param, Post, Put } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import { IsBoolean, IsDefined, IsOptional, IsString } from 'class-validator';
import { ChangeProjectHook } from '../commands/hook.commands';
import { alertStatus } from '../domain/auto-disabling';
import { HOOK_DEFAULTS, squish, type HookSettings } from '../domain/project-hook';
import { failureState, HookQueries, type DeliveryRow, type HookRow } from '../queries/hook.queries';
import { ProjectHookTest, TEST_TRIGGERS, type TestTrigger } from '../webhooks/project-hook-test';

export class HookDto {
  @IsDefined() @IsString() url: string;
  @IsOptional() @ToBool() @IsBoolean() push_events?: boolean;
  @IsOptional() @ToBool() @IsBoolean() issues_events?: boolean;
  @IsOptional() @ToBool() @IsBoolean() merge_requests_events?: boolean;
  @IsOptional() @ToBool() @IsBoolean() tag_push_events?: boolean;
  @IsOptional() @ToBool() @IsBoolean() note_events?: boolean;
  @IsOptional() @ToBool() @IsBoolean() job_events?: boolean;
  @IsOptional() @ToBool() @IsBoolean() pipeline_events?: boolean;
  /** 10.x's own name (`lib/api/project_hooks.rb`), which python-gitlab and Terraform send. */
  @IsOptional() @ToBool() @IsBoolean() wiki_page_events?: boolean;
  /** The name older docs gave it, still taken for `wiki_page_events`. */
  @IsOptional() @ToBool() @IsBoolean() wiki_events?: boolean;
  @IsOptional() @ToBool() @IsBoolean() enable_ssl_verification?: boolean;
  @IsOptional() @IsString() token?: string;
  /** GitLab 11.3: push events of matching branches only (a name or a `*` wildcard). */
  @IsOptional() @IsString() push_events_branch_filter?: string;
  /**
   * Lode: a Standard Webhooks secret (`whsec_<base64 of 24 to 64 bytes>`) that signs every delivery.
   * Never answered. Left out of a PUT, the hook keeps its own; an empty string removes it.
   */
  @IsOptional() @IsString() signing_token?: string;
}

function settings(p: HookDto): HookSettings {
  const d = HOOK_DEFAULTS.events;
  return {
    url: p.url.trim(),
    token: p.token ? p.token : null,
    enableSslVerification: p.enable_ssl_verification ?? HOOK_DEFAULTS.enableSslVerification,
    events: {
      pushEvents: p.push_events ?? d.pushEvents,
      tagPushEvents: p.tag_push_events ?? d.tagPushEvents,
      issuesEvents: p.issues_events ?? d.issuesEvents,
      mergeRequestsEvents: p.merge_requests_events ?? d.mergeRequestsEvents,
      noteEvents: p.note_events ?? d.noteEvents,
      jobEvents: p.job_events ?? d.jobEvents,
      pipelineEvents: p.pipeline_events ?? d.pipelineEvents,
      wikiPageEvents: p.wiki_page_events ?? p.wiki_events ?? d.wikiPageEvents,
    },
    pushEventsBranchFilter: p.push_events_branch_filter === undefined ? null : squish(p.push_events_branch_filter),
    signingToken: p.signing_token === undefined ? undefined : p.signing_token || null,
  };
}

/**
 * GitLab's ProjectHook entity. The secret `token` and `signing_token` are never returned. `alert_status`
 * and `disabled_until` are later GitLab's (lib/api/entities/hook.rb, 16.x/17.x): whether the hook is
 * disabled for failing.
 */
export const serializeHook = (h: HookRow, now = new Date()) => ({
  id: h.id,
  url: h.url,
  created_at: new Date(h.created_at).toISOString(),
  push_events: h.push_events,
  tag_push_events: h.tag_push_events,
  repository_update_events: false,
  enable_ssl_verification: h.enable_ssl_verification,
  project_id: h.project_id,
  issues_events: h.issues_events,
  merge_requests_events: h.merge_requests_events,
  note_events: h.note_events,
  pipeline_events: h.pipeline_events,
  wiki_page_events: h.wiki_page_events,
  job_events: h.job_events,
  push_events_branch_filter: h.push_events_branch_filter,
  alert_status: alertStatus(failureState(h), now),
  disabled_until: h.disabled_until ? new Date(h.disabled_until).toISOString() : null,
});

/**
 * One entry of the delivery log in later GitLab's shape (17.x lib/api/entities/web_hook_log.rb: `id`,
 * `url`, `trigger` as GitLab's hook scope name, `request_headers` with the token `[REDACTED]`,
 * `request_data`, `response_headers`, `response_body` (its first 8 KB), `execution_duration` in
 * seconds, `response_status`, `created_at`), beside Lode's own fields (`event_uuid`, `attempt`,
 * `error`, `duration_ms`, `skipped`). A delivery skipped while its hook was disabled has
 * `response_status` `skipped`; one that got no answer, null.
 */
const serializeDelivery = (d: DeliveryRow) => ({
  id: Number(d.id),
  url: d.url,
  trigger: d.event === 'Tag Push Hook' ? 'tag_push_hooks' : 'push_hooks',
  request_headers: d.request_headers,
  request_data: d.request_data,
  response_headers: d.response_headers,
  response_body: d.response_body,
  execution_duration: d.duration_ms / 1000,
  response_status: d.skipped ? 'skipped' : d.response_status,
  created_at: new Date(d.created_at).toISOString(),
  event_uuid: d.event_uuid,
  attempt: d.attempt,
  error: d.error,
  duration_ms: d.duration_ms,
  skipped: d.skipped,
});

/** Project hooks: maintainers, owners and administrators only; invisible projects answer 404. */
@Controller('projects/:id/hooks')
@Authenticated()
export class ProjectHooksController {
  constructor(
    private readonly commands: CommandBus,
    private readonly projects: ProjectQueries,
    private readonly hooks: HookQueries,
    private readonly tests: ProjectHookTest,
  ) {}

  @Get()
  async list(@Param('id') id: string, @GitlabParams() q: PaginationDto, @CurrentActor() actor: Actor) {
    const project = await this.projects.require(id, actor, ACCESS.maintainer);
    const page = pageParams(q);
    const { rows, total } = await this.hooks.hooks(project.id, page);
    return new Page(
      rows.map((h) => serializeHook(h)),
      total,
      page,
    );
  }

  @Get(':hook_id')
  async get(
    @Param('id') id: string,
    @Param('hook_id', intParam('hook_id')) hookId: number,
    @CurrentActor() actor: Actor,
  ) {
    const project = await this.projects.require(id, actor, ACCESS.maintainer);
    return serializeHook(await this.hooks.hook(project.id, hookId));
  }

  @Post()
  async add(@Param('id') id: string, @GitlabParams() p: HookDto, @CurrentActor() actor: Actor) {
    const { projectId, hookId } = await this.commands.execute(
      new ChangeProjectHook(id, { kind: 'add', settings: settings(p) }, actor),
    );
    return serializeHook(await this.hooks.hook(projectId, hookId));
  }

  @Put(':hook_id')
  async update(
    @Param('id') id: string,
    @Param('hook_id', intParam('hook_id')) hookId: number,
    @GitlabParams() p: HookDto,
    @CurrentActor() actor: Actor,
  ) {
    const project = await this.projects.require(id, actor, ACCESS.maintainer);
    await this.hooks.hook(project.id, hookId);
    await this.commands.execute(
      new ChangeProjectHook(project.id, { kind: 'update', hookId, settings: settings(p) }, actor),
    );
    return serializeHook(await this.hooks.hook(project.id, hookId));
  }

  /**
   * The hook's delivery log, newest first (a Lode addition): every attempt with its status or error.
   * Maintainers only, like the hooks themselves.
   */
  @Get(':hook_id/events')
  async events(
    @Param('id') id: string,
    @Param('hook_id', intParam('hook_id')) hookId: number,
    @GitlabParams() q: PaginationDto,
    @CurrentActor() actor: Actor,
  ) {
    const project = await this.projects.require(id, actor, ACCESS.maintainer);
    await this.hooks.hook(project.id, hookId);
    const page = pageParams(q);
    const { rows, total } = await this.hooks.deliveries(hookId, page);
    return new Page(rows.map(serializeDelivery), total, page);
  }

  /**
   * GitLab 17.x `POST /projects/:id/hooks/:hook_id/test/:trigger` (lib/api/hooks/test.rb): the
   * trigger's sample sent at once; 201 `{"message":"201 Created"}` when the receiver answered 2xx, 422
   * otherwise; an unknown trigger is Grape's 400 (checked before the hook, as Grape validates first).
   * Lode tests `push_events` and `tag_push_events`, the events it sends.
   */
  @Post(':hook_id/test/:trigger')
  async test(
    @Param('id') id: string,
    @Param('hook_id', intParam('hook_id')) hookId: number,
    @Param('trigger') trigger: string,
    @CurrentActor() actor: Actor,
  ) {
    if (!(TEST_TRIGGERS as readonly string[]).includes(trigger))
      throw new BadParameter('trigger does not have a valid value');
    const project = await this.projects.require(id, actor, ACCESS.maintainer);
    const hook = await this.hooks.hook(project.id, hookId);
    return this.tests.test(hook, trigger as TestTrigger, actor);
  }

  /**
   * GitLab 17.x `POST /projects/:id/hooks/:hook_id/events/:hook_log_id/resend` (lib/api/hooks/
   * resend_hook.rb): the logged delivery sent again with its payload and `Idempotency-Key`; 201
   * `{"response_status": <status>}`, 404 for an entry the hook does not have, 422 without an answer.
   */
  @Post(':hook_id/events/:hook_log_id/resend')
  async resend(
    @Param('id') id: string,
    @Param('hook_id', intParam('hook_id')) hookId: number,
    @Param('hook_log_id') logId: string,
    @CurrentActor() actor: Actor,
  ) {
    const project = await this.projects.require(id, actor, ACCESS.maintainer);
    const hook = await this.hooks.hook(project.id, hookId);
    return this.tests.resend(hook, logId);
  }

  /** GitLab 10.x: 204, and 404 for an unknown hook (its docs call this idempotent; its code does not). */
  @Delete(':hook_id')
  @HttpCode(204)
  async remove(
    @Param('id') id: string,
    @Param('hook_id', intParam('hook_id')) hookId: number,
    @CurrentActor() actor: Actor,
  ): Promise<void> {
    const project = await this.projects.require(id, actor, ACCESS.maintainer);
    await this.hooks.hook(project.id, hookId);
    await this.commands.execute(new ChangeProjectHook(project.id, { kind: 'remove', hookId }, actor));
  }
}
