import { Authenticated, Clock, CurrentActor, GitlabParams, NotFound, type Actor } from '@app/platform';
import { Controller, Get, Param, Patch, Put } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import { IsIn, IsOptional, IsString } from 'class-validator';
import { SetUserStatus } from '../commands/set-user-status.command';
import { CLEAR_STATUS_AFTER, type ClearStatusAfter } from '../domain/user-status';
import type { UserStatusRecord } from '../projections/credential.record';
import { UserQueries } from '../queries/user.queries';
import { ReadUserScope } from './private-token.guard';

export class UserStatusDto {
  @IsOptional() @IsString() emoji?: string | null;
  @IsOptional() @IsString() message?: string | null;
  @IsOptional() @IsString() availability?: string | null;
  @IsOptional() @IsIn(Object.keys(CLEAR_STATUS_AFTER)) clear_status_after?: ClearStatusAfter | null;
}

const escapeHtml = (s: string) =>
  s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

/**
 * GitLab's UserStatus entity. `message_html` is the message as HTML; GitLab also turns `:name:` into
 * its emoji there, Lode leaves the name as written. No status: every field null (GitLab presents `{}`).
 */
function serializeStatus(s: UserStatusRecord | undefined) {
  return {
    emoji: s?.emoji ?? null,
    message: s?.message ?? null,
    availability: s?.availability ?? null,
    message_html: s?.message == null ? null : `<p>${escapeHtml(s.message)}</p>`,
    clear_status_at: s?.clearStatusAt?.toISOString() ?? null,
  };
}

/** A user's status: their own to read and set (`/user/status`), anyone's to read (`/users/:id/status`). */
@Controller()
@ReadUserScope()
export class UserStatusController {
  constructor(
    private readonly commands: CommandBus,
    private readonly users: UserQueries,
    private readonly clock: Clock,
  ) {}

  @Get('user/status')
  @Authenticated()
  async own(@CurrentActor() actor: Actor) {
    return serializeStatus(await this.users.status(actor.id, this.clock.now()));
  }

  /** Every parameter counts, a missing one as nothing (GitLab's `include_missing: true`): a PUT replaces the status. */
  @Put('user/status')
  @Authenticated()
  async set(@CurrentActor() actor: Actor, @GitlabParams() p: UserStatusDto) {
    await this.commands.execute(
      new SetUserStatus(actor.id, {
        emoji: p.emoji,
        message: p.message,
        availability: p.availability,
        clearStatusAfter: p.clear_status_after,
      }),
    );
    return serializeStatus(await this.users.status(actor.id, this.clock.now()));
  }

  /**
   * GitLab 15.x's PATCH: only what is sent changes. With nothing sent, nothing changes (GitLab answers
   * 200 with an empty body; Lode answers the status as it stands).
   */
  @Patch('user/status')
  @Authenticated()
  async patch(@CurrentActor() actor: Actor, @GitlabParams() p: UserStatusDto) {
    const current = await this.users.status(actor.id, this.clock.now());
    const sent = [p.emoji, p.message, p.availability, p.clear_status_after].some((v) => v !== undefined);
    if (sent)
      await this.commands.execute(
        new SetUserStatus(actor.id, {
          emoji: p.emoji !== undefined ? p.emoji : current?.emoji,
          message: p.message !== undefined ? p.message : current?.message,
          availability: p.availability !== undefined ? p.availability : current?.availability,
          clearStatusAfter: p.clear_status_after,
        }),
      );
    return serializeStatus(await this.users.status(actor.id, this.clock.now()));
  }

  /** By id or username; anyone who may see the user, anonymous callers too. */
  @Get('users/:id/status')
  async of(@Param('id') idOrUsername: string) {
    const user = await this.users.findByIdOrUsername(idOrUsername);
    if (!user) throw new NotFound('User');
    return serializeStatus(await this.users.status(user.id, this.clock.now()));
  }
}
