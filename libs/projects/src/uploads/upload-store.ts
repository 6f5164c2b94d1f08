import busboy from 'busboy';
import { randomBytes } from 'node:crypto';
import { createWriteStream, type WriteStream } from 'node:fs';
import { mkdir, rm } from 'node:fs/promises';
import type { IncomingMessage } from 'node:http';
import { extname, join } from 'node:path';
import { pipeline } from 'node:stream/promises';

/** A project upload on disk: `path` is `<dir>/<secret>/<filename>`. */
export interface StoredUpload {
  secret: string;
  filename: string;
  size: number;
  path: string;
}

/** The file (or the whole body) is over the limit: 413. */
export class UploadTooLarge extends Error {
  readonly status = 413;
  constructor(message = 'File is too large') {
    super(message);
    this.name = 'UploadTooLarge';
  }
}

/** The body has no `file` part: GitLab answers 400 `file is missing`. */
export class UploadMissing extends Error {
  readonly status = 400;
  constructor(message = 'file is missing') {
    super(message);
    this.name = 'UploadMissing';
  }
}

/** Not a multipart body we can read (bad content type, broken framing, body cut short): 400. */
export class UploadMalformed extends Error {
  readonly status = 400;
  constructor(message: string) {
    super(message);
    this.name = 'UploadMalformed';
  }
}

/** Room for boundaries, part headers, the file name and small extra fields such as python-gitlab's empty `avatar`. */
export const MULTIPART_OVERHEAD = 16 * 1024;
const MAX_NAME_BYTES = 255;
/** GitLab 10.x's UploaderHelper::IMAGE_EXT: these are embedded with `![alt](url)`. */
const MARKDOWN_IMAGES = new Set(['png', 'jpg', 'jpeg', 'gif', 'bmp', 'tiff', 'ico']);
/** Raster images are the only uploads a browser may render in place: they cannot run script. */
const INLINE_TYPES: Record<string, string> = {
  png: 'image/png',
  jpg: 'image/jpeg',
  jpeg: 'image/jpeg',
  gif: 'image/gif',
  bmp: 'image/bmp',
  tiff: 'image/tiff',
  ico: 'image/x-icon',
  webp: 'image/webp',
};
/**
 * Passive formats keep their type but are still downloaded. Active ones (svg, html, xml, js, ...) are left out on
 * purpose so they are served as application/octet-stream, which no browser renders.
 */
const ATTACHMENT_TYPES: Record<string, string> = {
  txt: 'text/plain; charset=utf-8',
  log: 'text/plain; charset=utf-8',
  csv: 'text/csv; charset=utf-8',
  json: 'application/json',
  pdf: 'application/pdf',
  zip: 'application/zip',
  gz: 'application/gzip',
  tar: 'application/x-tar',
  mp3: 'audio/mpeg',
  mp4: 'video/mp4',
  mov: 'video/quicktime',
  webm: 'video/webm',
};

/**
 * A name that is safe as one path segment: no directories, separators, `..`, NUL or control characters, no
 * leading dots (no hidden files), at most 255 UTF-8 bytes, never empty.
 */
export function cleanFileName(name: string): string {
  const base = name.split(/[\\/]/).pop() ?? '';
  const cleaned = base
    // Control characters, and the bidi marks that make `gnp.exe` display as `exe.png`.
    .replace(/[\p{Cc}\u200e\u200f\u202a-\u202e\u2066-\u2069]/gu, '')
    .replace(/\.{2,}/g, '.')
    .replace(/^[.\s]+/, '')
    .trim();
  return truncateUtf8(cleaned, MAX_NAME_BYTES) || 'file';
}

/** Cuts whole characters from the end of the stem, keeping a short extension since it decides how the file is served. */
function truncateUtf8(name: string, maxBytes: number): string {
  if (Buffer.byteLength(name) <= maxBytes) return name;
  const ext = extname(name);
  const keep = Buffer.byteLength(ext) <= 16 ? ext : '';
  const budget = maxBytes - Buffer.byteLength(keep);
  let stem = '';
  let bytes = 0;
  for (const ch of name.slice(0, name.length - keep.length)) {
    bytes += Buffer.byteLength(ch);
    if (bytes > budget) break;
    stem += ch;
  }
  return stem + keep;
}

function extension(filename: string): string {
  return extname(filename).slice(1).toLowerCase();
}

/** GitLab's `alt`, `url` and `markdown` for an upload. */
export function uploadMarkdown(filename: string, url: string): { alt: string; url: string; markdown: string } {
  const image = MARKDOWN_IMAGES.has(extension(filename));
  const alt = image ? filename.slice(0, filename.length - extname(filename).length) : filename;
  // As GitLab does: a `]` in the name would otherwise end the link text early.
  const link = `[${alt.replaceAll(']', '\\]')}](${url})`;
  return { alt, url, markdown: image ? `!${link}` : link };
}

/**
 * Response headers for serving an upload. Uploads are user content on our origin, so anything but a raster image
 * is an attachment, nothing is sniffed, and the sandbox CSP stops script even if a browser renders it anyway.
 */
export function servingHeaders(filename: string): Record<string, string> {
  const ext = extension(filename);
  const inline = INLINE_TYPES[ext];
  return {
    'Content-Type': inline ?? ATTACHMENT_TYPES[ext] ?? 'application/octet-stream',
    'Content-Disposition': contentDisposition(inline ? 'inline' : 'attachment', filename),
    'X-Content-Type-Options': 'nosniff',
    'Content-Security-Policy': "default-src 'none'; sandbox",
  };
}

