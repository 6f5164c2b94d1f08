import { createHmac, timingSafeEqual } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';

/**
 * A receiver's check, written from the Standard Webhooks spec (spec/standard-webhooks.md), not from
 * Lode's code: the key is the base64-decoded secret after `whsec_`; the signed content is
 * `${webhook-id}.${webhook-timestamp}.${body}`; `webhook-signature` is a space-separated list of
 * `v1,<base64 HMAC-SHA256>`, any of which may match; a timestamp more than 5 minutes away is refused.
 */
export function verifyStandardWebhook(secret: string, headers: IncomingHttpHeaders, body: string): boolean {
  const id = headers['webhook-id'];
  const timestamp = headers['webhook-timestamp'];
  const signatures = headers['webhook-signature'];
  if (typeof id !== 'string' || typeof timestamp !== 'string' || typeof signatures !== 'string') return false;
  if (Math.abs(Date.now() / 1000 - Number(timestamp)) > 5 * 60) return false;
  const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64');
  const expected = createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest();
  return signatures.split(' ').some((s) => {
    const [version, value] = s.split(',');
    const given = Buffer.from(value ?? '', 'base64');
    return version === 'v1' && given.length === expected.length && timingSafeEqual(given, expected);
  });
}
