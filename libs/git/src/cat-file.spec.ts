import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CatFilePool } from './cat-file';

const git = (repo: string, args: string[], input?: Buffer | string) =>
  execFileSync('git', args, { cwd: repo, input, maxBuffer: 1 << 26 })
    .toString()
    .trim();
const writeBlob = (repo: string, content: Buffer | string) => git(repo, ['hash-object', '-w', '--stdin'], content);

/** The git cat-file processes this test process has started. */
const catFileChildren = () => {
  try {
    return execFileSync('pgrep', ['-P', String(process.pid), '-f', 'cat-file'], { encoding: 'utf8' })
      .trim()
      .split('\n')
      .filter(Boolean);
  } catch {
    return [];
  }
};

describe('CatFilePool (long-lived git cat-file --batch-command)', () => {
  let repo: string;
  let pool: CatFilePool;
  const large = Buffer.alloc(3 * 1024 * 1024 + 17, 7);
  const blobs: Record<string, string> = {};

  beforeAll(() => {
    repo = mkdtempSync(join(tmpdir(), 'lode-cat-file-'));
    git(repo, ['init', '-q', '--bare']);
    blobs.small = writeBlob(repo, 'hello\n');
    blobs.empty = writeBlob(repo, '');
    blobs.binary = writeBlob(repo, Buffer.from([0, 1, 2, 10, 10, 0]));
    blobs.large = writeBlob(repo, large);
    blobs.tree = git(repo, ['mktree'], `100644 blob ${blobs.small}\tREADME\n`);
  });
  beforeEach(() => {
    pool = new CatFilePool(4, 60_000);
  });
  afterEach(() => pool.closeAll());
  afterAll(() => rmSync(repo, { recursive: true, force: true }));

  it('answers type and size, and undefined for a missing object', async () => {
    expect(await pool.info(repo, blobs.small)).toEqual({ sha: blobs.small, type: 'blob', size: 6 });
    expect(await pool.info(repo, blobs.tree)).toMatchObject({ type: 'tree' });
    expect(await pool.info(repo, '0'.repeat(40))).toBeUndefined();
    expect(await pool.contents(repo, '0'.repeat(40))).toBeUndefined();
  });

  it('answers many commands sent at once in order, each with its own bytes, through one process', async () => {
    const asked = Array.from({ length: 30 }, (_, i) => ['small', 'empty', 'binary', 'large'][i % 4]);
    const answers = await Promise.all(asked.map((name) => pool.contents(repo, blobs[name])));
    const expected: Record<string, Buffer> = {
      small: Buffer.from('hello\n'),
      empty: Buffer.alloc(0),
      binary: Buffer.from([0, 1, 2, 10, 10, 0]),
      large,
    };
    answers.forEach((a, i) => {
      expect(a?.header.sha).toBe(blobs[asked[i]]);
      expect(Buffer.compare(a!.content, expected[asked[i]])).toBe(0);
    });
    expect(catFileChildren()).toHaveLength(1);
  });

  it('finds objects written after the process started', async () => {
    expect(await pool.info(repo, blobs.small)).toBeDefined();
    const later = writeBlob(repo, `written at ${Date.now()}\n`);
    expect((await pool.contents(repo, later))?.content.toString()).toMatch(/^written at/);
  });

  it('fails the callers of a process that dies, and starts another for the next call', async () => {
    expect(await pool.info(repo, blobs.small)).toBeDefined();
    const [pid] = catFileChildren();
    const pending = pool.contents(repo, blobs.large);
    process.kill(Number(pid), 'SIGKILL');
    // Either the answer was complete before the kill, or the caller hears the failure: never a hang.
    await pending.then(
      (a) => expect(a?.content.length).toBe(large.length),
      (err: Error) => expect(err.message).toMatch(/cat-file/),
    );
    await new Promise((r) => setTimeout(r, 50));
    expect(await pool.info(repo, blobs.small)).toEqual({ sha: blobs.small, type: 'blob', size: 6 });
  });

  it('keeps at most `max` processes, ending the least recently used', async () => {
    const repos = Array.from({ length: 6 }, () => {
      const r = mkdtempSync(join(tmpdir(), 'lode-cat-file-'));
      git(r, ['init', '-q', '--bare']);
      return r;
    });
    try {
      for (const r of repos) expect(await pool.info(r, '0'.repeat(40))).toBeUndefined();
      await new Promise((r) => setTimeout(r, 100));
      expect(catFileChildren().length).toBeLessThanOrEqual(4);
    } finally {
      pool.closeAll();
      for (const r of repos) rmSync(r, { recursive: true, force: true });
    }
  });
});
