import { createHash, randomBytes } from 'node:crypto';
import { mkdtemp, readdir, readFile, rm, stat } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  cleanFileName,
  receiveUpload,
  servingHeaders,
  type StoredUpload,
  UploadMalformed,
  UploadMissing,
  UploadTooLarge,
  uploadMarkdown,
} from './upload-store';

describe('cleanFileName', () => {
  it.each([
    ['../../etc/passwd', 'passwd'],
    ['a\\b.txt', 'b.txt'],
    ['C:\\Users\\me\\report.pdf', 'report.pdf'],
    ['a\0b.txt', 'ab.txt'],
    ['line\r\nbreak\x7f.txt', 'linebreak.txt'],
    ['..', 'file'],
    ['.', 'file'],
    ['...', 'file'],
    ['dir/..', 'file'],
    ['.bashrc', 'bashrc'],
    ['...hidden.txt', 'hidden.txt'],
    ['. .env', 'env'],
    ['a..b.txt', 'a.b.txt'],
    ['', 'file'],
    ['/', 'file'],
    ['\0', 'file'],
    ['  spaced name.txt  ', 'spaced name.txt'],
    ['café 日本.png', 'café 日本.png'],
    ['👩‍💻.png', '👩‍💻.png'],
    ['invoice\u202Efdp.exe', 'invoicefdp.exe'],
  ])('%j becomes %j', (name, expected) => {
    expect(cleanFileName(name)).toBe(expected);
  });

  it('keeps names to 255 bytes without splitting a character, keeping the extension', () => {
    const cleaned = cleanFileName(`${'é'.repeat(200)}.png`);
    expect(Buffer.byteLength(cleaned)).toBeLessThanOrEqual(255);
    expect(Buffer.byteLength(cleaned)).toBeGreaterThan(250);
    expect(cleaned).toMatch(/^é+\.png$/);
    expect(cleanFileName('a'.repeat(255))).toBe('a'.repeat(255));
    expect(cleanFileName('a'.repeat(300))).toBe('a'.repeat(255));
  });
});

describe('uploadMarkdown', () => {
  it('embeds images, with the name less its extension as alt text', () => {
    expect(uploadMarkdown('screen shot.png', '/uploads/abc/screen%20shot.png')).toEqual({
      alt: 'screen shot',
      url: '/uploads/abc/screen%20shot.png',
      markdown: '![screen shot](/uploads/abc/screen%20shot.png)',
    });
    expect(uploadMarkdown('photo.JPEG', '/u').markdown).toBe('![photo](/u)');
    for (const ext of ['jpg', 'gif', 'bmp', 'tiff', 'ico'])
      expect(uploadMarkdown(`x.${ext}`, '/u').markdown).toBe('![x](/u)');
  });

  it('links everything else by its full name', () => {
    expect(uploadMarkdown('report.pdf', '/u')).toEqual({ alt: 'report.pdf', url: '/u', markdown: '[report.pdf](/u)' });
    expect(uploadMarkdown('logo.svg', '/u').markdown).toBe('[logo.svg](/u)');
    expect(uploadMarkdown('README', '/u').markdown).toBe('[README](/u)');
    expect(uploadMarkdown('日本.txt', '/u').markdown).toBe('[日本.txt](/u)');
  });

  it('escapes `]` in the link text, as GitLab does', () => {
    expect(uploadMarkdown('d]k.png', '/u')).toEqual({ alt: 'd]k', url: '/u', markdown: '![d\\]k](/u)' });
  });
});

