import { createServer, request, type Server } from 'node:http';
import type { AddressInfo, LookupFunction } from 'node:net';
import type { LookupAddress } from 'node:dns';
import {
  checkHookUrl,
  isForbiddenAddress,
  parseHookUrl,
  pinnedLookup,
  type GuardResult,
  type ResolvedAddress,
} from './url-guard';

/** A fake resolver that records what it was asked and answers from a table. */
function fakeLookup(table: Record<string, ResolvedAddress[]>) {
  const asked: string[] = [];
  const lookup = async (host: string): Promise<ResolvedAddress[]> => {
    asked.push(host);
    const answer = table[host];
    if (!answer) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
    return answer;
  };
  return { lookup, asked };
}

const v4 = (address: string): ResolvedAddress => ({ address, family: 4 });
const v6 = (address: string): ResolvedAddress => ({ address, family: 6 });

// Names in the tricky-host list; with allowLocal they resolve (through the fake) to local addresses.
const LOCAL_NAMES = {
  localhost: [v4('127.0.0.1'), v6('::1')],
  'localhost.': [v4('127.0.0.1')],
  'foo.localhost': [v4('127.0.0.1')],
  'metadata.google.internal': [v4('169.254.169.254')],
};

function refused(result: GuardResult): string {
  if (result.ok) throw new Error(`expected a refusal, got ${JSON.stringify(result.addresses)}`);
  return result.reason;
}

function accepted(result: GuardResult): ResolvedAddress[] {
  if (!result.ok) throw new Error(`expected acceptance, got "${result.reason}"`);
  return result.addresses;
}

describe('parseHookUrl', () => {
  it('canonicalises the hostname the way WHATWG URL does', () => {
    const cases: [string, string][] = [
      ['http://0177.0.0.1/', '127.0.0.1'],
      ['http://0x7f.1/', '127.0.0.1'],
      ['http://2130706433/', '127.0.0.1'],
      ['http://0x7f000001/', '127.0.0.1'],
      ['http://127.1/', '127.0.0.1'],
      ['http://0/', '0.0.0.0'],
      ['http://%30/', '0.0.0.0'],
      ['http://127.0.0.1./', '127.0.0.1'],
      ['http://[::ffff:127.0.0.1]/', '[::ffff:7f00:1]'],
      ['http://[::ffff:7f00:1]/', '[::ffff:7f00:1]'],
      ['http://[0:0:0:0:0:ffff:127.0.0.1]/', '[::ffff:7f00:1]'],
      ['http://[::127.0.0.1]/', '[::7f00:1]'],
      ['http://LOCALHOST/', 'localhost'],
      // Names keep their trailing dot, unlike IPv4 literals.
      ['http://localhost./', 'localhost.'],
      ['http://exa%6Dple.com/', 'example.com'],
    ];
    for (const [raw, hostname] of cases) expect(parseHookUrl(raw)?.hostname).toBe(hostname);
  });

  it('accepts http and https, with ports, paths and userinfo', () => {
    expect(parseHookUrl('https://example.com/hook?x=1')?.href).toBe('https://example.com/hook?x=1');
    expect(parseHookUrl('HTTP://Example.COM:8080/a')?.href).toBe('http://example.com:8080/a');
    const withUser = parseHookUrl('https://user:secret@example.com/hook');
    expect(withUser?.username).toBe('user');
    expect(withUser?.password).toBe('secret');
  });

  it.each([
    'ftp://example.com/',
    'file:///etc/passwd',
    'gopher://127.0.0.1:6379/_INFO',
    'javascript:alert(1)',
    'data:text/plain,hi',
    'ws://example.com/',
    '//example.com/',
    'example.com',
    'http:example.com',
    'http:/example.com',
    'http://',
    'http:///path',
    'http:///example.com/',
    'http:\\\\example.com/',
    'http://a.example\\@b.example/',
    'http://exa mple.com/',
    ' http://example.com/',
    'http://example.com/ ',
    'http://127.0.0.1\t/',
    'http://exam\nple.com/',
    'http://example.com/\u0000',
    'http://example.com/\u0085',
    'http://example.com/\u00a0',
    'http://256.1/',
    'http://0x100000000/',
    'http://1.2.3.4.5/',
    'http://[::1/',
    'http://[fe80::1%25eth0]/',
    '',
  ])('refuses %j', (raw) => {
    expect(parseHookUrl(raw)).toBeUndefined();
  });

  it('allows 2048 characters and refuses 2049', () => {
    const base = 'http://example.com/';
    expect(parseHookUrl(base + 'a'.repeat(2048 - base.length))).toBeDefined();
    expect(parseHookUrl(base + 'a'.repeat(2049 - base.length))).toBeUndefined();
  });
});

