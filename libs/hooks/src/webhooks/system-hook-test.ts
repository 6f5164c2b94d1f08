import { Clock, LodeConfig } from '@app/platform';
import { Injectable } from '@nestjs/common';
import { SYSTEM_HOOK_TEST_DATA } from '../domain/system-hook';
import { SystemHookQueries } from '../queries/system-hook.queries';
import { HookSecrets } from '../secrets/hook-secrets';
import { randomUUID } from 'node:crypto';
import { HookFailures } from '../delivery/hook-failures';
import { deliveryHeaders, idempotencyKey, signatureHeaders } from './webhook-headers';
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
    private readonly failures: HookFailures,
    private readonly clock: Clock,
  ) {}

  async run(hookId: number): Promise<typeof SYSTEM_HOOK_TEST_DATA> {
    const hook = await this.hooks.hook(hookId);
    const secret = await this.secrets.readSystem(hook.id);
    // GitLab: testing a hook enables it again.
    await this.failures.reset('system', hook.id);
    const body = JSON.stringify(SYSTEM_HOOK_TEST_DATA);
    // A test is one request, never retried: its own event UUID (and so its own Idempotency-Key and webhook-id).
    const identity = { kind: 'system' as const, hookId: hook.id, event: 'System Hook', eventUuid: randomUUID() };
    await sendWebhook({
      url: secret?.url ?? hook.url,
      token: secret?.token ?? null,
      enableSslVerification: hook.enable_ssl_verification,
      timeoutMs: this.config.webhookTimeoutMs,
      allowLocal: this.config.allowLocalWebhooks,
      body,
      headers: {
        ...deliveryHeaders(this.config, identity),
        // Signed as a delivery is, so a receiver verifying signatures accepts the test too.
        ...(secret?.signingToken
          ? signatureHeaders(
              secret.signingToken,
              idempotencyKey('system', hook.id, identity.eventUuid),
              body,
              this.clock.now(),
            )
          : {}),
      },
    });
    return SYSTEM_HOOK_TEST_DATA;
  }
}
