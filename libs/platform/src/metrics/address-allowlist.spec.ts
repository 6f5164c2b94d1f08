import { AddressAllowlist, LOOPBACK } from './address-allowlist';

describe('AddressAllowlist', () => {
  it('allows loopback by default, IPv4 seen through IPv6 sockets too', () => {
    const list = new AddressAllowlist(LOOPBACK);
    expect(list.allows('127.0.0.1')).toBe(true);
    expect(list.allows('127.8.9.10')).toBe(true);
    expect(list.allows('::ffff:127.0.0.1')).toBe(true);
    expect(list.allows('::1')).toBe(true);
    expect(list.allows('10.0.0.1')).toBe(false);
    expect(list.allows('::2')).toBe(false);
    expect(list.allows(undefined)).toBe(false);
  });

  it('takes addresses and CIDRs', () => {
    const list = new AddressAllowlist(['10.1.0.0/16', '192.168.1.7', 'fd00::/8']);
    expect(list.allows('10.1.200.3')).toBe(true);
    expect(list.allows('10.2.0.1')).toBe(false);
    expect(list.allows('192.168.1.7')).toBe(true);
    expect(list.allows('192.168.1.8')).toBe(false);
    expect(list.allows('fd12::1')).toBe(true);
    expect(list.allows('127.0.0.1')).toBe(false);
  });

  it('refuses what is not an address', () => {
    for (const bad of ['localhost', '10.0.0.0/33', '10.0.0.0/x', '1.2.3.4/8/9', '::1/129'])
      expect(() => new AddressAllowlist([bad])).toThrow(`LODE_METRICS_ALLOW: ${bad} is not an address or a CIDR`);
  });
});