describe('isForbiddenAddress', () => {
  it.each([
    ['127.0.0.1', 'loopback'],
    ['127.255.255.254', 'loopback'],
    ['10.0.0.1', 'private'],
    ['172.16.0.1', 'private'],
    ['172.31.255.255', 'private'],
    ['192.168.1.1', 'private'],
    ['100.64.0.1', 'carrier-grade NAT'],
    ['100.127.255.255', 'carrier-grade NAT'],
    ['100.100.100.200', 'carrier-grade NAT'], // Alibaba Cloud metadata
    ['169.254.169.254', 'cloud metadata'],
    ['169.254.1.1', 'link-local'],
    ['0.0.0.0', 'unspecified'],
    ['0.1.2.3', 'this network'],
    ['255.255.255.255', 'broadcast'],
    ['224.0.0.1', 'multicast'],
    ['239.255.255.250', 'multicast'],
    ['240.0.0.1', 'reserved'],
    ['192.0.0.8', 'IETF protocol assignment'],
    ['192.0.2.1', 'documentation'],
    ['198.51.100.7', 'documentation'],
    ['203.0.113.9', 'documentation'],
    ['198.18.0.1', 'benchmarking'],
    ['192.88.99.1', '6to4 relay'],
    ['::1', 'loopback'],
    ['0:0:0:0:0:0:0:1', 'loopback'],
    ['::', 'unspecified'],
    ['fc00::1', 'unique local'],
    ['fd12:3456::1', 'unique local'],
    ['fd00:ec2::254', 'cloud metadata'],
    ['fe80::1', 'link-local'],
    ['fe80::1%eth0', 'link-local'],
    ['FE80::ABCD', 'link-local'],
    ['febf::1', 'link-local'],
    ['fec0::1', 'site-local'],
    ['ff02::1', 'multicast'],
    ['ff05::1:3', 'multicast'],
    ['::ffff:127.0.0.1', 'IPv4-mapped loopback address (127.0.0.1)'],
    ['::ffff:7f00:1', 'IPv4-mapped loopback address (127.0.0.1)'],
    ['0:0:0:0:0:ffff:a00:1', 'IPv4-mapped private address (10.0.0.0/8) (10.0.0.1)'],
    ['::ffff:169.254.169.254', 'IPv4-mapped cloud metadata endpoint (169.254.169.254)'],
    ['::127.0.0.1', 'IPv4-compatible'],
    ['::7f00:1', 'IPv4-compatible'],
    ['::5db8:d822', 'IPv4-compatible'], // even embedding a public address: deprecated form
    ['64:ff9b::7f00:1', 'NAT64 loopback address (127.0.0.1)'],
    ['64:ff9b::10.1.2.3', 'NAT64 private'],
    ['64:ff9b::a9fe:a9fe', 'NAT64 cloud metadata'],
    ['64:ff9b:1::1', 'local-use NAT64'],
    ['2002:7f00:1::', '6to4 loopback address (127.0.0.1)'],
    ['2002:c0a8:101::1', '6to4 private address (192.168.0.0/16) (192.168.1.1)'],
    ['2002:a9fe:a9fe::1', '6to4 cloud metadata'],
    ['2001:0:4136:e378:8000:63bf:3fff:fdd2', 'Teredo'],
    ['2001:2::1', 'IETF protocol assignment'],
    ['2001:db8::1', 'documentation'],
    ['3fff::1', 'documentation'],
    ['100::1', 'discard-only'],
    ['4000::1', 'not a global unicast'],
    ['e000::1', 'not a global unicast'],
    ['1fff::1', 'not a global unicast'],
  ])('refuses %s (%s)', (ip, reason) => {
    expect(isForbiddenAddress(ip)).toContain(reason);
  });

  it.each([
    '93.184.216.34',
    '8.8.8.8',
    '1.1.1.1',
    '172.15.255.255',
    '172.32.0.0',
    '100.63.255.255',
    '100.128.0.0',
    '169.253.255.255',
    '169.255.0.1',
    '192.167.255.255',
    '192.169.0.0',
    '11.0.0.1',
    '126.255.255.255',
    '128.0.0.1',
    '223.255.255.254',
    '2606:2800:220:1::1',
    '2606:2800:220:1:248:1893:25c8:1946',
    '2001:4860:4860::8888',
    '2a00:1450:4001:80b::200e',
    '::ffff:93.184.216.34', // mapped public address is that public host
    '64:ff9b::5db8:d822', // NAT64 of 93.184.216.34
    '2002:5db8:d822::1', // 6to4 of 93.184.216.34
  ])('allows public %s', (ip) => {
    expect(isForbiddenAddress(ip)).toBeUndefined();
  });

  it('fails closed on anything that is not a canonical address', () => {
    for (const text of ['', 'localhost', '0177.0.0.1', '127.1', '2130706433', '[::1]', '1.2.3.256', 'example.com']) {
      expect(isForbiddenAddress(text)).toBe('not an IP address');
    }
  });
});

