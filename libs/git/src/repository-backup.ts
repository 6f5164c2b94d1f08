import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { Readable } from 'node:stream';
import { runCommand } from './command-runner';
import { exists, writeCommitGraph } from './git-cli';
import { trackProcess } from './process-gauges';

/*
 * What a backup needs of a bare repository, and how a restore puts one back: the refs travel as a
 * `git bundle` (all refs and the objects they reach, one consistent ref listing even while pushes
 * run), the rest (HEAD, the repository's config, its object format) as plain text beside it.
 */

/** A repository's parts that a bundle does not carry. */
export interface RepositoryDescription {
  /** The HEAD file's text: `ref: refs/heads/<default branch>` (or a commit id when detached). */
  head: string;
  /** The repository's own `config` file (Lode sets `http.receivepack` there). */
  config: string;
  /** `sha1` or `sha256`. */
  objectFormat: string;
  /** How many refs it holds; 0: an empty repository, which `git bundle` refuses. */
  refs: number;
}

async function git(args: string[], cwd?: string): Promise<string> {
  return (await runCommand('git', args, cwd)).stdout.toString();
}

/** The repository's HEAD, config, object format and ref count; undefined when it does not exist. */
export async function describeRepository(path: string): Promise<RepositoryDescription | undefined> {
  if (!(await exists(path))) return undefined;
  const [head, config, objectFormat, refs] = await Promise.all([
    readFile(join(path, 'HEAD'), 'utf8'),
    readFile(join(path, 'config'), 'utf8'),
    git(['rev-parse', '--show-object-format'], path),
    git(['for-each-ref', '--format=%(refname)'], path),
  ]);
  return {
    head: head.trim(),
    config,
    objectFormat: objectFormat.trim() || 'sha1',
    refs: refs.split('\n').filter(Boolean).length,
  };
}

/**
 * `git bundle create - --all`, streamed: every ref (branches, tags, anything else under refs/, and
 * HEAD) with the objects they reach, as git listed them at one moment. `done` rejects with git's
 * message when it fails (as it does for a repository without refs).
 */
export function bundleRepository(path: string): { stream: Readable; done: Promise<void> } {
  const child = trackProcess(
    // Blobs over 1 MB are not tried as deltas (packed ones keep theirs): for loose large blobs the
    // delta search was most of the time, 17 s instead of 3.5 s for 100 MB (measured).
    spawn('git', ['-c', 'core.bigFileThreshold=1m', 'bundle', 'create', '--quiet', '-', '--all'], {
      cwd: path,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, GIT_TERMINAL_PROMPT: '0' },
    }),
  );
  const stderr: Buffer[] = [];
  child.stderr.on('data', (chunk: Buffer) => stderr.push(chunk));
  const done = new Promise<void>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code, signal) => {
      if (code === 0) resolve();
      else
        reject(
          new Error(
            `git bundle create in ${path} failed (${code ?? signal}): ${Buffer.concat(stderr).toString().trim()}`,
          ),
        );
    });
  });
  return { stream: child.stdout, done };
}

/**
 * Puts a repository back at `path` (which must not exist): an empty bare repository of the same
 * object format and config, then every ref of the bundle fetched into it as it was (`refs/*`, tags
 * included), then HEAD as it was. Built beside the target under a `*.git.tmp-*` name (which Lode
 * removes if a crash leaves it) and renamed in, so a failure never leaves a half-restored
 * repository under the real name. `bundle` is a file (git reads bundles from files only); without
 * one the repository had no refs. Answers how many refs it now holds.
 */
export async function restoreRepository(
  path: string,
  description: Pick<RepositoryDescription, 'head' | 'config' | 'objectFormat'>,
  bundle?: string,
): Promise<number> {
  if (await exists(path)) throw new Error(`${path} exists already`);
  if (!/^(sha1|sha256)$/.test(description.objectFormat))
    throw new Error(`unknown object format ${description.objectFormat}`);
  await mkdir(dirname(path), { recursive: true });
  const tmp = `${path}.tmp-${randomBytes(4).toString('hex')}`;
  try {
    await git(['init', '--quiet', '--bare', `--object-format=${description.objectFormat}`, tmp]);
    await writeFile(join(tmp, 'config'), description.config);
    if (bundle) {
      await git(['bundle', 'verify', '--quiet', bundle], tmp);
      await git(['fetch', '--quiet', '--no-write-fetch-head', bundle, '+refs/*:refs/*'], tmp);
      // The bundle's one pack comes without the source's commit-graph, which history walks read
      // (see writeCommitGraph). Only a speed-up: a restore that cannot write it goes on without, and
      // the next push past COMMITS_TO_GRAPH commits, a repack or housekeeping writes it.
      await writeCommitGraph(tmp).catch(() => false);
    }
    await writeFile(join(tmp, 'HEAD'), `${description.head}\n`);
    const refs = (await git(['for-each-ref', '--format=%(refname)'], tmp)).split('\n').filter(Boolean).length;
    await rename(tmp, path);
    return refs;
  } finally {
    await rm(tmp, { recursive: true, force: true });
  }
}
