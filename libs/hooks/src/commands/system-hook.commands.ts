import { Clock, EventStore, Forbidden, Invalid, LodeConfig, type Actor } from '@app/platform';
import { Command, CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { blockedUrlMessage, checkHookUrl } from '../delivery/url-guard';
import { HookSecrets } from '../secrets/hook-secrets';
import {
  addSystemHook,
  removeSystemHook,
  systemHookDecider,
  systemHookStream,
  type SystemHookSettings,
} from '../domain/system-hook';

export type SystemHookChange = { kind: 'add'; settings: SystemHookSettings } | { kind: 'remove'; hookId: number };

/** Adds or removes a system hook: administrators only. Answers the hook id. */
export class ChangeSystemHook extends Command<number> {
  constructor(
    readonly change: SystemHookChange,
    readonly actor: Actor,
  ) {
    super();
  }
}

@CommandHandler(ChangeSystemHook)
export class ChangeSystemHookHandler implements ICommandHandler<ChangeSystemHook> {
  constructor(
    private readonly store: EventStore,
    private readonly clock: Clock,
    private readonly config: LodeConfig,
    private readonly secrets: HookSecrets,
  ) {}

  async execute({ change, actor }: ChangeSystemHook): Promise<number> {
    if (!actor.isAdmin) throw new Forbidden();
    if (change.kind === 'add') {
      // The SSRF rules of project hooks; a name that does not resolve now is checked again at delivery.
      const verdict = await checkHookUrl(change.settings.url, { allowLocal: this.config.allowLocalWebhooks });
      if (!verdict.ok && !verdict.unresolved) throw new Invalid({ url: [blockedUrlMessage(verdict)] });
    }
    const now = this.clock.now();
    const hookId = change.kind === 'add' ? await this.store.nextId('hook_id_seq') : change.hookId;
    await this.store.transact(async (uow) => {
      await uow.decide(systemHookStream(hookId), systemHookDecider, (s) =>
        change.kind === 'add' ? addSystemHook(s, hookId, change.settings, now) : removeSystemHook(s, now),
      );
      if (change.kind === 'add') await this.secrets.saveSystem(uow.db, hookId, change.settings);
      else await this.secrets.eraseSystem(uow.db, hookId);
    });
    return hookId;
  }
}