/** RFC 6266: an ASCII `filename` for old clients, the exact UTF-8 name in `filename*`. */
function contentDisposition(type: 'inline' | 'attachment', filename: string): string {
  const fallback = filename.replace(/[^\x20-\x7e]|["\\]/g, '_');
  let encoded = '';
  for (const byte of Buffer.from(filename, 'utf8')) {
    const ch = String.fromCharCode(byte);
    encoded += /[A-Za-z0-9!#$&+.^_`|~-]/.test(ch) ? ch : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return `${type}; filename="${fallback}"; filename*=UTF-8''${encoded}`;
}

/**
 * Streams the multipart part named `file` (or `opts.field`) to `<dir>/<secret>/<clean name>`. Other parts are
 * skipped. Rejects with UploadTooLarge as soon as the file passes `maxBytes` (nothing is left on disk), UploadMissing
 * without a file part, UploadMalformed for a body that is not readable multipart.
 *
 * On rejection the rest of the body is left unread: answer with `Connection: close` rather than draining it.
 */
const noop = (): void => undefined;

export async function receiveUpload(
  req: IncomingMessage,
  opts: { dir: string; maxBytes: number; field?: string },
): Promise<StoredUpload> {
  const field = opts.field ?? 'file';
  const maxBody = opts.maxBytes + MULTIPART_OVERHEAD;
  // Refuse on the headers alone, so the client gets its 413 without sending the body.
  if (Number(req.headers['content-length']) > maxBody) throw new UploadTooLarge();
  // A body parser that ran first (multer) would leave nothing to read, and we would wait forever.
  if (req.readableEnded) throw new Error('the request body has already been read');

  let parser: busboy.Busboy;
  try {
    parser = busboy({
      headers: req.headers,
      // Clients send raw UTF-8 file names; busboy's default (latin1) would turn `café` into `cafÃ©`.
      defParamCharset: 'utf8',
      // busboy reports its limit when the file *reaches* it, so ask for one byte more: reaching that means too large.
      // Field values are ignored, so there is no reason to buffer much of them.
      limits: { fileSize: opts.maxBytes + 1, fieldSize: 1024 },
    });
  } catch (err) {
    throw new UploadMalformed((err as Error).message);
  }

  const secret = randomBytes(16).toString('hex');
  const secretDir = join(opts.dir, secret);

  return new Promise<StoredUpload>((resolve, reject) => {
    let settled = false;
    let file: busboy.FileStream | undefined;
    let stored: Promise<StoredUpload> | undefined;
    let out: WriteStream | undefined;
    let received = 0;

    const fail = (err: unknown): void => {
      if (settled) return;
      settled = true;
      req.unpipe(parser);
      parser.destroy();
      file?.destroy();
      // Only once the write stream has closed can the partial file not reappear after we remove it. It is
      // destroyed here rather than left to the pipeline, which does not always hear of the part's end.
      out?.destroy();
      const written =
        out && !out.closed ? new Promise<void>((done) => out!.once('close', () => done())) : Promise.resolve();
      // The part's writer may still be creating the directory (its mkdir in flight): removing before that
      // ends would let the directory appear afterwards, so wait for the writer to give up first.
      const writer = stored ? stored.then(noop, noop) : Promise.resolve();
      void Promise.all([written, writer])
        .then(() => rm(secretDir, { recursive: true, force: true }))
        .then(
          () => reject(err),
          () => reject(err),
        );
    };

    parser.on('file', (name, stream, info) => {
      // busboy errors a part's stream when the body is cut off or we abort; the parser and pipeline report that,
      // and an unheard 'error' here would crash the process.
      stream.on('error', () => undefined);
      if (name !== field || file || settled) {
        stream.resume(); // not ours: discard it
        return;
      }
      file = stream;
      // busboy emits 'limit' in the middle of its own write and goes on touching the part afterwards:
      // tearing the parser down there makes it throw, so fail on the next turn.
      stream.on('limit', () => setImmediate(() => fail(new UploadTooLarge())));
      const filename = cleanFileName(info.filename ?? '');
      const path = join(secretDir, filename);
      stored = (async () => {
        await mkdir(secretDir, { recursive: true });
        if (settled) throw new Error('upload abandoned');
        out = createWriteStream(path, { flags: 'wx' });
        const target = out;
        try {
          await pipeline(stream, target);
        } catch (err) {
          // busboy fails the part when the body ends inside it: the client's fault, not the disk's.
          throw stream.errored ? new UploadMalformed((stream.errored as Error).message) : err;
        } finally {
          if (!target.closed) await new Promise<void>((done) => target.once('close', () => done()));
        }
        return { secret, filename, size: target.bytesWritten, path };
      })();
      stored.catch(fail);
    });

    // 'finish' comes once the whole body is parsed and every file part has ended.
    parser.on('finish', () => {
      if (!stored) return fail(new UploadMissing());
      stored.then((upload) => {
        if (settled) return;
        // The limit's own failure waits a turn (see 'limit'); a part cut at the limit is never stored.
        if (file?.truncated) return fail(new UploadTooLarge());
        settled = true;
        resolve(upload);
      }, fail);
    });
    parser.on('error', (err: Error) => fail(new UploadMalformed(err.message)));

    // Without Content-Length (chunked) only counting bounds the body; junk parts could otherwise go on without end.
    req.on('data', (chunk: Buffer) => {
      received += chunk.length;
      if (received > maxBody) fail(new UploadTooLarge());
    });
    req.on('error', (err) => fail(new UploadMalformed(err.message)));
    req.on('close', () => {
      if (!req.complete) fail(new UploadMalformed('the request body ended early'));
    });
    req.pipe(parser);
  });
}
