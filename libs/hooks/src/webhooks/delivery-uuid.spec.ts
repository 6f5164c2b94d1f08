import { createHash } from 'node:crypto';
import { deliveryUuid } from './webhook-jobs';

describe('deliveryUuid', () => {
  it('is an RFC 9562 version 5 UUID, the same for the same instance and delivery', () => {
    const a = deliveryUuid('https://lode.example', 'deliver-7-p42-0');
    expect(a).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(deliveryUuid('https://lode.example', 'deliver-7-p42-0')).toBe(a);
  });

  it('differs between deliveries, hooks and instances', () => {
    const ids = new Set([
      deliveryUuid('https://lode.example', 'deliver-7-p42-0'),
      deliveryUuid('https://lode.example', 'deliver-7-p42-1'),
      deliveryUuid('https://lode.example', 'deliver-8-p42-0'),
      deliveryUuid('https://lode.example', 'deliver-s7-p42-0'),
      deliveryUuid('https://other.example', 'deliver-7-p42-0'),
    ]);
    expect(ids.size).toBe(5);
  });

  it('is the SHA-1 of its name space and name, as RFC 9562 section 5.5 computes it', () => {
    // An independent computation: the name space's 16 bytes, then the name.
    const ns = Buffer.from('6f1d1a3c9e2b4f0a8c5d7e6b1a2f3c4d', 'hex');
    const h = createHash('sha1')
      .update(Buffer.concat([ns, Buffer.from('http://x deliver-1-p1-0')]))
      .digest('hex');
    const expected = [
      h.slice(0, 8),
      h.slice(8, 12),
      `5${h.slice(13, 16)}`,
      ((parseInt(h.slice(16, 18), 16) & 0x3f) | 0x80).toString(16) + h.slice(18, 20),
      h.slice(20, 32),
    ].join('-');
    expect(deliveryUuid('http://x', 'deliver-1-p1-0')).toBe(expected);
  });
});
