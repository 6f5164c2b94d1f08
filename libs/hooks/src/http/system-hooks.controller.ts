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
import { Controller, Delete, Get, HttpCode, Param, Post, Put } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import { IsBoolean, IsDefined, IsOptional, IsString } from 'class-validator';
import { ChangeSystemHook } from '../commands/system-hook.commands';
import { SYSTEM_HOOK_DEFAULTS, type SystemHookSettings } from '../domain/system-hook';
import { SystemHookQueries, type SystemHookRow } from '../queries/system-hook.queries';
import { SystemHookTest } from '../webhooks/system-hook-test';

/** The parameters of POST and PUT but the URL (GitLab 16.x/17.x lib/api/system_hooks.rb `hook_parameters`). */
export class SystemHookParams {
  @IsOptional() @IsString() token?: string;
  @IsOptional() @ToBool() @IsBoolean() push_events?: boolean;
  @IsOptional() @ToBool() @IsBoolean() tag_push_events?: boolean;
  @IsOptional() @ToBool() @IsBoolean() merge_requests_events?: boolean;
  @IsOptional() @ToBool() @IsBoolean() repository_update_events?: boolean;
  @IsOptional() @ToBool() @IsBoolean() enable_ssl_verification?: boolean;
  /**
   * Lode, as for project hooks: a Standard Webhooks secret (`whsec_<base64 of 24 to 64 bytes>`) that
   * signs every delivery and test. Never answered. Left out of a PUT, the hook keeps its own; an empty
   * string removes it.
   */
  @IsOptional() @IsString() signing_token?: string;
}

/** `POST /hooks`: `url` required (`use :requires_url`). */
export class SystemHookDto extends SystemHookParams {
  @IsDefined() @IsString() url: string;
}

/** `PUT /hooks/:hook_id` (GitLab 16.x/17.x): every parameter optional (`use :optional_url`). */
export class SystemHookUpdateDto extends SystemHookParams {
  @IsOptional() @IsString() url?: string;
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
    signingToken: p.signing_token === undefined ? undefined : p.signing_token || null,
  };
}

/**
 * A PUT changes what it gives and keeps the rest (GitLab's `update_hook`: `declared_params(include_missing:
 * false)`). The URL kept is the masked one answered; the command puts the stored one back.
 */
function updatedSettings(p: SystemHookUpdateDto, h: SystemHookRow): SystemHookSettings {
  return {
    url: p.url === undefined ? h.url : p.url.trim(),
    token: p.token ? p.token : null,
    enableSslVerification: p.enable_ssl_verification ?? h.enable_ssl_verification,
    events: {
      pushEvents: p.push_events ?? h.push_events,
      tagPushEvents: p.tag_push_events ?? h.tag_push_events,
      mergeRequestsEvents: p.merge_requests_events ?? h.merge_requests_events,
      repositoryUpdateEvents: p.repository_update_events ?? h.repository_update_events,
    },
    signingToken: p.signing_token === undefined ? undefined : p.signing_token || null,
  };
}

/** GitLab's Hook entity. The secret `token` and `signing_token` are never returned. */
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

  /**
   * GitLab 16.x/17.x (lib/api/system_hooks.rb `put ":hook_id"`; 10.x has none): 200 and the hook, `404
   * Not found` for an unknown one. go-gitlab's `EditHook` and gitbeaker's `SystemHooks.edit` call it.
   */
  @Put(':hook_id')
  async update(
    @Param('hook_id', intParam('hook_id')) hookId: number,
    @GitlabParams() p: SystemHookUpdateDto,
    @CurrentActor() actor: Actor,
  ) {
    const current = await this.hooks.hook(hookId);
    await this.commands.execute(
      new ChangeSystemHook(
        { kind: 'update', hookId, settings: updatedSettings(p, current), tokenGiven: p.token !== undefined },
        actor,
      ),
    );
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
