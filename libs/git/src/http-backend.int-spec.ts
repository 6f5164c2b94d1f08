import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { join } from 'node:path';
import { Readable, Writable } from 'node:stream';
import { gitOk, tempDirs } from '../../../test/support/git';
import { serveGitHttp } from './http-backend';
import { spawnFromHelper, stopSpawnHelper } from './spawn-helper';

/** A response whose client takes each chunk a millisecond after the last: git's output queues behind it. */
class SlowResponse extends Writable {
  headersSent = false;
  statusCode = 0;
  readonly chunks: Buffer[] = [];
  constructor() {
    super({ highWaterMark: 1024 });
  }
  writeHead(status: number): this {
    this.statusCode = status;
    this.headersSent = true;
    return this;
  }
  override _write(chunk: Buffer, _encoding: BufferEncoding, done: (err?: Error) => void): void {
    this.chunks.push(chunk);
    setTimeout(done, 1);
  }
}

const pkt = (line: string) => `${(line.length + 4).toString(16).padStart(4, '0')}${line}`;

/**
 * The spawn helper reports a child's exit as soon as its socket ends, while output the response has
 * not taken yet can still be buffered in this process: the answer must end only after all of it.
 */
describe('serveGitHttp to a slow client, git started by the spawn helper', () => {
  const tmp = tempDirs();
  let bare: string;
  let tip: string;

  beforeAll(async () => {
    const work = tmp.make();
    bare = join(tmp.make(), 'r.git');
    await gitOk(['init', '-q', '-b', 'master', work]);
    writeFileSync(join(work, 'noise.bin'), randomBytes(2 * 1024 * 1024));
    await gitOk(['add', '.'], work);
    await gitOk(['commit', '-q', '-m', 'noise'], work);
    await gitOk(['clone', '-q', '--bare', work, bare]);
    tip = (await gitOk(['rev-parse', 'HEAD'], work)).trim();
  });
  afterAll(() => {
    stopSpawnHelper();
    tmp.removeAll();
  });

  it('sends the whole pack, which indexes', async () => {
    const body = `${pkt('command=fetch\n')}0001${pkt('no-progress\n')}${pkt(`want ${tip}\n`)}${pkt('done\n')}0000`;
    const req = Object.assign(Readable.from([Buffer.from(body)]), {
      url: '/r.git/git-upload-pack',
      method: 'POST',
      headers: { 'content-type': 'application/x-git-upload-pack-request', 'git-protocol': 'version=2' },
      socket: { remoteAddress: '127.0.0.1' },
    }) as unknown as IncomingMessage;
    const res = new SlowResponse();
    const finished = new Promise<void>((resolve, reject) => {
      res.on('finish', resolve);
      res.on('error', reject);
    });
    serveGitHttp(req, res as unknown as ServerResponse, bare, 'git-upload-pack', '', {}, undefined, spawnFromHelper);
    await finished;
    expect(res.statusCode).toBe(200);
    const answer = Buffer.concat(res.chunks);
    const pack: Buffer[] = [];
    let at = answer.indexOf('packfile\n') + 'packfile\n'.length;
    let flushed = false;
    while (at + 4 <= answer.length) {
      const size = parseInt(answer.subarray(at, at + 4).toString(), 16);
      if (size === 0) {
        flushed = true;
        break;
      }
      if (answer[at + 4] === 1) pack.push(answer.subarray(at + 5, at + size));
      at += size;
    }
    expect(flushed).toBe(true);
    const into = join(tmp.make(), 'fetched.git');
    await gitOk(['init', '-q', '--bare', into]);
    const indexed = spawnSync('git', ['index-pack', '--stdin'], { cwd: into, input: Buffer.concat(pack) });
    expect(indexed.stderr.toString()).toBe('');
    expect(spawnSync('git', ['cat-file', '-e', `${tip}^{tree}`], { cwd: into }).status).toBe(0);
  });

  it("answers 404 where the repository is gone from the disk, as git http-backend's enter_repo does", async () => {
    const req = Object.assign(Readable.from([]), {
      url: '/gone.git/info/refs?service=git-upload-pack',
      method: 'GET',
      headers: {},
      socket: { remoteAddress: '127.0.0.1' },
    }) as unknown as IncomingMessage;
    const res = new SlowResponse();
    const finished = new Promise<void>((resolve) => res.on('finish', resolve));
    serveGitHttp(
      req,
      res as unknown as ServerResponse,
      join(tmp.make(), 'gone.git'),
      'info/refs',
      '',
      {},
      undefined,
      spawnFromHelper,
    );
    await finished;
    expect(res.statusCode).toBe(404);
    expect(Buffer.concat(res.chunks).toString()).toBe('Repository not found\n');
  });
});
