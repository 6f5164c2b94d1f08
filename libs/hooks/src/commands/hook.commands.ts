import { ACCESS } from '@app/groups';
import { Clock, EventStore, LodeConfig, Unprocessable, type Actor } from '@app/platform';
import { ProjectQueries } from '@app/projects';
import { Command, CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { DeliveryLog } from '../delivery/delivery-log';
import { HookFailures } from '../delivery/hook-failures';
import { blockedUrlMessage, checkHookUrl } from '../delivery/url-guard';
import { checkSigningToken } from '../webhooks/webhook-headers';
import { HookSecrets } from '../secrets/hook-secrets';
import { addHook, projectHookDecider, removeHook, updateHook, type HookSettings } from '../domain/project-hook';

export type HookChange =
  | { kind: 'add'; settings: HookSettings }
  | { kind: 'update'; hookId: number; settings: HookSettings }
  | { kind: 'remove'; hookId: number };

/** Adds, replaces or removes a project hook: maintainers and owners (and administrators) only. Answers the hook id. */
export class ChangeProjectHook extends Command<{ projectId: number; hookId: number }> {
  constructor(
    readonly project: string | number,
    readonly change: HookChange,
    readonly actor: Actor,
  ) {
    super();
  }
}

@CommandHandler(ChangeProjectHook)
export class ChangeProjectHookHandler implements ICommandHandler<ChangeProjectHook> {
  constructor(
    private readonly store: EventStore,
    private readonly clock: Clock,
    private readonly projects: ProjectQueries,
    private readonly config: LodeConfig,
    private readonly secrets: HookSecrets,
    private readonly failures: HookFailures,
    private readonly log: DeliveryLog,
  ) {}

  async execute({ project, change: requested, actor }: ChangeProjectHook) {
    const p = await this.projects.require(project, actor, ACCESS.maintainer);
    if (requested.kind !== 'remove' && requested.settings.signingToken)
      checkSigningToken(requested.settings.signingToken);
    const change: HookChange =
      requested.kind === 'update'
        ? { ...requested, settings: await this.secrets.unmask(requested.hookId, requested.settings) }
        : requested;
    if (change.kind !== 'remove') {
      // The SSRF rules. A name that does not resolve right now is accepted (DNS may be down, or the
      // receiver not set up yet): delivery resolves it again and connects only to an address it checked.
      const verdict = await checkHookUrl(change.settings.url, { allowLocal: this.config.allowLocalWebhooks });
      // GitLab answers only 422 "Invalid url given"; the UrlBlocker's words go beside it as
      // `message` (python-gitlab and gitbeaker show `message` first), so the user learns why.
      if (!verdict.ok && !verdict.unresolved)
        throw new Unprocessable('Invalid url given', `Url ${blockedUrlMessage(verdict)}`);
    }
    const now = this.clock.now();
    const hookId = change.kind === 'add' ? await this.store.nextId('hook_id_seq') : change.hookId;
    await this.store.transact(async (uow) => {
      // A new hook's id was just taken from its sequence: its stream is new (nothing to fold).
      const decide = change.kind === 'add' ? uow.decideNew.bind(uow) : uow.decide.bind(uow);
      await decide(`hook-${hookId}`, projectHookDecider, (s) => {
        if (change.kind === 'add') return addHook(s, hookId, p.id, change.settings, now);
        if (change.kind === 'update') return updateHook(s, p.id, change.settings, now);
        return removeHook(s, p.id, now);
      });
      // The secrets go beside the event, never into it; with the hook they go at once.
      if (change.kind === 'remove') {
        await this.secrets.erase(uow.db, hookId);
        await this.log.erase(uow.db, hookId);
      } else await this.secrets.save(uow.db, hookId, p.id, change.settings);
      // GitLab: editing a hook enables it again (`enable!`), whatever its failures; a removed one keeps no row.
      if (change.kind !== 'add') await this.failures.reset('project', hookId, uow.db);
    });
    return { projectId: p.id, hookId };
  }
}
