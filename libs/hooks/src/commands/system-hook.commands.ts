import { Clock, EventStore, Forbidden, Invalid, LodeConfig, type Actor } from '@app/platform';
import { Command, CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { blockedUrlMessage, checkHookUrl } from '../delivery/url-guard';
import { HookFailures } from '../delivery/hook-failures';
import { SystemHookQueries } from '../queries/system-hook.queries';
import { HookSecrets } from '../secrets/hook-secrets';
import { checkSigningToken } from '../webhooks/webhook-headers';
import {
  addSystemHook,
  removeSystemHook,
  systemHookDecider,
  systemHookStream,
  updateSystemHook,
  type SystemHookSettings,
} from '../domain/system-hook';

export type SystemHookChange =
  | { kind: 'add'; settings: SystemHookSettings }
  /** `tokenGiven`: false when the PUT left `token` out (the hook keeps its own unless its URL changes). */
  | { kind: 'update'; hookId: number; settings: SystemHookSettings; tokenGiven: boolean }
  | { kind: 'remove'; hookId: number };

/** Adds, changes or removes a system hook: administrators only. Answers the hook id. */
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
    private readonly failures: HookFailures,
    private readonly hooks: SystemHookQueries,
  ) {}

  async execute({ change: requested, actor }: ChangeSystemHook): Promise<number> {
    if (!actor.isAdmin) throw new Forbidden();
    if (requested.kind !== 'remove' && requested.settings.signingToken)
      checkSigningToken(requested.settings.signingToken);
    const change = requested.kind === 'update' ? await this.withStoredSecrets(requested) : requested;
    if (change.kind !== 'remove') {
      // The SSRF rules of project hooks; a name that does not resolve now is checked again at delivery.
      const verdict = await checkHookUrl(change.settings.url, { allowLocal: this.config.allowLocalWebhooks });
      if (!verdict.ok && !verdict.unresolved) throw new Invalid({ url: [blockedUrlMessage(verdict)] });
    }
    const now = this.clock.now();
    const hookId = change.kind === 'add' ? await this.store.nextId('hook_id_seq') : change.hookId;
    await this.store.transact(async (uow) => {
      await uow.decide(systemHookStream(hookId), systemHookDecider, (s) => {
        if (change.kind === 'add') return addSystemHook(s, hookId, change.settings, now);
        if (change.kind === 'update') return updateSystemHook(s, change.settings, now);
        return removeSystemHook(s, now);
      });
      if (change.kind === 'remove') await this.secrets.eraseSystem(uow.db, hookId);
      else await this.secrets.saveSystem(uow.db, hookId, change.settings);
      // A removed hook keeps no failure row (system hooks are not disabled for failing today, but a
      // row of a removed hook would stay forever); an edit starts afresh, as GitLab's `enable!`.
      if (change.kind !== 'add') await this.failures.reset('system', hookId, uow.db);
    });
    return hookId;
  }

  /**
   * The masked URL a client sends back stands for the stored one; a PUT without `token` keeps the
   * hook's, unless it changes the URL: GitLab's WebHook `reset_token` (a token is not sent to a new
   * receiver it was not given for).
   */
  private async withStoredSecrets(
    change: Extract<SystemHookChange, { kind: 'update' }>,
  ): Promise<Extract<SystemHookChange, { kind: 'update' }>> {
    const settings = await this.secrets.unmaskSystem(change.hookId, change.settings);
    if (change.tokenGiven) return { ...change, settings };
    const stored = await this.secrets.readSystem(change.hookId);
    const current = await this.currentUrl(change.hookId, stored?.url ?? null);
    const token = settings.url === current ? (stored?.token ?? null) : null;
    return { ...change, settings: { ...settings, token } };
  }

  private async currentUrl(hookId: number, storedUrl: string | null): Promise<string> {
    return storedUrl ?? (await this.hooks.hook(hookId)).url;
  }
}