describe('checkHookUrl', () => {
  const TRICKY = [
    'http://0177.0.0.1/',
    'http://0x7f.1/',
    'http://2130706433/',
    'http://127.1/',
    'http://[::ffff:127.0.0.1]/',
    'http://[::ffff:7f00:1]/',
    'http://[0:0:0:0:0:ffff:127.0.0.1]/',
    'http://localhost/',
    'http://localhost./',
    'http://LOCALHOST/',
    'http://foo.localhost/',
    'http://[::1]/',
    'http://0/',
    'http://169.254.169.254/latest/meta-data',
    'http://metadata.google.internal/',
    'http://10.0.0.1/',
    'http://192.168.1.1:8080/',
    'http://172.16.0.1/',
    'http://100.64.0.1/',
    'https://127.0.0.1/',
    'http://user:pass@127.0.0.1/',
    'http://[::7f00:1]/',
    'http://[64:ff9b::7f00:1]/',
    'http://[2002:7f00:1::]/',
    'http://[fd00:ec2::254]/',
    'http://[fe80::1]/',
    'http://[fc00::1]/',
  ];

  describe('with allowLocal false', () => {
    it.each(TRICKY)('refuses %s without consulting DNS for local names', async (raw) => {
      const { lookup, asked } = fakeLookup(LOCAL_NAMES);
      const reason = refused(await checkHookUrl(raw, { allowLocal: false, lookup }));
      expect(reason).toMatch(/not allowed/);
      expect(asked).toEqual([]);
    });

    it('explains what it refused', async () => {
      const { lookup } = fakeLookup({});
      expect(refused(await checkHookUrl('http://0x7f.1/', { allowLocal: false, lookup }))).toBe(
        '127.0.0.1 is not allowed: loopback address',
      );
      expect(refused(await checkHookUrl('http://[::ffff:7f00:1]/', { allowLocal: false, lookup }))).toBe(
        '::ffff:7f00:1 is not allowed: IPv4-mapped loopback address (127.0.0.1)',
      );
      expect(refused(await checkHookUrl('http://localhost./', { allowLocal: false, lookup }))).toBe(
        'localhost is not allowed: localhost',
      );
      expect(refused(await checkHookUrl('http://metadata.google.internal/', { allowLocal: false, lookup }))).toBe(
        'metadata.google.internal is not allowed: cloud metadata host',
      );
    });
  });

  describe('with allowLocal true', () => {
    it.each(TRICKY)('allows %s', async (raw) => {
      const { lookup } = fakeLookup(LOCAL_NAMES);
      const addresses = accepted(await checkHookUrl(raw, { allowLocal: true, lookup }));
      expect(addresses.length).toBeGreaterThan(0);
    });

    it('returns the canonical literal without resolving it', async () => {
      const { lookup, asked } = fakeLookup({});
      expect(accepted(await checkHookUrl('http://0x7f.1/', { allowLocal: true, lookup }))).toEqual([v4('127.0.0.1')]);
      expect(accepted(await checkHookUrl('http://[0:0:0:0:0:ffff:127.0.0.1]/', { allowLocal: true, lookup }))).toEqual([
        v6('::ffff:7f00:1'),
      ]);
      expect(asked).toEqual([]);
    });

    it('returns what the name resolved to, asking with the name as written', async () => {
      const { lookup, asked } = fakeLookup(LOCAL_NAMES);
      expect(accepted(await checkHookUrl('http://LOCALHOST:3000/x', { allowLocal: true, lookup }))).toEqual([
        v4('127.0.0.1'),
        v6('::1'),
      ]);
      expect(accepted(await checkHookUrl('http://localhost./', { allowLocal: true, lookup }))).toEqual([
        v4('127.0.0.1'),
      ]);
      expect(asked).toEqual(['localhost', 'localhost.']);
    });

    it('still refuses bad schemes and malformed URLs', async () => {
      const { lookup } = fakeLookup(LOCAL_NAMES);
      for (const raw of [
        'ftp://127.0.0.1/',
        'file:///etc/passwd',
        'gopher://localhost:6379/',
        'http://127.0.0.1\t/',
        'http://[::1',
        'localhost',
      ]) {
        expect(refused(await checkHookUrl(raw, { allowLocal: true, lookup }))).toBe(
          'malformed URL or scheme other than http/https',
        );
      }
    });

    it('still refuses names that do not resolve', async () => {
      const { lookup } = fakeLookup({});
      expect(refused(await checkHookUrl('http://nowhere.example.test/', { allowLocal: true, lookup }))).toBe(
        'could not resolve nowhere.example.test: ENOTFOUND',
      );
    });
  });

  describe('resolving names', () => {
    const table = {
      'example.com': [v4('93.184.216.34'), v6('2606:2800:220:1::1')],
      'rebind.example.com': [v4('127.0.0.1')],
      'mixed.example.com': [v4('93.184.216.34'), v4('10.0.0.5')],
      'mixed6.example.com': [v6('2606:2800:220:1::1'), v6('::ffff:192.168.0.1')],
      'empty.example.com': [],
      'junk.example.com': [{ address: 'not-an-ip', family: 4 as const }],
      'lying.example.com': [{ address: '::1', family: 4 as const }],
    };

    it('passes public names and returns every address for pinning', async () => {
      const { lookup, asked } = fakeLookup(table);
      const result = await checkHookUrl('https://example.com/hook', { allowLocal: false, lookup });
      expect(accepted(result)).toEqual([v4('93.184.216.34'), v6('2606:2800:220:1::1')]);
      expect(result.ok && result.url.href).toBe('https://example.com/hook');
      expect(asked).toEqual(['example.com']);
    });

    it('passes public literals without resolving them', async () => {
      const { lookup, asked } = fakeLookup({});
      expect(accepted(await checkHookUrl('http://93.184.216.34/', { allowLocal: false, lookup }))).toEqual([
        v4('93.184.216.34'),
      ]);
      expect(accepted(await checkHookUrl('http://[2606:2800:220:1::1]:8443/', { allowLocal: false, lookup }))).toEqual([
        v6('2606:2800:220:1::1'),
      ]);
      expect(asked).toEqual([]);
    });

    it('refuses a name resolving to loopback', async () => {
      const { lookup } = fakeLookup(table);
      expect(refused(await checkHookUrl('http://rebind.example.com/', { allowLocal: false, lookup }))).toBe(
        'rebind.example.com resolves to 127.0.0.1, which is not allowed: loopback address',
      );
    });

    it('refuses a name when any one of its addresses is forbidden', async () => {
      const { lookup } = fakeLookup(table);
      expect(refused(await checkHookUrl('http://mixed.example.com/', { allowLocal: false, lookup }))).toMatch(
        /10\.0\.0\.5.*private/,
      );
      expect(refused(await checkHookUrl('http://mixed6.example.com/', { allowLocal: false, lookup }))).toMatch(
        /IPv4-mapped private/,
      );
    });

    it('refuses on resolution failure, no answer, or a junk answer', async () => {
      const { lookup } = fakeLookup(table);
      expect(refused(await checkHookUrl('http://unknown.example.com/', { allowLocal: false, lookup }))).toBe(
        'could not resolve unknown.example.com: ENOTFOUND',
      );
      expect(refused(await checkHookUrl('http://empty.example.com/', { allowLocal: false, lookup }))).toBe(
        'empty.example.com has no addresses',
      );
      expect(refused(await checkHookUrl('http://junk.example.com/', { allowLocal: true, lookup }))).toMatch(
        /invalid address/,
      );
      expect(refused(await checkHookUrl('http://lying.example.com/', { allowLocal: true, lookup }))).toMatch(
        /invalid address/,
      );
      const failing = async (): Promise<ResolvedAddress[]> => {
        throw new Error('boom');
      };
      expect(refused(await checkHookUrl('http://example.com/', { allowLocal: false, lookup: failing }))).toBe(
        'could not resolve example.com: Error: boom',
      );
    });

    it('uses the system resolver by default', async () => {
      // localhost comes from the hosts file, so this needs no network.
      const addresses = accepted(await checkHookUrl('http://localhost/', { allowLocal: true }));
      expect(addresses.length).toBeGreaterThan(0);
      for (const { address } of addresses) expect(isForbiddenAddress(address)).toMatch(/loopback/);
    });
  });
});

