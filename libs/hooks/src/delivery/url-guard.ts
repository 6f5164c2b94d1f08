import { promises as dns } from 'node:dns';
import { BlockList, isIP, type LookupFunction } from 'node:net';

/**
 * SSRF guard for webhook URLs.
 *
 * Used twice: when a hook is saved (GitLab answers 422 `{"error":"Invalid url given"}`),
 * and again at delivery, where the caller connects through `pinnedLookup(result.addresses)`
 * so the socket goes to exactly the addresses that were checked. Checking a name and then
 * letting the HTTP client resolve it again would let DNS rebinding swap in 127.0.0.1.
 */

export type ResolvedAddress = { address: string; family: 4 | 6 };

export interface GuardOptions {
  /** Admin setting "allow requests to the local network from web hooks". */
  allowLocal: boolean;
  /** Defaults to `dns.promises.lookup(host, { all: true, verbatim: true })`. */
  lookup?: (host: string) => Promise<ResolvedAddress[]>;
}

/** `unresolved`: the name could not be resolved now, which says nothing about where it will point later. */
export type GuardResult =
  { ok: true; url: URL; addresses: ResolvedAddress[] } | { ok: false; reason: string; unresolved?: true };

const MAX_URL_LENGTH = 2048;

// WHATWG URL silently strips tab/CR/LF anywhere in the input, so "http://127.0.0.1\t/" would
// parse; refuse whitespace and control characters (C0, DEL, C1) in the raw string instead.
// eslint-disable-next-line no-control-regex -- matching control characters is the point
const WHITESPACE_OR_CONTROL = /[\s\u0000-\u001f\u007f-\u009f]/u;

// WHATWG URL reads "http:example.com", "http:/example.com" and "http:///example.com" alike, and
// treats a backslash as "/" (http://a.test\@b.test is host a.test to it, b.test to RFC 3986 parsers).
// Require exactly "//" then the authority, and no backslash, so every parser agrees on the host.
const HTTP_WITH_AUTHORITY = /^https?:\/\/[^/\\]/i;

/**
 * Parses a hook URL: http/https only, with a host, at most 2048 characters, no whitespace or
 * control characters. Userinfo is allowed (GitLab allows it, e.g. for basic auth on the receiver).
 * The returned URL's hostname is WHATWG-canonical: octal/hex/decimal/short IPv4 forms are already
 * rewritten to dotted quads and IPv6 literals are compressed and lower-cased.
 */
export function parseHookUrl(raw: string): URL | undefined {
  if (typeof raw !== 'string' || raw.length === 0 || raw.length > MAX_URL_LENGTH) return undefined;
  if (WHITESPACE_OR_CONTROL.test(raw) || raw.includes('\\') || !HTTP_WITH_AUTHORITY.test(raw)) return undefined;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return undefined;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return undefined;
  if (url.hostname === '' || url.hostname === '.') return undefined;
  return url;
}

type Rule = { reason: string; list: BlockList };

function rules(family: 'ipv4' | 'ipv6', table: [string, number, string][]): Rule[] {
  return table.map(([network, prefix, reason]) => {
    const list = new BlockList();
    list.addSubnet(network, prefix, family);
    return { reason, list };
  });
}

// Order matters: the first match gives the reason, so specific entries precede their supernets.
const IPV4_RULES = rules('ipv4', [
  ['169.254.169.254', 32, 'cloud metadata endpoint'],
  ['255.255.255.255', 32, 'broadcast address'],
  ['0.0.0.0', 32, 'unspecified address'],
  ['0.0.0.0', 8, '"this network" address (0.0.0.0/8)'],
  ['10.0.0.0', 8, 'private address (10.0.0.0/8)'],
  ['100.64.0.0', 10, 'carrier-grade NAT address (100.64.0.0/10)'],
  ['127.0.0.0', 8, 'loopback address'],
  ['169.254.0.0', 16, 'link-local address'],
  ['172.16.0.0', 12, 'private address (172.16.0.0/12)'],
  ['192.0.0.0', 24, 'IETF protocol assignment (192.0.0.0/24)'],
  ['192.0.2.0', 24, 'documentation address (192.0.2.0/24)'],
  ['192.88.99.0', 24, '6to4 relay anycast address'],
  ['192.168.0.0', 16, 'private address (192.168.0.0/16)'],
  ['198.18.0.0', 15, 'benchmarking address (198.18.0.0/15)'],
  ['198.51.100.0', 24, 'documentation address (198.51.100.0/24)'],
  ['203.0.113.0', 24, 'documentation address (203.0.113.0/24)'],
  ['224.0.0.0', 4, 'multicast address'],
  ['240.0.0.0', 4, 'reserved address (240.0.0.0/4)'],
]);

