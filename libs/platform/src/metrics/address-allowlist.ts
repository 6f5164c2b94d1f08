import { BlockList, isIPv4, isIPv6 } from 'node:net';

/** LODE_METRICS_ALLOW's default, GitLab's monitoring IP allowlist default: loopback only. */
export const LOOPBACK = ['127.0.0.0/8', '::1/128'];

/**
 * Addresses and CIDRs (`10.0.0.0/8`, `::1`, `192.168.1.7`) a request's address is checked against.
 * An IPv4 address seen through an IPv6 socket (`::ffff:127.0.0.1`) counts as the IPv4 address.
 */
export class AddressAllowlist {
  private readonly list = new BlockList();

  constructor(entries: string[], setting = 'LODE_METRICS_ALLOW') {
    for (const entry of entries) {
      const [address, bits, extra] = entry.split('/');
      const family = isIPv4(address) ? 'ipv4' : isIPv6(address) ? 'ipv6' : undefined;
      const prefix = bits === undefined ? (family === 'ipv4' ? 32 : 128) : Number(bits);
      if (
        !family ||
        extra !== undefined ||
        !Number.isInteger(prefix) ||
        prefix < 0 ||
        prefix > (family === 'ipv4' ? 32 : 128) ||
        (bits !== undefined && !/^\d+$/.test(bits))
      )
        throw new Error(`${setting}: ${entry} is not an address or a CIDR`);
      this.list.addSubnet(address, prefix, family);
    }
  }

  allows(address: string | undefined): boolean {
    if (!address) return false;
    const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
    const plain = mapped ? mapped[1] : address;
    if (isIPv4(plain)) return this.list.check(plain, 'ipv4');
    if (isIPv6(plain)) return this.list.check(plain, 'ipv6');
    return false;
  }
}
