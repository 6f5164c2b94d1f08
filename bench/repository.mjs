// The benchmark's synthetic repository, the same on every run: made with `git fast-import` from a
// seeded generator. 5,000 commits on master over 2,000 files (one directory of 1,800 entries), a
// branch `topic` that leaves master 200 commits before its tip and adds 200 commits of its own,
// the two sides touching about 550 files, and one 100 MB blob. Pushed to Lode over git's HTTP.
import { execFile, spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { prng } from './dataset.mjs';

export const REPO_SIZES = {
  full: { commits: 5000, files: 2000, bigDir: 1800, branchCommits: 200, hugeBlobMb: 100 },
  quick: { commits: 600, files: 2000, bigDir: 1800, branchCommits: 200, hugeBlobMb: 10 },
};

const run = (cmd, args, opts = {}) =>
  new Promise((resolve, reject) =>
    execFile(cmd, args, { maxBuffer: 1 << 28, ...opts }, (err, stdout, stderr) =>
      err ? reject(new Error(`${cmd} ${args.join(' ')}: ${stderr}`)) : resolve(stdout),
    ),
  );

function* stream(size) {
  const random = prng(5000);
  const path = (i) =>
    i < size.bigDir ? `big/file-${String(i).padStart(4, '0')}.txt` : `src/mod-${i % 20}/file-${i}.ts`;
  const content = (i, v) => `file ${i} version ${v}\n${'line\n'.repeat(1 + (i % 40))}`;
  const versions = new Array(size.files).fill(0);
  const authors = Array.from({ length: 25 }, (_, i) => `Author ${i} <author${i}@example.com>`);
  let mark = 0;
  let when = 1_600_000_000;
  const data = (s) => `data ${Buffer.byteLength(s)}\n${s}\n`;
  const commit = (ref, parent, message, changes, author) => {
    mark += 1;
    when += 60;
    let out = `commit ${ref}\nmark :${mark}\nauthor ${author} ${when} +0000\ncommitter ${author} ${when} +0000\n${data(message)}`;
    if (parent) out += `from ${parent}\n`;
    for (const i of changes) {
      versions[i] += 1;
      out += `M 100644 inline ${path(i)}\n${data(content(i, versions[i]))}`;
    }
    return out;
  };
  const pick = (n) => Array.from({ length: n }, () => Math.floor(random() * size.files));
  // A 4 KB file beside the generated ones, for the small raw blob workload.
  yield `${commit(
    'refs/heads/master',
    null,
    'initial import',
    Array.from({ length: size.files }, (_, i) => i),
    authors[0],
  )}M 100644 inline docs/4k.txt\n${data('x'.repeat(4095) + '\n')}`;
  let branchPoint = 0;
  for (let c = 1; c < size.commits; c++) {
    yield commit(
      'refs/heads/master',
      `:${mark}`,
      `change ${c}`,
      pick(1 + Math.floor(random() * 2)),
      authors[Math.floor(random() * authors.length)],
    );
    if (c === size.commits - size.branchCommits - 1) branchPoint = mark;
  }
  const masterTip = mark;
  let parent = `:${branchPoint}`;
  for (let c = 0; c < size.branchCommits; c++) {
    yield commit('refs/heads/topic', parent, `topic ${c}`, pick(3), authors[Math.floor(random() * authors.length)]);
    parent = `:${mark}`;
  }
  // The large blob last, on master, so the history above stays small.
  yield `commit refs/heads/master\nmark :${mark + 1}\nauthor ${authors[1]} ${when + 60} +0000\ncommitter ${authors[1]} ${when + 60} +0000\n${data('add the large blob')}from :${masterTip}\nM 100644 inline blobs/huge.bin\ndata ${size.hugeBlobMb * 1024 * 1024}\n`;
}

/** Builds the repository in a temporary bare repository and returns its path. */
export async function makeRepository(size) {
  const dir = mkdtempSync(join(tmpdir(), 'lode-bench-repo-'));
  await run('git', ['init', '-q', '--bare', '-b', 'master', dir]);
  const child = spawn('git', ['fast-import', '--quiet'], { cwd: dir, stdio: ['pipe', 'ignore', 'inherit'] });
  const done = new Promise((resolve, reject) =>
    child.on('close', (code) => (code === 0 ? resolve() : reject(new Error(`fast-import ${code}`)))),
  );
  const write = (s) =>
    new Promise((resolve) => (child.stdin.write(s) ? resolve() : child.stdin.once('drain', resolve)));
  const random = prng(100);
  for (const chunk of stream(size)) await write(chunk);
  // 100 MB of incompressible bytes, from the seeded generator, 1 MB at a time.
  for (let m = 0; m < size.hugeBlobMb; m++) {
    const buf = Buffer.alloc(1024 * 1024);
    for (let i = 0; i < buf.length; i += 4) buf.writeUInt32LE(Math.floor(random() * 0xffffffff), i);
    await write(buf);
  }
  await write('\n');
  child.stdin.end();
  await done;
  return dir;
}

/** Pushes every branch of `source` to a Lode project over HTTP with root's token. */
export async function pushRepository(source, origin, pathWithNamespace, token) {
  const url = `${origin.replace('://', `://root:${token}@`)}/${pathWithNamespace}.git`;
  await run('git', ['-c', 'http.postBuffer=524288000', 'push', '-q', url, 'refs/heads/*:refs/heads/*'], {
    cwd: source,
  });
}

export { run };
