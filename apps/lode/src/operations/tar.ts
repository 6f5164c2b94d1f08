import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import { Readable } from 'node:stream';

/*
 * A small POSIX tar (ustar, with pax headers for long or non-ASCII names) written and read on a
 * file handle, so a backup is one file that stock `tar` lists and extracts. The writer seeks: an
 * entry whose size is not known in advance (a bundle streamed from git) gets a header that is
 * rewritten once its data is in, and an entry that failed half-way is cut off again. Sizes of 8 GiB
 * and more use the base-256 size field GNU tar and bsdtar read.
 */

const BLOCK = 512;
const ZEROS = Buffer.alloc(BLOCK * 2);
/** The largest size the 11 octal digits of a ustar header hold. */
const MAX_OCTAL_SIZE = 8 ** 11 - 1;

export interface EntryOptions {
  mode?: number;
  /** Seconds since the epoch. */
  mtime?: number;
}

/** What was written for one entry: its name, size and SHA-256 (kept in the manifest). */
export interface WrittenEntry {
  name: string;
  size: number;
  sha256: string;
}

/** A file entry found in an archive: its data lies at `offset` for `size` bytes. */
export interface TarEntry {
  name: string;
  size: number;
  offset: number;
  mode: number;
  mtime: number;
}

/** The archive is not a tar file, or was cut short, or a header was altered. */
export class ArchiveDamaged extends Error {}

function octal(target: Buffer, offset: number, length: number, value: number): void {
  target.write(value.toString(8).padStart(length - 1, '0') + '\0', offset, length, 'ascii');
}

/** `name` (≤ 100 bytes) and `prefix` (≤ 155) as ustar splits a path, or undefined when it cannot. */
function ustarName(path: string): { name: string; prefix: string } | undefined {
  if (!/^[\x20-\x7e]+$/.test(path)) return undefined;
  if (path.length <= 100) return { name: path, prefix: '' };
  for (let cut = path.indexOf('/'); cut >= 0; cut = path.indexOf('/', cut + 1)) {
    const prefix = path.slice(0, cut);
    const name = path.slice(cut + 1);
    if (prefix.length <= 155 && name.length <= 100 && name.length > 0) return { name, prefix };
  }
  return undefined;
}

function header(
  name: string,
  prefix: string,
  size: number,
  type: string,
  { mode = 0o644, mtime = 0 }: EntryOptions,
): Buffer {
  const h = Buffer.alloc(BLOCK);
  h.write(name, 0, 100, 'utf8');
  octal(h, 100, 8, mode & 0o7777);
  octal(h, 108, 8, 0);
  octal(h, 116, 8, 0);
  if (size <= MAX_OCTAL_SIZE) octal(h, 124, 12, size);
  else {
    // base-256: the high bit of the first byte set, the size big-endian in the rest of the field
    h[124] = 0x80;
    let rest = BigInt(size);
    for (let i = 135; i > 124; i--) {
      h[i] = Number(rest & 0xffn);
      rest >>= 8n;
    }
  }
  octal(h, 136, 12, Math.max(0, Math.floor(mtime)));
  h.write('        ', 148, 8, 'ascii');
  h.write(type, 156, 1, 'ascii');
  h.write('ustar\u000000', 257, 8, 'ascii');
  h.write(prefix, 345, 155, 'utf8');
  let sum = 0;
  for (const byte of h) sum += byte;
  h.write(sum.toString(8).padStart(6, '0') + '\0 ', 148, 8, 'ascii');
  return h;
}

/** One pax record, `<length> <key>=<value>\n`, whose length counts itself. */
function paxRecord(key: string, value: string): string {
  const body = ` ${key}=${value}\n`;
  let length = Buffer.byteLength(body) + 1;
  while (String(length).length + Buffer.byteLength(body) !== length) length += 1;
  return `${length}${body}`;
}

const padding = (size: number): number => (BLOCK - (size % BLOCK)) % BLOCK;

/** Writes a tar file from start to end; `finish` adds the end-of-archive blocks and syncs it to disk. */
export class TarWriter {
  private position = 0;

