import { Clock, LodeConfig, Metrics, redactSecrets } from '@app/platform';
import { Injectable } from '@nestjs/common';
import { DeliveryLog } from '../delivery/delivery-log';
import { HookFailures } from '../delivery/hook-failures';
import { alertStatus, autoDisables, NEVER_FAILED, type FailureState, type HookKind } from '../domain/auto-disabling';
import { withoutCredentials } from '../domain/hook-url';
import type { HookTarget } from '../queries/hook.queries';
import { HookSecrets, type HookSecret } from '../secrets/hook-secrets';
import { deliveryHeaders, idempotencyKey, signatureHeaders } from './webhook-headers';
import { deliveryReason, delivered, sendWebhook, type WebhookOutcome } from './webhook-sender';

/** One request to a hook: what the worker's deliveries, the API's test and resend all send. */
export interface HookRequest {
  kind: HookKind;
  hook: Pick<HookTarget, 'id' | 'url' | 'enable_ssl_verification'>;
  event: string;
  /** `X-Gitlab-Event-UUID`; the `Idempotency-Key` is derived from it (the same on a resend). */
  eventUuid: string;
  payload: unknown;
  attempt: number;
  /** GitLab's `force` (test, resend, `lode jobs retry`): sent even while the hook is disabled. */
  force: boolean;
  /** A test: the hook is enabled again before it is sent to, whatever the answer (like a system hook's test). */
  reenable?: boolean;
  /** The hook's secrets and failure state, when the caller read them with the hook (DeliveryTargets). */
  known?: { secret: HookSecret | undefined; failures: FailureState };
}

/** GitLab 17.x WebHookLog: the secret token is never shown, `[REDACTED]` in its place. */
export const REDACTED = '[REDACTED]';

/**
 * Sends one request to a hook, counts it towards auto-disabling (project hooks), and writes it in the
 * project hook's delivery log (system hooks' deliveries are not logged: no API shows them). A hook
 * disabled for failing is not sent to unless forced; that skip is logged (`response_status` `skipped`).
 */
@Injectable()
export class HookDelivery {
  constructor(
    private readonly config: LodeConfig,
    private readonly secrets: HookSecrets,
    private readonly failures: HookFailures,
    private readonly clock: Clock,
    private readonly metrics: Metrics,
    private readonly log: DeliveryLog,
  ) {}

  /** The outcome, or `skipped` when the hook is disabled and the request not forced. */
  async send(r: HookRequest): Promise<WebhookOutcome | 'skipped'> {
    const { kind, hook } = r;
    const secret = r.known
      ? r.known.secret
      : kind === 'system'
        ? await this.secrets.readSystem(hook.id)
        : await this.secrets.read(hook.id);
    const url = secret?.url ?? hook.url;
    const loggedUrl = redactSecrets(withoutCredentials(url));
    const logged = kind === 'project';
    const accounted = autoDisables(kind);
    const failures = accounted ? (r.known?.failures ?? (await this.failures.state(kind, hook.id))) : NEVER_FAILED;
    const status = alertStatus(failures, this.clock.now());
    if (status !== 'executable' && !r.force) {
      // GitLab's `executable?`: a disabled hook is not sent to. The skip is logged, and the delivery
      // ends here (no retry): the event is missed, as GitLab misses it.
      if (logged)
        await this.log.record({
          hookId: hook.id,
          eventUuid: r.eventUuid,
          event: r.event,
          url: loggedUrl,
          attempt: r.attempt,
          requestHeaders: {},
          requestData: r.payload,
          responseHeaders: {},
          responseBody: '',
          responseStatus: null,
          error: `skipped: the hook is ${status === 'disabled' ? 'disabled' : 'temporarily disabled'} after failing`,
          durationMs: 0,
          skipped: true,
        });
      return 'skipped';
    }
    if (accounted && r.reenable) await this.failures.reset(kind, hook.id);
    const body = JSON.stringify(r.payload);
    const headers = {
      ...deliveryHeaders(this.config, { kind, hookId: hook.id, event: r.event, eventUuid: r.eventUuid }),
      ...(secret?.signingToken
        ? signatureHeaders(secret.signingToken, idempotencyKey(kind, hook.id, r.eventUuid), body, this.clock.now())
        : {}),
    };
    const outcome = await sendWebhook({
      url,
      token: secret?.token ?? null,
      enableSslVerification: hook.enable_ssl_verification,
      timeoutMs: this.config.webhookTimeoutMs,
      allowLocal: this.config.allowLocalWebhooks,
      body,
      headers,
    });
    // Every request counts, a retry too (GitLab 17.x WebHooks::LogExecutionService: `enable!` after an
    // answer GitLab files as ok, `backoff!` after any other). GitLab files a redirect as ok
    // (WebHookService#response_category), so a 3xx does not count towards disabling, though Lode
    // retries it as it always has.
    const answered = outcome.status !== null && outcome.status >= 200 && outcome.status < 400;
    // A hook that had no failure when this request began has none to forget (no statement per
    // delivery for healthy hooks); a failure counted meanwhile by a concurrent attempt stays counted,
    // as if it had come after this one.
    const failing = failures.recentFailures > 0 || failures.disabledUntil !== null;
    if (accounted && answered && (failing || r.known === undefined)) await this.failures.reset(kind, hook.id);
    else if (accounted && !answered) await this.failures.failed(kind, hook.id);
    this.metrics.delivery(
      delivered(outcome)
        ? 'delivered'
        : outcome.status !== null
          ? 'http_error'
          : outcome.failure === 'connection' || !outcome.failure
            ? 'connection_failed'
            : outcome.failure,
    );
    if (logged)
      await this.log.record({
        hookId: hook.id,
        eventUuid: r.eventUuid,
        event: r.event,
        url: loggedUrl,
        attempt: r.attempt,
        // As sent, but the secret token (GitLab 17.x WebHookService#log_execution shows `[REDACTED]`)
        // and the basic auth of the URL's user info (not shown: `url` has no credentials either). The
        // Standard Webhooks signature stays: an HMAC of this body, no secret in itself.
        requestHeaders: { ...headers, ...(secret?.token ? { 'X-Gitlab-Token': REDACTED } : {}) },
        requestData: r.payload,
        responseHeaders: outcome.responseHeaders ?? {},
        responseBody: outcome.responseBody ?? '',
        responseStatus: outcome.status,
        error: deliveryReason(outcome),
        durationMs: outcome.durationMs,
        skipped: false,
      });
    return outcome;
  }
}
