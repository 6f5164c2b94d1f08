import { LodeConfig } from '@app/platform';
import { randomBytes } from 'node:crypto';
import { deliveryHeaders, idempotencyKey, signatureHeaders, signingKey, webhookUuid } from './webhook-headers';

describe('webhook headers', () => {
  const config = new LodeConfig();
  config.externalUrl = 'https://lode.example.com';
  config.gitlabVersion = '17.4.0';

  it("signs as the Standard Webhooks spec's example does", () => {
    // The spec's test vector (secret, message id, timestamp, payload and the signature it gives).
    expect(
      signatureHeaders(
        'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
        'msg_p5jXN8AQM9LWM0D4loKWxJek',
        '{"test": 2432232314}',
        new Date(1614265330_000),
      ),
    ).toEqual({
      'webhook-id': 'msg_p5jXN8AQM9LWM0D4loKWxJek',
      'webhook-timestamp': '1614265330',
      'webhook-signature': 'v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=',
    });
  });

  it('takes whsec_ and the base64 of 24 to 64 bytes as a signing token, nothing else', () => {
    for (const n of [24, 32, 64]) expect(signingKey(`whsec_${randomBytes(n).toString('base64')}`)?.length).toBe(n);
    for (const bad of [
      `whsec_${randomBytes(23).toString('base64')}`,
      `whsec_${randomBytes(65).toString('base64')}`,
      randomBytes(32).toString('base64'),
      `WHSEC_${randomBytes(32).toString('base64')}`,
      `whsec_${randomBytes(32).toString('base64url')}-_`,
      `whsec_${randomBytes(32).toString('base64')} `,
      'whsec_',
    ])
      expect(signingKey(bad)).toBeUndefined();
  });

  it("sends later GitLab's headers, stable per hook and per delivery", () => {
    const h = deliveryHeaders(config, { kind: 'project', hookId: 3, event: 'Push Hook', eventUuid: 'e-1' });
    expect(h).toEqual({
      'Content-Type': 'application/json',
      'User-Agent': expect.stringMatching(/^GitLab\/17\.4\.0 Lode\/\S+$/),
      'X-Gitlab-Event': 'Push Hook',
      'X-Gitlab-Event-UUID': 'e-1',
      'X-Gitlab-Webhook-UUID': webhookUuid(config, 'project', 3),
      'X-Gitlab-Instance': 'https://lode.example.com',
      'Idempotency-Key': idempotencyKey('project', 3, 'e-1'),
    });
    expect(webhookUuid(config, 'project', 3)).toMatch(
      /^[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/,
    );
    expect(webhookUuid(config, 'system', 3)).not.toBe(webhookUuid(config, 'project', 3));
    expect(idempotencyKey('project', 3, 'e-1')).toBe(idempotencyKey('project', 3, 'e-1'));
    expect(idempotencyKey('project', 3, 'e-2')).not.toBe(idempotencyKey('project', 3, 'e-1'));
    expect(idempotencyKey('project', 4, 'e-1')).not.toBe(idempotencyKey('project', 3, 'e-1'));
  });
});
