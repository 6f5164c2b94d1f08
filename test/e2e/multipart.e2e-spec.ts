import { readdirSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { createUser, type SeededUser } from '../support/seed';
import { startTestApp, type TestApp } from '../support/test-app';

const BOUNDARY = 'lode-test-boundary';

/** A multipart body: the given fields, then a file part of `fileBytes` bytes made as it is read. */
function multipartBody(fields: Record<string, string>, file?: { field: string; name: string; bytes: number }) {
  const head = Object.entries(fields)
    .map(([k, v]) => `--${BOUNDARY}\r\nContent-Disposition: form-data; name="${k}"\r\n\r\n${v}\r\n`)
    .join('');
  const fileHead = file
    ? `--${BOUNDARY}\r\nContent-Disposition: form-data; name="${file.field}"; filename="${file.name}"\r\nContent-Type: application/octet-stream\r\n\r\n`
    : '';
  const tail = `${file ? '\r\n' : ''}--${BOUNDARY}--\r\n`;
  const total = Buffer.byteLength(head) + Buffer.byteLength(fileHead) + (file?.bytes ?? 0) + Buffer.byteLength(tail);
  let left = file?.bytes ?? 0;
  let sent = 0;
  const chunk = Buffer.alloc(64 * 1024, 0x61);
  const stream = new Readable({
    read() {
      if (sent === 0) {
        sent += Buffer.byteLength(head) + Buffer.byteLength(fileHead);
        this.push(head + fileHead);
        return;
      }
      if (left > 0) {
        const piece = chunk.subarray(0, Math.min(chunk.length, left));
        left -= piece.length;
        sent += piece.length;
        this.push(piece);
        return;
      }
      if (left === 0) {
        left = -1;
        sent += Buffer.byteLength(tail);
        this.push(tail);
        this.push(null);
      }
    },
  });
  return { stream, total, sent: () => sent };
}

interface Answer {
  status: number;
  body: string;
  /** Bytes of the request body the client had handed over when the answer came. */
  sentAtAnswer: number;
  total: number;
}

describe('multipart bodies', () => {
  let t: TestApp;
  let port: number;
  let user: SeededUser;
  const tmpFiles = () => readdirSync(join(t.config.dataDir, 'tmp'));

  function send(
    method: string,
    path: string,
    fields: Record<string, string>,
    file?: { field: string; name: string; bytes: number },
    headers: Record<string, string> = {},
  ): Promise<Answer> {
    const body = multipartBody(fields, file);
    return new Promise((resolve, reject) => {
      const req = httpRequest(
        {
          host: '127.0.0.1',
          port,
          method,
          path,
          headers: {
            'Content-Type': `multipart/form-data; boundary=${BOUNDARY}`,
            // `chunked: 1` sends no length (Transfer-Encoding: chunked): the limits hold while reading too.
            ...(headers.chunked ? {} : { 'Content-Length': String(body.total) }),
            ...headers,
          },
        },
        (res) => {
          const sentAtAnswer = body.sent();
          let text = '';
          res.setEncoding('utf8');
          res.on('data', (c: string) => (text += c));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text, sentAtAnswer, total: body.total }));
        },
      );
      // The server may close the connection before the body is sent: that is the point.
      req.on('error', (err: NodeJS.ErrnoException) => {
        if (err.code !== 'EPIPE' && err.code !== 'ECONNRESET') reject(err);
      });
      body.stream.pipe(req);
    });
  }

  beforeAll(async () => {
    t = await startTestApp({ maxUploadBytes: 256 * 1024 });
    await t.app.listen(0, '127.0.0.1');
    port = (t.app.getHttpServer().address() as AddressInfo).port;
    user = await createUser(t);
  });
  afterAll(() => t.close());

  it('still reads multipart fields as parameters on every route', async () => {
    const r = await send('POST', '/api/v4/projects', { name: 'From a form' }, undefined, {
      'PRIVATE-TOKEN': user.token,
    });
    expect(r.status).toBe(201);
    expect(JSON.parse(r.body)).toMatchObject({ name: 'From a form' });
  });

  it('writes no file to disk for a route that takes none, and refuses the file part', async () => {
    // POST /projects takes a file since project avatars; POST /groups takes none.
    const r = await send('POST', '/api/v4/groups', { name: 'x' }, { field: 'file', name: 'a.bin', bytes: 1000 });
    expect(r.status).toBe(400);
    expect(tmpFiles()).toEqual([]);
  });

  it('refuses an anonymous upload to a route that takes files before reading it, and closes the connection', async () => {
    const r = await send(
      'POST',
      '/api/v4/users',
      { name: 'x' },
      { field: 'avatar', name: 'a.png', bytes: 64 * 1024 * 1024 },
    );
    expect(r.status).toBe(401);
    expect(r.sentAtAnswer).toBeLessThan(r.total / 2);
    expect(tmpFiles()).toEqual([]);
  });

  it('stops an authenticated upload at LODE_MAX_UPLOAD_BYTES while it streams: 413, the rest never read', async () => {
    const r = await send(
      'PUT',
      `/api/v4/users/${user.id}`,
      { name: 'Renamed' },
      { field: 'avatar', name: 'big.png', bytes: 64 * 1024 * 1024 },
      { 'PRIVATE-TOKEN': t.rootToken },
    );
    expect(r.status).toBe(413);
    expect(JSON.parse(r.body)).toEqual({ message: '413 Request Entity Too Large' });
    expect(r.sentAtAnswer).toBeLessThan(r.total / 2);
    // The refused upload leaves nothing behind, and the user is unchanged.
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(tmpFiles()).toEqual([]);
    const after = await t.http().get(`/api/v4/users/${user.id}`).set('PRIVATE-TOKEN', t.rootToken);
    expect(after.body.name).not.toBe('Renamed');
  });

  it('stops a chunked upload without a length at the limit too', async () => {
    const r = await send(
      'PUT',
      `/api/v4/users/${user.id}`,
      { name: 'Renamed' },
      { field: 'avatar', name: 'big.png', bytes: 64 * 1024 * 1024 },
      { 'PRIVATE-TOKEN': t.rootToken, chunked: '1' },
    );
    expect(r.status).toBe(413);
    expect(r.sentAtAnswer).toBeLessThan(r.total / 2);
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(tmpFiles()).toEqual([]);
  });

  it('stops a chunked fields-only body past 1 MB while reading it', async () => {
    const r = await send(
      'POST',
      '/api/v4/projects',
      { name: 'x', description: 'd'.repeat(8 * 1024 * 1024) },
      undefined,
      {
        'PRIVATE-TOKEN': user.token,
        chunked: '1',
      },
    );
    expect(r.status).toBe(413);
  });

  it('refuses a fields-only body above 1 MB by its length, without reading it', async () => {
    const r = await send(
      'POST',
      '/api/v4/projects',
      { name: 'x', description: 'd'.repeat(2 * 1024 * 1024) },
      undefined,
      {
        'PRIVATE-TOKEN': user.token,
      },
    );
    expect(r.status).toBe(413);
  });

  it('accepts an administrator’s avatar within the limit', async () => {
    const r = await send(
      'PUT',
      `/api/v4/users/${user.id}`,
      { name: 'With avatar' },
      { field: 'avatar', name: 'small.png', bytes: 1024 },
      { 'PRIVATE-TOKEN': t.rootToken },
    );
    expect(r.status).toBe(200);
    expect(JSON.parse(r.body)).toMatchObject({ name: 'With avatar' });
    expect(JSON.parse(r.body).avatar_url).toMatch(/\/uploads\/-\/system\/user\/avatar\/\d+\/small\.png$/);
    expect(tmpFiles()).toEqual([]);
  });
});