describe('servingHeaders', () => {
  const always = { 'X-Content-Type-Options': 'nosniff', 'Content-Security-Policy': "default-src 'none'; sandbox" };

  it('shows raster images inline', () => {
    expect(servingHeaders('a.png')).toEqual({
      ...always,
      'Content-Type': 'image/png',
      'Content-Disposition': `inline; filename="a.png"; filename*=UTF-8''a.png`,
    });
    expect(servingHeaders('b.JPG')['Content-Type']).toBe('image/jpeg');
    for (const name of ['c.gif', 'd.bmp', 'e.tiff', 'f.ico', 'g.webp', 'h.jpeg']) {
      expect(servingHeaders(name)['Content-Disposition']).toMatch(/^inline;/);
    }
  });

  it.each(['logo.svg', 'page.html', 'page.htm', 'feed.xml', 'app.js', 'x.xhtml', 'blob.xyz', 'README', 'img.png.html'])(
    'never shows %j inline nor with an active type',
    (name) => {
      const headers = servingHeaders(name);
      expect(headers).toMatchObject(always);
      expect(headers['Content-Disposition']).toMatch(/^attachment; filename=".*"; filename\*=UTF-8''/);
      expect(headers['Content-Type']).toBe('application/octet-stream');
    },
  );

  it('keeps passive types, still as attachments', () => {
    expect(servingHeaders('notes.txt')).toMatchObject({ 'Content-Type': 'text/plain; charset=utf-8' });
    expect(servingHeaders('doc.pdf')).toMatchObject({ 'Content-Type': 'application/pdf' });
    expect(servingHeaders('doc.pdf')['Content-Disposition']).toMatch(/^attachment;/);
  });

  it('gives UTF-8 names as an ASCII fallback plus an exact filename*', () => {
    const headers = servingHeaders('résumé "日本".pdf');
    expect(headers['Content-Disposition']).toBe(
      `attachment; filename="r_sum_ ____.pdf"; filename*=UTF-8''r%C3%A9sum%C3%A9%20%22%E6%97%A5%E6%9C%AC%22.pdf`,
    );
    expect(decodeURIComponent(headers['Content-Disposition'].split("UTF-8''")[1])).toBe('résumé "日本".pdf');
  });

  it('produces values Node accepts as headers whatever the name', () => {
    const headers = servingHeaders('a\r\nSet-Cookie: x=1\0\\.png');
    for (const [name, value] of Object.entries(headers))
      expect(() => http.validateHeaderValue(name, value)).not.toThrow();
  });
});