  private constructor(private readonly file: FileHandle) {}

  /** Creates `path`; fails when it exists. */
  static async create(path: string): Promise<TarWriter> {
    return new TarWriter(await open(path, 'wx', 0o600));
  }

  get bytes(): number {
    return this.position;
  }

  private async write(data: Buffer): Promise<void> {
    let done = 0;
    while (done < data.length) {
      const { bytesWritten } = await this.file.write(data, done, data.length - done, this.position + done);
      done += bytesWritten;
    }
    this.position += data.length;
  }

  /** The headers naming `path`: a pax header first when ustar cannot hold the name. */
  private headers(path: string, size: number, options: EntryOptions): Buffer {
    const split = ustarName(path);
    if (split) return header(split.name, split.prefix, size, '0', options);
    const pax = Buffer.from(paxRecord('path', path), 'utf8');
    // What a reader without pax support sees instead: the last segment, made ASCII and short.
    const fallback = (path.split('/').pop() ?? 'entry').replace(/[^\x20-\x7e]/g, '_').slice(-99) || 'entry';
    return Buffer.concat([
      header('PaxHeader/entry', '', pax.length, 'x', options),
      pax,
      Buffer.alloc(padding(pax.length)),
      header(fallback, '', size, '0', options),
    ]);
  }

  async addBuffer(name: string, data: Buffer, options: EntryOptions = {}): Promise<WrittenEntry> {
    await this.write(this.headers(name, data.length, options));
    await this.write(data);
    await this.write(Buffer.alloc(padding(data.length)));
    return { name, size: data.length, sha256: createHash('sha256').update(data).digest('hex') };
  }

  /**
   * An entry whose data comes from a stream of unknown length: the header is written with size 0,
   * the data after it, then the header again with the real size. When the stream fails the entry
   * is cut off and the archive is as it was before.
   */
  async addStream(name: string, source: AsyncIterable<Buffer>, options: EntryOptions = {}): Promise<WrittenEntry> {
    const start = this.position;
    const placeholder = this.headers(name, 0, options);
    await this.write(placeholder);
    const hash = createHash('sha256');
    let size = 0;
    try {
      for await (const chunk of source) {
        hash.update(chunk);
        size += chunk.length;
        await this.write(chunk);
      }
    } catch (err) {
      await this.cutBackTo(start);
      throw err;
    }
    await this.write(Buffer.alloc(padding(size)));
    const real = this.headers(name, size, options);
    await this.file.write(real, 0, real.length, start);
    return { name, size, sha256: hash.digest('hex') };
  }

  /**
   * Removes everything written from `position` (a `bytes` read before an entry began) on: an entry
   * whose content turned out bad after it was written (its producer failed at the end) leaves no trace.
   */
  async cutBackTo(position: number): Promise<void> {
    await this.file.truncate(position);
    this.position = position;
  }

  async finish(): Promise<void> {
    await this.write(ZEROS);
    await this.file.sync();
    await this.file.close();
  }

  /** Closes the file without ending the archive (the caller removes it). */
  async abandon(): Promise<void> {
    await this.file.close().catch(() => undefined);
  }
}

function parseOctal(block: Buffer, offset: number, length: number): number {
  if (offset === 124 && block[124] & 0x80) {
    let value = 0n;
    for (let i = 125; i < 136; i++) value = (value << 8n) | BigInt(block[i]);
    return Number(value);
  }
  const text = block
    .toString('ascii', offset, offset + length)
    .replace(/\0.*$/s, '')
    .trim();
  if (!/^[0-7]*$/.test(text)) throw new ArchiveDamaged(`a tar header holds ${JSON.stringify(text)} for a number`);
  return text ? parseInt(text, 8) : 0;
}

function cString(block: Buffer, offset: number, length: number): string {
  const end = block.indexOf(0, offset);
  return block.toString('utf8', offset, end >= 0 && end < offset + length ? end : offset + length);
}

