import { LINK_HEADER_BUDGET } from '@app/platform';
import { get as httpGet } from 'node:http';
import type { AddressInfo } from 'node:net';
import { startTestApp, type TestApp } from '../support/test-app';

/**
 * `Link` stays within LINK_HEADER_BUDGET whatever the query: every link repeats the request's URL,
 * and four copies of a long one passed Node's 16 KB limit on an answer's headers, so a Node client
 * could not read the answer. `rel="next"` is kept first (python-gitlab iterates by it); a list whose
 * next link cannot fit is a 414, never an answer that reads as the last page.
 */
describe('pagination links for long queries', () => {
  let t: TestApp;
  let port: number;

  /** A GET with Node's own client and its default header limit, as gitbeaker would read the answer. */
  const fetchList = (query: string) =>
    new Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: string }>(
      (resolve, reject) => {
        const req = httpGet(
          { host: '127.0.0.1', port, path: `/api/v4/projects?${query}`, headers: { 'PRIVATE-TOKEN': t.rootToken } },
          (res) => {
            let body = '';
            res.setEncoding('utf8');
            res.on('data', (c: string) => (body += c));
            res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
          },
        );
        req.on('error', reject);
      },
    );
  const rels = (link: unknown) => [...String(link ?? '').matchAll(/rel="(\w+)"/g)].map((m) => m[1]);

  beforeAll(async () => {
    t = await startTestApp();
    await t.app.listen(0, '127.0.0.1');
    port = (t.app.getHttpServer().address() as AddressInfo).port;
    for (let i = 0; i < 3; i++)
      await t
        .http()
        .post('/api/v4/projects')
        .set('PRIVATE-TOKEN', t.rootToken)
        .send({ name: `listed-${i}` });
  });
  afterAll(() => t.close());

  it('keeps every link for an ordinary query', async () => {
    const res = await fetchList('per_page=1&page=2&search=listed');
    expect(res.status).toBe(200);
    expect(rels(res.headers.link)).toEqual(['prev', 'next', 'first', 'last']);
  });

  it('keeps rel="next" first and drops what does not fit, so a Node client can read the answer', async () => {
    const pad = 'a'.repeat(5000);
    const res = await fetchList(`per_page=1&page=2&pad=${pad}`);
    expect(res.status).toBe(200);
    expect(JSON.parse(res.body)).toHaveLength(1);
    expect(rels(res.headers.link)).toEqual(['next']);
    expect(Buffer.byteLength(String(res.headers.link))).toBeLessThanOrEqual(LINK_HEADER_BUDGET);
    // The link still carries the whole query, so following it asks for the same list.
    expect(String(res.headers.link)).toContain(`pad=${pad}`);
    expect(res.headers['x-next-page']).toBe('3');
  });

  it('answers 414 when even the next link cannot fit, rather than a page that reads as the last', async () => {
    const res = await fetchList(`per_page=1&page=1&pad=${'a'.repeat(9000)}`);
    expect(res.status).toBe(414);
    expect(JSON.parse(res.body)).toEqual({ message: '414 Request-URI Too Large' });
    expect(res.headers.link).toBeUndefined();
  });

  it('answers the last page of such a query without the links that do not fit', async () => {
    const res = await fetchList(`per_page=100&pad=${'a'.repeat(9000)}`);
    expect(res.status).toBe(200);
    expect(res.headers.link).toBeUndefined();
    expect(res.headers['x-next-page']).toBe('');
  });
});
