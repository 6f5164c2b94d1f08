import {
  AdminOnly,
  CurrentActor,
  GitlabParams,
  intParam,
  NotFound,
  Page,
  pageParams,
  PaginationDto,
  ToBool,
  type Actor,
} from '@app/platform';
import { Controller, Delete, Get, HttpCode, Param, Post } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import { IsBoolean, IsDefined, IsOptional, IsString } from 'class-validator';
import { ChangeSystemHook } from '../commands/system-hook.commands';
import { SYSTEM_HOOK_DEFAULTS, type SystemHookSettings } from '../domain/system-hook';
import { SystemHookQueries, type SystemHookRow } from '../queries/system-hook.queries';
import { SystemHookTest } from '../webhooks/system-hook-test';

export class SystemHookDto {
  @IsDefined() @IsString() url: string;
  @IsOptional() @IsString() token?: string;
  @IsOptional() @ToBool() @IsBoolean() push_events?: boolean;
  @IsOptional() @ToBool() @IsBoolean() tag_push_events?: boolean;
  @IsOptional() @ToBool() @IsBoolean() merge_requests_events?: boolean;
  @IsOptional() @ToBool() @IsBoolean() repository_update_events?: boolean;
  @IsOptional() @ToBool() @IsBoolean() enable_ssl_verification?: boolean;
}

function settings(p: SystemHookDto): SystemHookSettings {
  const d = SYSTEM_HOOK_DEFAULTS;
  return {
    url: p.url.trim(),
    token: p.token ? p.token : null,
    enableSslVerification: p.enable_ssl_verification ?? d.enableSslVerification,
    events: {
      pushEvents: p.push_events ?? d.events.pushEvents,
      tagPushEvents: p.tag_push_events ?? d.events.tagPushEvents,
      mergeRequestsEvents: p.merge_requests_events ?? d.events.mergeRequestsEvents,
      repositoryUpdateEvents: p.repository_update_events ?? d.events.repositoryUpdateEvents,
    },
  };
}

/** GitLab's Hook entity. The secret `token` is never returned. */
export const serializeSystemHook = (h: SystemHookRow) => ({
  id: h.id,
  url: h.url,
  created_at: new Date(h.created_at).toISOString(),
  push_events: h.push_events,
  tag_push_events: h.tag_push_events,
  merge_requests_events: h.merge_requests_events,
  repository_update_events: h.repository_update_events,
  enable_ssl_verification: h.enable_ssl_verification,
});

/**
 * System hooks, administrators only. `GET /hooks/:id` answers the hook and `POST /hooks/:id` tests it,
 * as GitLab 14.9 and later (and today's clients: go-gitlab's `GetHook`, gitbeaker's `SystemHooks.show`)
 * do; GitLab 10.x tested the hook on `GET /hooks/:id`, a read with a side effect no current client uses.
 * The hooks are kept and tested; which system events they hear is not delivered yet.
 */
@Controller('hooks')
@AdminOnly()
export class SystemHooksController {
  constructor(
    private readonly commands: CommandBus,
    private readonly hooks: SystemHookQueries,
    private readonly tester: SystemHookTest,
  ) {}

  @Get()
  async list(@GitlabParams() q: PaginationDto) {
    const page = pageParams(q);
    const { rows, total } = await this.hooks.hooks(page);
    return new Page(rows.map(serializeSystemHook), total, page);
  }

  @Post()
  async add(@GitlabParams() p: SystemHookDto, @CurrentActor() actor: Actor) {
    const hookId = await this.commands.execute(new ChangeSystemHook({ kind: 'add', settings: settings(p) }, actor));
    return serializeSystemHook(await this.hooks.hook(hookId));
  }

  @Get(':hook_id')
  async get(@Param('hook_id', intParam('hook_id')) hookId: number) {
    return serializeSystemHook(await this.hooks.hook(hookId));
  }

  /** Sends GitLab's sample data to the hook and answers it (201, Grape's POST status). */
  @Post(':hook_id')
  async test(@Param('hook_id', intParam('hook_id')) hookId: number) {
    return this.tester.run(hookId);
  }

  /** GitLab 10.x: 204, and `404 System hook Not Found` for an unknown one. */
  @Delete(':hook_id')
  @HttpCode(204)
  async remove(@Param('hook_id', intParam('hook_id')) hookId: number, @CurrentActor() actor: Actor): Promise<void> {
    await this.hooks.hook(hookId).catch(() => {
      throw new NotFound('System hook');
    });
    await this.commands.execute(new ChangeSystemHook({ kind: 'remove', hookId }, actor));
  }
}