function checksumOk(block: Buffer): boolean {
  let sum = 0;
  for (let i = 0; i < BLOCK; i++) sum += i >= 148 && i < 156 ? 0x20 : block[i];
  return sum === parseOctal(block, 148, 8);
}

function parsePax(data: Buffer): Map<string, string> {
  const records = new Map<string, string>();
  let at = 0;
  while (at < data.length) {
    const space = data.indexOf(0x20, at);
    const length = parseInt(data.toString('ascii', at, space), 10);
    if (space < 0 || !Number.isInteger(length) || length <= 0 || at + length > data.length)
      throw new ArchiveDamaged('a pax header is malformed');
    const record = data.toString('utf8', space + 1, at + length - 1);
    const eq = record.indexOf('=');
    records.set(record.slice(0, eq), record.slice(eq + 1));
    at += length;
  }
  return records;
}

/** An archive opened for reading: the list of its file entries, each to be read or streamed. */
export class TarReader {
  private constructor(
    private readonly path: string,
    private readonly file: FileHandle,
    readonly size: number,
    readonly entries: TarEntry[],
  ) {}

  /**
   * Reads every header (not the data) and checks each one's checksum and that its data lies inside
   * the file; throws ArchiveDamaged when the file is not a tar archive, is cut short or has no end.
   */
  static async open(path: string): Promise<TarReader> {
    const file = await open(path, 'r');
    try {
      const { size } = await file.stat();
      const entries: TarEntry[] = [];
      const block = Buffer.alloc(BLOCK);
      let position = 0;
      let pax: Map<string, string> | undefined;
      for (;;) {
        if (position + BLOCK > size)
          throw new ArchiveDamaged(`the archive ends at byte ${size}, inside its entries: it was cut short`);
        await readExactly(file, block, position);
        if (block.every((b) => b === 0)) break;
        const what = position === 0 ? 'this is not a tar archive' : `the tar header at byte ${position} is damaged`;
        let entrySize: number;
        try {
          if (!checksumOk(block)) throw new ArchiveDamaged(`${what} (its checksum does not match)`);
          entrySize = parseOctal(block, 124, 12);
        } catch (err) {
          throw err instanceof ArchiveDamaged && err.message.startsWith(what) ? err : new ArchiveDamaged(what);
        }
        const type = String.fromCharCode(block[156] || 0x30);
        const offset = position + BLOCK;
        if (offset + entrySize > size)
          throw new ArchiveDamaged(`the archive ends at byte ${size}, inside an entry: it was cut short`);
        if (type === 'x') {
          const data = Buffer.alloc(entrySize);
          await readExactly(file, data, offset);
          pax = parsePax(data);
        } else {
          if (type === '0' || type === '7') {
            const prefix = cString(block, 345, 155);
            const name = cString(block, 0, 100);
            entries.push({
              name: pax?.get('path') ?? (prefix ? `${prefix}/${name}` : name),
              size: pax?.has('size') ? Number(pax.get('size')) : entrySize,
              offset,
              mode: parseOctal(block, 100, 8),
              mtime: parseOctal(block, 136, 12),
            });
          }
          pax = undefined;
        }
        position = offset + entrySize + padding(entrySize);
      }
      return new TarReader(path, file, size, entries);
    } catch (err) {
      await file.close();
      throw err;
    }
  }

  async read(entry: TarEntry): Promise<Buffer> {
    const data = Buffer.alloc(entry.size);
    await readExactly(this.file, data, entry.offset);
    return data;
  }

  stream(entry: TarEntry): Readable {
    if (entry.size === 0) return Readable.from([]);
    return createReadStream(this.path, { start: entry.offset, end: entry.offset + entry.size - 1 });
  }

  async close(): Promise<void> {
    await this.file.close();
  }
}

async function readExactly(file: FileHandle, target: Buffer, position: number): Promise<void> {
  let done = 0;
  while (done < target.length) {
    const { bytesRead } = await file.read(target, done, target.length - done, position + done);
    if (bytesRead === 0) throw new ArchiveDamaged(`the archive ends at byte ${position + done}: it was cut short`);
    done += bytesRead;
  }
}
