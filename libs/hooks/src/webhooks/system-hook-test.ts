import { LodeConfig } from '@app/platform';
import { Injectable } from '@nestjs/common';
import { SYSTEM_HOOK_TEST_DATA } from '../domain/system-hook';
import { SystemHookQueries } from '../queries/system-hook.queries';
import { HookSecrets } from '../secrets/hook-secrets';
import { sendWebhook } from './webhook-sender';

/**
 * `POST /hooks/:id`: GitLab sends its sample `project_create` data to the hook at once (not through
 * the queue) and answers that data whatever the receiver said. Nothing is recorded: a test is no event.
 */
@Injectable()
export class SystemHookTest {
  constructor(
    private readonly hooks: SystemHookQueries,
    private readonly secrets: HookSecrets,
    private readonly config: LodeConfig,
  ) {}

  async run(hookId: number): Promise<typeof SYSTEM_HOOK_TEST_DATA> {
    const hook = await this.hooks.hook(hookId);
    const secret = await this.secrets.readSystem(hook.id);
    await sendWebhook({
      url: secret?.url ?? hook.url,
      token: secret?.token ?? null,
      enableSslVerification: hook.enable_ssl_verification,
      timeoutMs: this.config.webhookTimeoutMs,
      allowLocal: this.config.allowLocalWebhooks,
      body: JSON.stringify(SYSTEM_HOOK_TEST_DATA),
      headers: {
        'Content-Type': 'application/json',
        'User-Agent': `GitLab/${this.config.gitlabVersion}`,
        'X-Gitlab-Event': 'System Hook',
      },
    });
    return SYSTEM_HOOK_TEST_DATA;
  }
}