// IPv4-mapped (::ffff:0:0/96), NAT64 (64:ff9b::/96) and 6to4 (2002::/16) are handled before these
// rules by classifying the embedded IPv4 address.
const IPV6_RULES = rules('ipv6', [
  ['::', 128, 'unspecified address'],
  ['::1', 128, 'loopback address'],
  // Deprecated (RFC 4291) and never needed by a real receiver; some stacks tunnel it to the embedded v4.
  ['::', 96, 'IPv4-compatible IPv6 address'],
  ['64:ff9b:1::', 48, 'local-use NAT64 address'],
  ['100::', 64, 'discard-only address'],
  ['2001::', 32, 'Teredo tunnel address'],
  ['2001::', 23, 'IETF protocol assignment (2001::/23)'],
  ['2001:db8::', 32, 'documentation address (2001:db8::/32)'],
  ['3fff::', 20, 'documentation address (3fff::/20)'],
  ['fd00:ec2::254', 128, 'cloud metadata endpoint'],
  ['fc00::', 7, 'unique local address (fc00::/7)'],
  ['fe80::', 10, 'link-local address'],
  ['fec0::', 10, 'site-local address'],
  ['ff00::', 8, 'multicast address'],
  // Everything outside 2000::/3 is unallocated; nothing legitimate lives there.
  ['::', 3, 'not a global unicast address'],
  ['4000::', 2, 'not a global unicast address'],
  ['8000::', 1, 'not a global unicast address'],
]);

