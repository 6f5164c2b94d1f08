import { BadParameter, type LodeConfig } from '@app/platform';
import { createHash, createHmac } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { HookKind } from '../domain/auto-disabling';

/*
 * What every delivery carries besides its body, for project and system hooks alike (keyed by hook
 * kind and id). The header names and meanings are GitLab 17.x's (doc/user/project/integrations/
 * webhooks.md, "Delivery headers"; lib/gitlab/web_hooks.rb; app/services/web_hook_service.rb):
 * `X-Gitlab-Event`, `X-Gitlab-Event-UUID`, `X-Gitlab-Webhook-UUID`, `X-Gitlab-Instance`,
 * `Idempotency-Key` (17.4) and `User-Agent`; `X-Gitlab-Token` is added by `sendWebhook`.
 */

let packageVersion: string | undefined;
/** Lode's version, from the package.json named `lode` above the working directory (read once). */
export function lodeVersion(from = process.cwd()): string {
  if (packageVersion) return packageVersion;
  for (let dir = from; ; dir = dirname(dir)) {
    const file = join(dir, 'package.json');
    if (existsSync(file)) {
      try {
        const pkg = JSON.parse(readFileSync(file, 'utf8')) as { name?: string; version?: string };
        if (pkg.name === 'lode') return (packageVersion = pkg.version ?? 'unknown');
      } catch {
        // not ours: keep looking upwards
      }
    }
    if (dirname(dir) === dir) return (packageVersion = 'unknown');
  }
}

/**
 * GitLab sends `User-Agent: GitLab/<version>`, and some receivers check that prefix: it is kept, with
 * the GitLab version Lode reports (LODE_GITLAB_VERSION), and Lode names itself after it.
 */
export const webhookUserAgent = (config: LodeConfig) => `GitLab/${config.gitlabVersion} Lode/${lodeVersion()}`;

/** A UUID (version 8, "custom") derived from `name`: the same name always gives the same UUID. */
function derivedUuid(name: string): string {
  const b = createHash('sha256').update(name).digest().subarray(0, 16);
  b[6] = (b[6] & 0x0f) | 0x80;
  b[8] = (b[8] & 0x3f) | 0x80;
  const h = b.toString('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

/**
 * `X-Gitlab-Webhook-UUID`: names the hook, the same on every delivery it makes, different for every
 * hook of every installation (derived from the external URL, the kind and the id, so nothing is stored).
 * GitLab's docs say "unique ID per webhook"; its code (17.x app/services/web_hook_service.rb) sends a
 * random UUID per request. Lode does what the docs say: a receiver can tell hooks apart with it.
 */
export const webhookUuid = (config: LodeConfig, kind: HookKind, hookId: number) =>
  derivedUuid(`lode-hook|${config.externalUrl}|${kind}|${hookId}`);

/**
 * `Idempotency-Key` (GitLab 17.4: "remains consistent across webhook retries"): derived from what a
 * delivery job carries (its event UUID and the hook), so every BullMQ retry of one delivery sends the
 * same key, and two deliveries never do. Standard Webhooks' `webhook-id` is the same value.
 */
export const idempotencyKey = (kind: HookKind, hookId: number, eventUuid: string) =>
  derivedUuid(`lode-delivery|${kind}|${hookId}|${eventUuid}`);

export interface DeliveryIdentity {
  kind: HookKind;
  hookId: number;
  /** `X-Gitlab-Event`: `Push Hook`, `System Hook`... */
  event: string;
  /** `X-Gitlab-Event-UUID`: one per delivery, the same on its retries. */
  eventUuid: string;
}

/** The headers of one delivery attempt, signature excepted (`signedHeaders` adds it). */
export function deliveryHeaders(config: LodeConfig, d: DeliveryIdentity): Record<string, string> {
  return {
    'Content-Type': 'application/json',
    'User-Agent': webhookUserAgent(config),
    'X-Gitlab-Event': d.event,
    'X-Gitlab-Event-UUID': d.eventUuid,
    'X-Gitlab-Webhook-UUID': webhookUuid(config, d.kind, d.hookId),
    'X-Gitlab-Instance': config.externalUrl,
    'Idempotency-Key': idempotencyKey(d.kind, d.hookId, d.eventUuid),
  };
}

/*
 * Standard Webhooks signing (https://www.standardwebhooks.com, spec/standard-webhooks.md): a secret
 * `whsec_<base64 of 24 to 64 random bytes>`, whose decoded bytes are the HMAC-SHA256 key; the signed
 * content is `${webhook-id}.${webhook-timestamp}.${body}`, the timestamp in whole seconds since the
 * epoch; `webhook-signature: v1,<base64 of the HMAC>`. A receiver rejects an old timestamp (replays).
 */
const SIGNING_TOKEN = /^whsec_([A-Za-z0-9+/]+={0,2})$/;

/** The key of a `signing_token`, or undefined when it is not one (wrong prefix, not base64, too short or long). */
export function signingKey(token: string): Buffer | undefined {
  const m = SIGNING_TOKEN.exec(token);
  if (!m || m[1].length % 4 !== 0) return undefined;
  const key = Buffer.from(m[1], 'base64');
  // Buffer.from ignores what is not base64; a round trip tells a clean encoding.
  if (key.toString('base64') !== m[1] || key.length < 24 || key.length > 64) return undefined;
  return key;
}

/** A `signing_token` parameter: null to keep none, 400 in Grape's words when it is malformed. */
export function checkSigningToken(token: string): void {
  if (!signingKey(token))
    throw new BadParameter('signing_token is invalid: whsec_ followed by the base64 of 24 to 64 random bytes');
}

/** The Standard Webhooks headers of one attempt (its own timestamp), for a hook with a signing token. */
export function signatureHeaders(
  signingToken: string,
  webhookId: string,
  body: string,
  now: Date,
): Record<string, string> {
  const key = signingKey(signingToken);
  if (!key) return {}; // checked when it was given; a token that no longer parses signs nothing
  const timestamp = String(Math.floor(now.getTime() / 1000));
  const signature = createHmac('sha256', key).update(`${webhookId}.${timestamp}.${body}`).digest('base64');
  return { 'webhook-id': webhookId, 'webhook-timestamp': timestamp, 'webhook-signature': `v1,${signature}` };
}
