import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, statSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { ArchiveDamaged, TarReader, TarWriter } from './tar';

describe('the backup tar', () => {
  let dir: string;
  beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'lode-tar-'))));
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  const long = `repositories/@hashed/ab/cd/${'e'.repeat(64)}.git.bundle`;
  const unicode = 'data/uploads/@projects/1/0123/résumé – ünïcödé.txt';
  const veryLong = `data/uploads/${'x'.repeat(180)}/${'y'.repeat(120)}.png`;

  async function write(path: string): Promise<Record<string, Buffer>> {
    const contents: Record<string, Buffer> = {
      'lode-backup.json': Buffer.from('{"format":1}\n'),
      [long]: randomBytes(70_000),
      [unicode]: Buffer.from('hello\n'),
      [veryLong]: Buffer.alloc(0),
      'data/secret.key': Buffer.from('k'.repeat(64)),
    };
    const tar = await TarWriter.create(path);
    await tar.addBuffer('lode-backup.json', contents['lode-backup.json']);
    await tar.addStream(long, Readable.from([contents[long].subarray(0, 1000), contents[long].subarray(1000)]));
    await tar.addBuffer(unicode, contents[unicode], { mode: 0o640, mtime: 1_700_000_000 });
    await tar.addStream(veryLong, Readable.from([]));
    // A stream failing half-way leaves nothing of its entry behind.
    async function* failing() {
      yield Buffer.from('partial data');
      throw new Error('source went away');
    }
    await expect(tar.addStream('data/failed', failing())).rejects.toThrow('source went away');
    await tar.addBuffer('data/secret.key', contents['data/secret.key'], { mode: 0o600 });
    await tar.finish();
    return contents;
  }

  it('reads back what it wrote: names of any length and script, sizes, modes, and no failed entry', async () => {
    const path = join(dir, 'a.tar');
    const contents = await write(path);
    const reader = await TarReader.open(path);
    expect(reader.entries.map((e) => e.name)).toEqual(Object.keys(contents));
    for (const e of reader.entries) expect((await reader.read(e)).equals(contents[e.name])).toBe(true);
    expect(reader.entries.find((e) => e.name === unicode)).toMatchObject({ mode: 0o640, mtime: 1_700_000_000 });
    expect(reader.entries.find((e) => e.name === 'data/secret.key')?.mode).toBe(0o600);
    await reader.close();
  });

  it('is a tar archive stock tar lists and extracts', async () => {
    const path = join(dir, 'a.tar');
    const contents = await write(path);
    const listed = execFileSync('tar', ['-tf', path], { encoding: 'utf8' }).trim().split('\n');
    expect(listed).toEqual(Object.keys(contents));
    const out = join(dir, 'out');
    execFileSync('mkdir', [out]);
    execFileSync('tar', ['-xf', path, '-C', out]);
    expect(readFileSync(join(out, long)).equals(contents[long])).toBe(true);
    expect(readFileSync(join(out, unicode), 'utf8')).toBe('hello\n');
    expect(statSync(join(out, veryLong)).size).toBe(0);
  });

  it('refuses an archive cut short, a damaged header, and a file that is no archive', async () => {
    const path = join(dir, 'a.tar');
    await write(path);
    const size = statSync(path).size;
    for (const cut of [size - 1024, 70_000, 600, 100]) {
      const copy = join(dir, `cut-${cut}.tar`);
      writeFileSync(copy, readFileSync(path));
      truncateSync(copy, cut);
      await expect(TarReader.open(copy)).rejects.toThrow(ArchiveDamaged);
    }
    const damaged = readFileSync(path);
    damaged[10] ^= 0xff; // inside the first header's name
    writeFileSync(join(dir, 'damaged.tar'), damaged);
    await expect(TarReader.open(join(dir, 'damaged.tar'))).rejects.toThrow(/checksum/);
    writeFileSync(join(dir, 'text.tar'), 'not an archive at all\n'.repeat(100));
    await expect(TarReader.open(join(dir, 'text.tar'))).rejects.toThrow(ArchiveDamaged);
  });
});