/** Expands a valid IPv6 address (no zone, no brackets) into its 16 bytes. */
function ipv6Bytes(ip: string): number[] {
  let text = ip;
  // A trailing dotted quad (::ffff:1.2.3.4) becomes two hextets.
  const quad = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (quad) {
    const [a, b, c, d] = quad.slice(1).map(Number);
    text = `${text.slice(0, quad.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, tail] = text.includes('::') ? text.split('::') : [text, undefined];
  const parse = (part: string | undefined) => (part ? part.split(':').map((h) => parseInt(h, 16)) : []);
  const left = parse(head);
  const right = parse(tail);
  const hextets =
    tail === undefined ? left : [...left, ...new Array<number>(8 - left.length - right.length).fill(0), ...right];
  return hextets.flatMap((h) => [h >> 8, h & 0xff]);
}

function startsWith(bytes: number[], prefix: number[]): boolean {
  return prefix.every((b, i) => bytes[i] === b);
}

/** The IPv4 address an IPv6 address stands for, when it is a translation or tunnel form. */
function embeddedIpv4(bytes: number[]): { kind: string; ipv4: string } | undefined {
  const quad = (at: number) => bytes.slice(at, at + 4).join('.');
  if (startsWith(bytes, [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff])) return { kind: 'IPv4-mapped', ipv4: quad(12) };
  if (startsWith(bytes, [0, 0x64, 0xff, 0x9b, 0, 0, 0, 0, 0, 0, 0, 0])) return { kind: 'NAT64', ipv4: quad(12) };
  if (startsWith(bytes, [0x20, 0x02])) return { kind: '6to4', ipv4: quad(2) };
  return undefined;
}

/**
 * Why an address must not be contacted, or undefined when it is a public unicast address.
 * Fails closed: anything that is not a plain IPv4/IPv6 address (e.g. "0177.0.0.1", "[::1]") is
 * refused, so callers must pass canonical addresses (URL.hostname without brackets, DNS answers).
 */
export function isForbiddenAddress(ip: string): string | undefined {
  // A zone ("fe80::1%eth0") only appears on link-local addresses; classify the address itself.
  const address = ip.replace(/%.*$/s, '');
  const family = isIP(address);
  if (family === 4) return IPV4_RULES.find((rule) => rule.list.check(address, 'ipv4'))?.reason;
  if (family !== 6) return 'not an IP address';

  const embedded = embeddedIpv4(ipv6Bytes(address));
  if (embedded) {
    const reason = isForbiddenAddress(embedded.ipv4);
    return reason && `${embedded.kind} ${reason} (${embedded.ipv4})`;
  }
  return IPV6_RULES.find((rule) => rule.list.check(address, 'ipv6'))?.reason;
}

/** Names refused without asking DNS: they are local by definition, whatever a resolver says. */
function forbiddenName(name: string): string | undefined {
  if (name === 'localhost' || name.endsWith('.localhost')) return 'localhost';
  if (name === 'metadata.google.internal' || name === 'metadata.goog' || name === 'metadata')
    return 'cloud metadata host';
  return undefined;
}

const defaultLookup = async (host: string): Promise<ResolvedAddress[]> =>
  (await dns.lookup(host, { all: true, verbatim: true })).map(({ address, family }) => ({
    address,
    family: family as 4 | 6,
  }));

/**
 * Validates a hook URL and resolves its host. On success `addresses` are exactly what the
 * delivery must connect to (via `pinnedLookup`). With `allowLocal` the addresses are not
 * classified, but the URL must still be well-formed http(s) and the name must still resolve.
 */
export async function checkHookUrl(raw: string, options: GuardOptions): Promise<GuardResult> {
  const url = parseHookUrl(raw);
  if (!url) return { ok: false, reason: 'malformed URL or scheme other than http/https' };

  // IPv6 literals keep their brackets in URL.hostname.
  const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
  const literal = isIP(host);
  if (literal) {
    // Literals are never resolved; WHATWG has already rewritten every IPv4 spelling to a dotted quad.
    const reason = options.allowLocal ? undefined : isForbiddenAddress(host);
    if (reason) return { ok: false, reason: `${host} is not allowed: ${reason}` };
    return { ok: true, url, addresses: [{ address: host, family: literal as 4 | 6 }] };
  }

  // "localhost." is the same host as "localhost" (WHATWG keeps the trailing dot on names).
  const name = host.replace(/\.$/, '');
  if (!options.allowLocal) {
    const reason = forbiddenName(name);
    if (reason) return { ok: false, reason: `${name} is not allowed: ${reason}` };
  }

  let addresses: ResolvedAddress[];
  try {
    addresses = await (options.lookup ?? defaultLookup)(host);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException | undefined)?.code ?? String(error);
    return { ok: false, reason: `could not resolve ${name}: ${code}`, unresolved: true };
  }
  if (!Array.isArray(addresses) || addresses.length === 0) return { ok: false, reason: `${name} has no addresses` };

  for (const { address, family } of addresses) {
    // A resolver answering junk must not slip an unchecked value into the pinned lookup.
    if (isIP(address.replace(/%.*$/s, '')) !== family)
      return { ok: false, reason: `${name} resolved to an invalid address` };
    // Any forbidden answer refuses the whole name: the client could pick any of them.
    const reason = options.allowLocal ? undefined : isForbiddenAddress(address);
    if (reason) return { ok: false, reason: `${name} resolves to ${address}, which is not allowed: ${reason}` };
  }
  return { ok: true, url, addresses: addresses.map(({ address, family }) => ({ address, family })) };
}

/**
 * A `lookup` for `http.request` / `https.request` / `net.connect` that answers only the
 * pre-checked addresses and never consults DNS. The request keeps the original host name, so
 * the Host header, TLS SNI and certificate checks still use the name.
 */
export function pinnedLookup(addresses: readonly ResolvedAddress[]): LookupFunction {
  const pinned = addresses.map(({ address, family }) => ({ address, family }));
  return (hostname, options, callback) => {
    const wanted = options.family === 'IPv4' ? 4 : options.family === 'IPv6' ? 6 : options.family;
    const matching = wanted === 4 || wanted === 6 ? pinned.filter((a) => a.family === wanted) : pinned;
    // Answer asynchronously, as dns.lookup does; callers may rely on it.
    process.nextTick(() => {
      if (matching.length === 0) {
        const error: NodeJS.ErrnoException = new Error(`getaddrinfo ENOTFOUND ${hostname} (no pinned address)`);
        error.code = 'ENOTFOUND';
        callback(error, options.all ? [] : '', undefined);
      } else if (options.all) {
        callback(
          null,
          matching.map((a) => ({ ...a })),
        );
      } else {
        callback(null, matching[0].address, matching[0].family);
      }
    });
  };
}

/**
 * GitLab's UrlBlocker words for a refused hook URL: on the field `url` for system hooks (the model
 * validation, answered 400 by `render_validation_error!`), as the `message` beside project hooks' 422.
 */
export function blockedUrlMessage(verdict: Extract<GuardResult, { ok: false }>): string {
  if (verdict.reason.startsWith('malformed')) return 'is blocked: Only allowed schemes are http, https';
  if (/loopback|localhost/.test(verdict.reason)) return 'is blocked: Requests to localhost are not allowed';
  return 'is blocked: Requests to the local network are not allowed';
}