describe('pinnedLookup', () => {
  const call = (lookup: LookupFunction, options: Parameters<LookupFunction>[1]) =>
    new Promise<{ error: NodeJS.ErrnoException | null; address: string | LookupAddress[]; family?: number }>(
      (resolve) => {
        lookup('anything.example.test', options, (error, address, family) => resolve({ error, address, family }));
      },
    );

  const lookup = pinnedLookup([v4('93.184.216.34'), v6('2606:2800:220:1::1')]);

  it('answers every pinned address when asked for all', async () => {
    expect(await call(lookup, { all: true })).toEqual({
      error: null,
      address: [v4('93.184.216.34'), v6('2606:2800:220:1::1')],
      family: undefined,
    });
    expect(await call(lookup, { all: true, family: 6 })).toEqual({
      error: null,
      address: [v6('2606:2800:220:1::1')],
      family: undefined,
    });
  });

  it('answers the first pinned address of the wanted family otherwise', async () => {
    expect(await call(lookup, {})).toEqual({ error: null, address: '93.184.216.34', family: 4 });
    expect(await call(lookup, { family: 6 })).toEqual({ error: null, address: '2606:2800:220:1::1', family: 6 });
    expect(await call(lookup, { family: 'IPv6' })).toEqual({ error: null, address: '2606:2800:220:1::1', family: 6 });
    expect(await call(lookup, { family: 0 })).toEqual({ error: null, address: '93.184.216.34', family: 4 });
  });

  it('fails with ENOTFOUND when no pinned address has the wanted family', async () => {
    const only4 = pinnedLookup([v4('93.184.216.34')]);
    const { error } = await call(only4, { family: 6 });
    expect(error?.code).toBe('ENOTFOUND');
  });

  it('answers asynchronously, as dns.lookup does', () => {
    let answered = false;
    lookup('x', {}, () => {
      answered = true;
    });
    expect(answered).toBe(false);
  });

  describe('in a real http.request', () => {
    let server: Server;
    let port: number;

    beforeAll(async () => {
      server = createServer((req, res) => {
        res.setHeader('content-type', 'application/json');
        res.end(JSON.stringify({ host: req.headers.host, path: req.url, remote: req.socket.remoteAddress }));
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      port = (server.address() as AddressInfo).port;
    });

    afterAll(async () => {
      await new Promise<void>((resolve, reject) => server.close((error) => (error ? reject(error) : resolve())));
    });

    function get(url: URL, lookup: LookupFunction) {
      return new Promise<{ status: number; body: { host: string; path: string; remote: string } }>(
        (resolve, reject) => {
          // agent: false, so no keep-alive socket outlives the test.
          const req = request(url, { lookup, agent: false }, (res) => {
            let text = '';
            res.setEncoding('utf8');
            res.on('data', (chunk: string) => (text += chunk));
            res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) }));
            res.on('error', reject);
          });
          req.on('error', reject);
          req.end();
        },
      );
    }

    it('connects to the checked address while keeping the hook host name, without DNS', async () => {
      // hooks.example.test is in the reserved .test TLD: no real resolver could answer it.
      const { lookup: fake } = fakeLookup({ 'hooks.example.test': [v4('127.0.0.1')] });
      const raw = `http://hooks.example.test:${port}/hook?x=1`;

      expect(refused(await checkHookUrl(raw, { allowLocal: false, lookup: fake }))).toMatch(/loopback/);
      const result = await checkHookUrl(raw, { allowLocal: true, lookup: fake });
      if (!result.ok) throw new Error(result.reason);

      const hostsAsked: string[] = [];
      const pinned = pinnedLookup(result.addresses);
      const spy: LookupFunction = (hostname, options, callback) => {
        hostsAsked.push(hostname);
        pinned(hostname, options, callback);
      };

      const { status, body } = await get(result.url, spy);
      expect(status).toBe(200);
      expect(body).toEqual({ host: `hooks.example.test:${port}`, path: '/hook?x=1', remote: '127.0.0.1' });
      expect(hostsAsked).toEqual(['hooks.example.test']);
    });

    it('cannot be steered elsewhere: an address not pinned is never used', async () => {
      // With nothing pinned the request fails rather than falling back to DNS, even for localhost.
      await expect(get(new URL(`http://localhost:${port}/`), pinnedLookup([]))).rejects.toMatchObject({
        code: 'ENOTFOUND',
      });
    });
  });
});