describe('receiveUpload', () => {
  interface Outcome {
    upload?: StoredUpload;
    error?: Error & { status?: number };
    /** Whether the server had read the whole request body when receiveUpload settled. */
    complete: boolean;
  }

  const BOUNDARY = 'lode-test-boundary-7f3a';
  let server: http.Server;
  let url: string;
  let dir: string;
  let maxBytes: number;
  const waiting: Array<(outcome: Outcome) => void> = [];

  /** The result of the next request the server handles; ask before sending it. */
  function nextOutcome(): Promise<Outcome> {
    return new Promise((resolve) => waiting.push(resolve));
  }

  beforeAll(async () => {
    server = http.createServer((req, res) => {
      receiveUpload(req, { dir, maxBytes })
        .then(
          (upload): Outcome => ({ upload, complete: req.complete }),
          (error: Outcome['error']): Outcome => ({ error, complete: req.complete }),
        )
        .then((outcome) => {
          waiting.shift()?.(outcome);
          res.writeHead(outcome.upload ? 201 : (outcome.error?.status ?? 500), { Connection: 'close' }).end();
        });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  });

  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'lode-uploads-'));
    maxBytes = 1024 * 1024;
    waiting.length = 0; // a test that failed mid-request must not take the next test's outcome
  });

  afterEach(async () => {
    server.closeAllConnections();
    await rm(dir, { recursive: true, force: true });
  });

  async function postForm(form: FormData): Promise<Outcome> {
    const outcome = nextOutcome();
    await fetch(url, { method: 'POST', body: form }).then(
      (res) => res.arrayBuffer(),
      () => undefined,
    );
    return outcome;
  }

  /** Sends a body as is, with Content-Length, or chunked when `chunked` is set; network errors are the server's choice to hang up. */
  function sendRaw(
    body: Buffer | Buffer[],
    headers: Record<string, string | number> = {},
    chunked = false,
  ): http.ClientRequest {
    const chunks = Array.isArray(body) ? body : [body];
    const req = http.request(url, {
      method: 'POST',
      headers: {
        'Content-Type': `multipart/form-data; boundary=${BOUNDARY}`,
        ...(chunked ? { 'Transfer-Encoding': 'chunked' } : { 'Content-Length': Buffer.concat(chunks).length }),
        ...headers,
      },
    });
    req.on('error', () => undefined);
    req.on('response', (res) => res.resume());
    for (const chunk of chunks) req.write(chunk);
    req.end();
    return req;
  }

  async function postRaw(
    body: Buffer | Buffer[],
    headers: Record<string, string | number> = {},
    chunked = false,
  ): Promise<Outcome> {
    const outcome = nextOutcome();
    sendRaw(body, headers, chunked);
    return outcome;
  }

  function partHead(disposition: string, contentType?: string): Buffer {
    const lines = [`--${BOUNDARY}`, `Content-Disposition: form-data; ${disposition}`];
    if (contentType) lines.push(`Content-Type: ${contentType}`);
    return Buffer.from(`${lines.join('\r\n')}\r\n\r\n`);
  }

  function part(disposition: string, content: Buffer | string, contentType?: string): Buffer {
    return Buffer.concat([partHead(disposition, contentType), Buffer.from(content), Buffer.from('\r\n')]);
  }

  const END = Buffer.from(`--${BOUNDARY}--\r\n`);

  async function entries(): Promise<string[]> {
    return readdir(dir, { recursive: true });
  }

  describe('storing', () => {
    it('writes exactly the bytes sent to <dir>/<32 hex secret>/<name>', async () => {
      const content = randomBytes(300 * 1024);
      const form = new FormData();
      form.append('file', new Blob([content], { type: 'application/octet-stream' }), 'data.bin');

      const { upload, error } = await postForm(form);

      expect(error).toBeUndefined();
      expect(upload).toEqual({
        secret: expect.stringMatching(/^[0-9a-f]{32}$/),
        filename: 'data.bin',
        size: content.length,
        path: expect.any(String),
      });
      expect(upload!.path).toBe(join(dir, upload!.secret, 'data.bin'));
      expect((await readFile(upload!.path)).equals(content)).toBe(true);
      expect(await entries()).toEqual([upload!.secret, join(upload!.secret, 'data.bin')].sort());
    });

    it('gives every upload its own secret', async () => {
      const secrets = new Set<string>();
      for (let i = 0; i < 3; i++) {
        const form = new FormData();
        form.append('file', new Blob(['same']), 'same.txt');
        secrets.add((await postForm(form)).upload!.secret);
      }
      expect(secrets.size).toBe(3);
    });

    it.each([
      ['../../etc/passwd', 'passwd'],
      ['a\\b.txt', 'b.txt'],
      ['..', 'file'],
      ['.htaccess', 'htaccess'],
      ['café 日本.txt', 'café 日本.txt'],
    ])('stores a part named %j as %j', async (sent, stored) => {
      const { upload } = await postRaw(
        Buffer.concat([part(`name="file"; filename="${sent}"`, 'hello', 'text/plain'), END]),
      );
      expect(upload?.filename).toBe(stored);
      expect(await readFile(join(dir, upload!.secret, stored), 'utf8')).toBe('hello');
    });

    // A raw NUL is not legal in a quoted header value; the RFC 5987 form can still carry one.
    it.each([
      ["UTF-8''a%00b.txt", 'ab.txt'],
      ["UTF-8''..%2F..%2Fetc%2Fpasswd", 'passwd'],
      ["UTF-8''%E6%97%A5%E6%9C%AC.png", '日本.png'],
    ])('stores a part with filename*=%s as %j', async (sent, stored) => {
      const { upload } = await postRaw(Buffer.concat([part(`name="file"; filename*=${sent}`, 'hello'), END]));
      expect(upload?.filename).toBe(stored);
      expect(await readFile(join(dir, upload!.secret, stored), 'utf8')).toBe('hello');
    });

    it('stores a file sent with an empty name as `file`', async () => {
      const form = new FormData();
      form.append('file', new Blob(['x']), '');
      const { upload } = await postForm(form);
      expect(upload?.filename).toBe('file');
    });

    it('takes a UTF-8 name from fetch unchanged', async () => {
      const form = new FormData();
      form.append('file', new Blob(['x'], { type: 'image/png' }), 'écran 日本.png');
      const { upload } = await postForm(form);
      expect(upload?.filename).toBe('écran 日本.png');
    });

    it('accepts a file part without a content type', async () => {
      const { upload, error } = await postRaw(
        Buffer.concat([part('name="file"; filename="plain.txt"', 'no type here'), END]),
      );
      expect(error).toBeUndefined();
      expect(await readFile(upload!.path, 'utf8')).toBe('no type here');
    });

    it('ignores other fields, such as the empty `avatar` python-gitlab sends', async () => {
      const form = new FormData();
      form.append('avatar', '');
      form.append('file', new Blob(['payload']), 'notes.txt');
      form.append('note', 'x'.repeat(5000));
      const { upload } = await postForm(form);
      expect(upload?.filename).toBe('notes.txt');
      expect(await readFile(upload!.path, 'utf8')).toBe('payload');
      expect(await entries()).toHaveLength(2);
    });

    it('ignores other file parts, and a second `file`', async () => {
      const body = Buffer.concat([
        part('name="avatar"; filename=""', '', 'application/octet-stream'),
        part('name="other"; filename="other.txt"', 'other'),
        part('name="file"; filename="first.txt"', 'first'),
        part('name="file"; filename="second.txt"', 'second'),
        END,
      ]);
      const { upload } = await postRaw(body);
      expect(upload?.filename).toBe('first.txt');
      expect(await entries()).toEqual([upload!.secret, join(upload!.secret, 'first.txt')].sort());
    });
  });

  describe('refusing', () => {
    it('rejects a body without a `file` part with UploadMissing', async () => {
      const form = new FormData();
      form.append('avatar', '');
      const { error } = await postForm(form);
      expect(error).toBeInstanceOf(UploadMissing);
      expect(error?.status).toBe(400);
      expect(await entries()).toEqual([]);
    });

    it('treats a `file` sent as a plain field (no file name) as missing', async () => {
      const { error } = await postRaw(Buffer.concat([part('name="file"', 'just text'), END]));
      expect(error).toBeInstanceOf(UploadMissing);
    });

    it.each([
      [
        'a body cut off inside the file',
        Buffer.concat([partHead('name="file"; filename="a.txt"'), Buffer.from('partial')]),
        {},
      ],
      ['a broken part header', Buffer.from(`--${BOUNDARY}\r\nContent-Disposition form-data\r\n`), {}],
      ['no closing boundary', part('name="file"; filename="a.txt"', 'abc'), {}],
      ['a raw NUL in the file name', Buffer.concat([part('name="file"; filename="a\0b.txt"', 'abc'), END]), {}],
      ['a multipart type without a boundary', END, { 'Content-Type': 'multipart/form-data' }],
      ['JSON', Buffer.from('{"file":"x"}'), { 'Content-Type': 'application/json' }],
    ])('rejects %s with a 400', async (_, body, headers) => {
      const { error } = await postRaw(body, headers);
      expect(error).toBeInstanceOf(UploadMalformed);
      expect(error?.status).toBe(400);
      expect(await entries()).toEqual([]);
    });

    it('cleans up when the client goes away mid-file', async () => {
      const outcome = nextOutcome();
      const req = http.request(url, {
        method: 'POST',
        headers: { 'Content-Type': `multipart/form-data; boundary=${BOUNDARY}` },
      });
      req.on('error', () => undefined);
      req.write(partHead('name="file"; filename="a.bin"'));
      req.write(randomBytes(64 * 1024));
      await waitFor(async () => (await entries()).length === 2);
      req.destroy();

      const { error, complete } = await outcome;
      expect(complete).toBe(false);
      expect(error).toBeInstanceOf(UploadMalformed);
      expect(await entries()).toEqual([]);
    });
  });

  describe('size limit', () => {
    beforeEach(() => {
      maxBytes = 64 * 1024;
    });

    function chunkedFile(size: number): Buffer[] {
      const content = randomBytes(size);
      // Several writes, so the limit is crossed mid-stream rather than in the first chunk.
      const pieces = [partHead('name="file"; filename="big.bin"')];
      for (let at = 0; at < size; at += 10_000) pieces.push(content.subarray(at, at + 10_000));
      return [...pieces, Buffer.from('\r\n'), END];
    }

    it('accepts a file of exactly maxBytes', async () => {
      const { upload, error } = await postRaw(chunkedFile(maxBytes), {}, true);
      expect(error).toBeUndefined();
      expect(upload?.size).toBe(maxBytes);
      expect((await stat(upload!.path)).size).toBe(maxBytes);
    });

    it('rejects maxBytes + 1 sent without Content-Length, leaving nothing behind', async () => {
      const { error } = await postRaw(chunkedFile(maxBytes + 1), {}, true);
      expect(error).toBeInstanceOf(UploadTooLarge);
      expect(error?.status).toBe(413);
      expect(await entries()).toEqual([]);
    });

    it('rejects a far larger file while it streams, without reading it all', async () => {
      const outcome = nextOutcome();
      const req = http.request(url, {
        method: 'POST',
        headers: { 'Content-Type': `multipart/form-data; boundary=${BOUNDARY}` },
      });
      req.on('error', () => undefined);
      req.write(partHead('name="file"; filename="big.bin"'));
      req.write(randomBytes(maxBytes * 2)); // and never end: only an early rejection settles this

      const { error, complete } = await outcome;
      req.destroy();
      expect(error).toBeInstanceOf(UploadTooLarge);
      expect(complete).toBe(false);
      expect(await entries()).toEqual([]);
    });

    it('rejects extra parts that push a chunked body past the limit', async () => {
      const junk = Array.from({ length: 10 }, (_, i) => part(`name="junk${i}"; filename="j.bin"`, randomBytes(10_000)));
      const { error } = await postRaw([...junk, part('name="file"; filename="a.txt"', 'a'), END], {}, true);
      expect(error).toBeInstanceOf(UploadTooLarge);
      expect(await entries()).toEqual([]);
    });

    it('rejects on a Content-Length over the limit before the body is sent', async () => {
      const outcome = nextOutcome();
      const req = http.request(url, {
        method: 'POST',
        headers: { 'Content-Type': `multipart/form-data; boundary=${BOUNDARY}`, 'Content-Length': 1024 ** 3 },
      });
      req.on('error', () => undefined);
      const status = new Promise<number | undefined>((resolve) => req.on('response', (res) => resolve(res.statusCode)));
      req.write(partHead('name="file"; filename="huge.bin"')); // a few bytes of the promised gigabyte

      const { error, complete } = await outcome;
      expect(error).toBeInstanceOf(UploadTooLarge);
      expect(complete).toBe(false);
      expect(await status).toBe(413);
      req.destroy();
      expect(await entries()).toEqual([]);
    });
  });

  describe('streaming', () => {
    it('writes a 20 MB upload to disk as it arrives, not after the body ends', async () => {
      maxBytes = 32 * 1024 * 1024;
      const chunk = randomBytes(1024 * 1024);
      const hash = createHash('sha256');
      const outcome = nextOutcome();
      const req = http.request(url, {
        method: 'POST',
        headers: { 'Content-Type': `multipart/form-data; boundary=${BOUNDARY}` },
      });
      req.on('error', () => undefined);
      const send = async (data: Buffer): Promise<void> => {
        if (!req.write(data)) await new Promise((resolve) => req.once('drain', resolve));
      };

      await send(partHead('name="file"; filename="twenty.bin"'));
      for (let i = 0; i < 10; i++) {
        hash.update(chunk);
        await send(chunk);
      }
      // The body is half sent and unfinished: a buffering parser would have written nothing yet.
      await waitFor(async () => (await sizeOnDisk()) >= 8 * 1024 * 1024);
      for (let i = 0; i < 10; i++) {
        hash.update(chunk);
        await send(chunk);
      }
      await send(Buffer.concat([Buffer.from('\r\n'), END]));
      req.end();

      const { upload, error } = await outcome;
      expect(error).toBeUndefined();
      expect(upload?.size).toBe(20 * 1024 * 1024);
      const written = createHash('sha256')
        .update(await readFile(upload!.path))
        .digest('hex');
      expect(written).toBe(hash.digest('hex'));
    });

    async function sizeOnDisk(): Promise<number> {
      const [secret] = await readdir(dir);
      if (!secret) return 0;
      const [name] = await readdir(join(dir, secret));
      return name ? (await stat(join(dir, secret, name))).size : 0;
    }
  });
});

/** Polls until `check` holds; a condition that never comes fails by the test's timeout. */
async function waitFor(check: () => Promise<boolean>): Promise<void> {
  while (!(await check())) await new Promise((resolve) => setTimeout(resolve, 10));
}
