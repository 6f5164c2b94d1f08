import { LodeConfig } from '@app/platform';
import { Injectable, Logger, Optional, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import { createHash } from 'node:crypto';
import { readFile, stat } from 'node:fs/promises';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { join } from 'node:path';
import { ArchiveStore } from './archive-store';
import { CommitListCache } from './commit-lists';
import * as cli from './git-cli';
import {
  GitRepositories,
  type Archive,
  type ArchiveExtension,
  type BlameRange,
  type BlobInfo,
  type Branch,
  type CommitInfo,
  type CommitSignature,
  type CommitLogPage,
  type CommitLogQuery,
  type CommitStats,
  type CompareLimits,
  type Comparison,
  type Contributor,
  type FileDiff,
  type FileAtRef,
  type FastForward,
  type FileEntry,
  type GitHttpOptions,
  type NewCommit,
  type NewCherryPick,
  type NewRevert,
  type RevertOutcome,
  type NewTagObject,
  type GitPackIo,
  type GitPackOptions,
  type GitPackService,
  type GitPackSession,
  type HeldBlob,
  type RawBlob,
  type RefCommand,
  type RefName,
  type RefUpdate,
  type RepoRef,
  type RepositoryStatistics,
  type Tag,
  type TreeEntry,
} from './git-repositories';
import * as history from './history';
import { fail, header, NO_CACHE, serveGitHttp } from './http-backend';
import { requestedProtocolVersion, servePack } from './pack-service';
import { advertisedCapabilities, pktLine, receivePackAdvertisement } from './receive-pack-advertisement';
import { writeCherryPick, writeCommit, writeRevert, writeTagObject } from './nodegit-commits';
import { NodegitRepositories } from './nodegit-repositories';
import { RawBlobs } from './raw-blob';
import { RefUpdateHooks } from './ref-update-hooks';
import { describeRefUpdates, listRefs, PAYLOAD_COMMITS } from './ref-updates';
import { sizedFiles, tarOfDirectory, type SizedFile } from './repository-contents';
import type { Readable } from 'node:stream';
import { BUDGET_RETRY_AFTER_S, GitBudgetExceeded, GitWorkBudget, type GitWorkKind } from './work-budget';

/** Commit counts and last-commit lookups kept: both are keyed by immutable commit ids, so never stale. */
const HISTORY_CACHE = 1024;

/** Sets `key` last in `map` (its insertion order is its use order), dropping the oldest past `max`. */
function setBounded<K, V>(map: Map<K, V>, key: K, value: V, max: number): void {
  map.delete(key);
  map.set(key, value);
  if (map.size > max) map.delete(map.keys().next().value as K);
}

/** A small least-recently-used map of promises: callers arriving while the first one runs share its work. */
class PromiseCache<T> {
  private readonly entries = new Map<string, Promise<T>>();
  constructor(private readonly size: number) {}

  get(key: string, make: () => Promise<T>): Promise<T> {
    let value = this.entries.get(key);
    if (value) this.entries.delete(key);
    else {
      value = make();
      value.catch(() => this.entries.delete(key));
    }
    this.entries.set(key, value);
    while (this.entries.size > this.size) this.entries.delete(this.entries.keys().next().value as string);
    return value;
  }
}

/** Refs past which a push's advertisement is left to git (libgit2 looks each one up). */
const ADVERTISED_REFS_IN_PROCESS = 1000;
/** Probes of receive-pack's advertisement that may differ from Lode's before a process leaves them all to git. */
const PROBES_THAT_MAY_DIFFER = 3;
/**
 * Repository settings that change what receive-pack advertises; a repository whose config names
 * one (in any case, git's keys are case-insensitive) has its advertisement written by git.
 */
const ADVERTISEMENT_CONFIG = /objectformat|hiderefs|advertisepushoptions|advertiseatomic|certnonce|shallow|alternate/i;

/**
 * Commits of the default branch past which a history the commit-graph does not hold yet gets it
 * written, after the answer: a first push of a long history arrives as one pack, so no repack
 * (which writes the graph) would follow it. A walk of 1,000 commits without one takes some 7 ms.
 */
const COMMITS_TO_GRAPH = 1_000;

/** Loose objects past which the statistics start a repack (some 64 API commits' worth). */
const LOOSE_OBJECTS_TO_PACK = 256;
/** Packs past which they are rolled together (a geometric repack leaves a handful). */
const PACKS_TO_ROLL_UP = 16;

/** How long a half-built repository must have been left untouched before it counts as abandoned. */
const STALE_TEMPORARY_MS = 60_000;
/** How long another machine's unfinished creation is given before it counts as abandoned. */
const ABANDONED_CREATION_MS = 60 * 60_000;
/**
 * Repository directories remembered by project id (some 200 bytes each); past this many they are
 * all forgotten at once, as computing one again is cheap: the bound is what matters.
 */
const REMEMBERED_PATHS = 10_000;

/**
 * GitRepositories on the local data directory (`$LODE_DATA_DIR/repositories/@hashed/...`): reads
 * through libgit2 (nodegit), raw blobs through long-lived `git cat-file` processes, and the rest
 * through the git command line run from the command helper (see command-runner.ts), or streamed
 * (`git http-backend`, `git archive`) where the output is large.
 */
@Injectable()
export class LocalGitRepositories extends GitRepositories implements OnModuleInit, OnModuleDestroy {
  private readonly logger = new Logger('Git');
  private readonly reads: NodegitRepositories;
  private readonly rawBlobs: RawBlobs;
  private readonly archives: ArchiveStore;
  private readonly hooks: RefUpdateHooks;
  private readonly counts = new PromiseCache<number>(HISTORY_CACHE);
  /** Each project's repository directory, as `path` names it (bounded by REMEMBERED_PATHS). */
  private readonly paths = new Map<number, string>();
  /** Per repository, the branch tip whose commit count this process took last (a count is immutable per commit). */
  private readonly lastCounts = new Map<string, { tip: string; count: number }>();
  /** Per repository, the object store's size this process measured last, and when (`performance.now()`). */
  private readonly lastSizes = new Map<string, { bytes: number; at: number }>();
  /** receive-pack's capabilities, from the first advertisement git made for this process (and whether Lode's matches it). */
  private receivePackProbe?: Promise<{ capabilities: string } | 'failed' | 'differs'>;
  /** How many of those probes differed from Lode's advertisement. */
  private receivePackDiffered = 0;
  private readonly lastCommits = new PromiseCache<string | undefined>(HISTORY_CACHE);
  /** Background upkeep running (a repack, a commit-graph write), by repository path (one at a time each). */
  private readonly upkeep = new Map<string, Promise<void>>();
  /**
   * Per repository, the default branch's commit count when this process last had its commit-graph
   * written (or found one there): how far the history has grown past the graph since.
   */
  private readonly graphedCounts = new Map<string, number>();
  /** Walks' commit id lists (the commits API's pages), bounded by LODE_COMMIT_LIST_CACHE_BYTES. */
  private readonly commitLists: CommitListCache;

  /** The heavy git work budget (its own when none is injected, as in tests that build this class alone). */
  readonly budget: GitWorkBudget;

  constructor(
    private readonly config: LodeConfig,
    @Optional() budget?: GitWorkBudget,
  ) {
    super();
    this.budget = budget ?? new GitWorkBudget(config.gitBudget);
    const heavy = this.budget;
    this.archives = new ArchiveStore(config.dataDir, this.budget);
    this.commitLists = new CommitListCache(config.commitListCacheBytes);
    this.rawBlobs = new RawBlobs(config.blobCacheBytes);
    this.reads = new NodegitRepositories(
      config.commitCacheBytes,
      (walk) => heavy.run('walk', () => walk(heavy.settings.nice)),
      config.treeCacheBytes,
      join(config.dataDir, 'cache', 'empty.git'),
    );
    this.hooks = new RefUpdateHooks(config.dataDir, (objects, quarantine, pairs) =>
      this.reads.ancestry(objects, quarantine, pairs),
    );
  }

  /**
   * The pre-receive hook is in place and its port open before the first push; what a crash left
   * half-built beside the repositories (`*.git.tmp-*`) is removed: at once when its builder is a
   * process of this machine that is gone, else once it has been quiet for a minute.
   */
  async onModuleInit(): Promise<void> {
    await this.hooks.start();
    const removed = await cli.removeStaleTemporaries(this.config.dataDir, STALE_TEMPORARY_MS);
    if (removed.length)
      this.logger.log(`removed ${removed.length} half-built repositories left by a crash: ${removed.join(', ')}`);
  }

  private path(repo: RepoRef): string {
    // Every repository call names its directory, a hot read's included: a SHA-256 and a join each
    // time were 5 % of a kept raw blob's answer (PERF-8's profile), so the names are remembered.
    let path = this.paths.get(repo.projectId);
    if (path === undefined) {
      if (this.paths.size >= REMEMBERED_PATHS) this.paths.clear();
      path = cli.repositoryPath(this.config.dataDir, repo.projectId);
      this.paths.set(repo.projectId, path);
    }
    return path;
  }

  /*
   * The command helper is shared by every application in the process and unreferenced while idle,
   * so it neither keeps a stopping process alive nor is stopped here (another application in the
   * same process, as in the tests, may still use it); it exits with its parent.
   */
  async onModuleDestroy(): Promise<void> {
    this.rawBlobs.close();
    await this.upkeepDone();
    await this.hooks.close();
  }

  async init(repo: RepoRef, defaultBranch: string): Promise<void> {
    await cli.markCreating(this.config.dataDir, repo.projectId);
    await cli.initBare(this.path(repo), defaultBranch);
    this.reads.forget(this.path(repo));
  }

  settled(repo: RepoRef): Promise<void> {
    return cli.unmarkCreating(this.config.dataDir, repo.projectId);
  }

  abandonedCreations(): Promise<number[]> {
    return cli.abandonedCreations(this.config.dataDir, ABANDONED_CREATION_MS);
  }

  async cloneBare(source: RepoRef, target: RepoRef): Promise<void> {
    const from = this.path(source);
    if (!(await cli.exists(from))) throw new Error(`the source repository of project ${source.projectId} is missing`);
    await cli.cloneBare(from, this.path(target));
    this.reads.forget(this.path(target));
  }

  /**
   * Housekeeping may prune objects: this process's kept blobs of the repository go with it. (Another
   * process keeps its own until they fall out; git prunes only objects unreachable for two weeks.)
   */
  async gc(repo: RepoRef): Promise<void> {
    const path = this.path(repo);
    // After the repository's background upkeep, and counted as upkeep meanwhile: gc repacks and
    // rewrites the commit-graph whole, which a repack or graph write beside it would only repeat.
    // (Another process's writes are kept apart by the graph chain's lock, see cli.gc.)
    while (this.upkeep.has(path)) await this.upkeep.get(path);
    await this.inForeground(path, () => cli.gc(path));
    this.rawBlobs.forget(path);
  }

  async remove(repo: RepoRef): Promise<void> {
    this.reads.forget(this.path(repo));
    this.rawBlobs.forget(this.path(repo));
    await cli.removeRepository(this.path(repo));
    await cli.removeRepository(cli.archiveCachePath(this.config.dataDir, repo.projectId));
  }

  exists(repo: RepoRef): Promise<boolean> {
    return cli.exists(this.path(repo));
  }

  fsck(repo: RepoRef): Promise<string[]> {
    return cli.fsck(this.path(repo));
  }

  async strayRepositories(
    projectIds: readonly number[],
    formerProjectIds: readonly number[],
  ): Promise<{ path: string; projectId?: number }[]> {
    const known = new Set(projectIds.map((id) => cli.repositoryPath(this.config.dataDir, id)));
    const former = new Map(formerProjectIds.map((id) => [cli.repositoryPath(this.config.dataDir, id), id]));
    return (await cli.storedRepositories(this.config.dataDir))
      .filter((path) => !known.has(path))
      .map((path) => (former.has(path) ? { path, projectId: former.get(path) } : { path }));
  }

  leftoverTemporaries(olderThanMs: number): Promise<string[]> {
    return cli.leftoverTemporaries(this.config.dataDir, olderThanMs);
  }

  /**
   * GitLab's repository statistics: commits reachable from `branch` (0 while it does not exist) and
   * the object store's size. The count starts from the last one this process took of the repository
   * when the branch has only moved forward since (every API commit, most pushes), so recording a push
   * walks what the push added, not the whole history (30 ms at 1,000 loose commits, growing).
   */
  async statistics(
    repo: RepoRef,
    branch: string | null,
    refs?: Map<string, string>,
    fastForwards: FastForward[] = [],
    sizeMaxAgeMs = 0,
  ): Promise<RepositoryStatistics> {
    const path = this.path(repo);
    const [commitCount, repositorySize] = await Promise.all([
      branch === null ? 0 : this.commitCount(path, branch, refs, fastForwards),
      this.objectStoreSize(path, sizeMaxAgeMs),
    ]);
    if (commitCount > 0) this.graphWhenBehind(path, commitCount);
    return { commitCount, repositorySize };
  }

  /**
   * The object store's bytes: measured (`count-objects`, which also decides a repack), or the last
   * measure this process took of it when that is at most `maxAgeMs` old.
   */
  private async objectStoreSize(path: string, maxAgeMs: number): Promise<number> {
    const last = this.lastSizes.get(path);
    if (last && performance.now() - last.at <= maxAgeMs) return last.bytes;
    const at = performance.now();
    const store = await cli.objectStore(path);
    if (store.loose >= LOOSE_OBJECTS_TO_PACK || store.packs >= PACKS_TO_ROLL_UP) this.repackSoon(path);
    setBounded(this.lastSizes, path, { bytes: store.bytes, at }, HISTORY_CACHE);
    return store.bytes;
  }

  /**
   * GitLab's housekeeping after pushes (an incremental repack every 10 pushes), here when the
   * statistics show loose objects or packs piling up: one geometric repack per repository at a
   * time, after the answer (nothing waits for it), its failure only logged. The object store then
   * stays a few packs and under LOOSE_OBJECTS_TO_PACK loose objects however many pushes it took, so
   * a write's object lookups and the next statistics cost the same after 1,000 pushes as after one.
   */
  private repackSoon(path: string): void {
    this.inBackground(path, 'repack', async () => {
      try {
        await cli.repackIncrementally(path);
      } finally {
        // Packed, the store weighs less: the next statistics measure it again.
        this.lastSizes.delete(path);
      }
      // The packed commits join the commit-graph.
      await this.writeGraph(path);
    });
  }

  /**
   * Writes the commit-graph after the answer when the default branch holds COMMITS_TO_GRAPH commits
   * more than it does (a process that meets the repository first reads how many it holds).
   */
  private graphWhenBehind(path: string, commitCount: number): void {
    const graphed = this.graphedCounts.get(path);
    if (graphed !== undefined && commitCount - graphed < COMMITS_TO_GRAPH) {
      // A rewrite that shortened the history: what grows after it is counted from there.
      if (commitCount < graphed) setBounded(this.graphedCounts, path, commitCount, HISTORY_CACHE);
      return;
    }
    this.inBackground(path, 'commit-graph write', async () => {
      if (graphed === undefined) {
        const holds = await cli.commitGraphCommits(path);
        setBounded(this.graphedCounts, path, holds, HISTORY_CACHE);
        if (commitCount - holds < COMMITS_TO_GRAPH) return;
      }
      await this.writeGraph(path);
    });
  }

  /**
   * Adds the refs' new commits to the commit-graph and notes the default branch's count it now covers
   * (taken before the write: a push recorded meanwhile may not be in it). A write left to another
   * writer notes nothing, and one that failed notes the count anyway: the next try waits for
   * COMMITS_TO_GRAPH more commits instead of following every push.
   */
  private async writeGraph(path: string): Promise<void> {
    const covered = this.lastCounts.get(path)?.count;
    const noteCovered = () => {
      if (covered !== undefined) setBounded(this.graphedCounts, path, covered, HISTORY_CACHE);
    };
    let wrote: boolean;
    try {
      wrote = await cli.writeCommitGraph(path);
    } catch (err) {
      noteCovered();
      throw err;
    }
    if (wrote) noteCovered();
  }

  /** Runs `work` on the repository after the answer (nothing waits for it), one at a time per repository; its failure only logged. */
  private inBackground(path: string, what: string, work: () => Promise<void>): void {
    if (this.upkeep.has(path)) return;
    const run = work()
      .catch((err: unknown) => this.logger.warn(`${what} of ${path} failed: ${String(err)}`))
      .finally(() => {
        if (this.upkeep.get(path) === run) this.upkeep.delete(path);
      });
    this.upkeep.set(path, run);
  }

  /** Runs `work` on the repository now, counted as its upkeep meanwhile (no background upkeep starts beside it). */
  private async inForeground<T>(path: string, work: () => Promise<T>): Promise<T> {
    const run = work();
    const held = run.then(
      () => undefined,
      () => undefined,
    );
    this.upkeep.set(path, held);
    try {
      return await run;
    } finally {
      if (this.upkeep.get(path) === held) this.upkeep.delete(path);
    }
  }

  /** Waits for the background upkeep started so far (tests, shutdown). */
  async upkeepDone(): Promise<void> {
    await Promise.all([...this.upkeep.values()]);
  }

  private async commitCount(
    path: string,
    branch: string,
    refs: Map<string, string> | undefined,
    fastForwards: FastForward[],
  ): Promise<number> {
    const tip = refs ? refs.get(`refs/heads/${branch}`) : await cli.branchTip(path, branch);
    if (!tip) return 0;
    const last = this.lastCounts.get(path);
    let count: number | undefined;
    if (last?.tip === tip) count = last.count;
    else if (last) {
      const ahead = stepsForward(last.tip, tip, fastForwards) ?? (await cli.commitsAhead(path, last.tip, tip));
      if (ahead !== undefined) count = last.count + ahead;
    }
    count ??= await cli.countCommits(path, tip);
    setBounded(this.lastCounts, path, { tip, count }, HISTORY_CACHE);
    return count;
  }

  /*
   * From git (`symbolic-ref`), not libgit2: the push inspector and the git jobs, its main callers,
   * read HEAD right after git wrote it and use libgit2 for nothing else. The read API asks only for
   * a project without a default branch yet.
   */
  headBranch(repo: RepoRef): Promise<string | undefined> {
    return cli.headBranch(this.path(repo));
  }

  setHeadBranch(repo: RepoRef, branch: string): Promise<void> {
    return cli.setHeadBranch(this.path(repo), branch);
  }

  resolveCommit(repo: RepoRef, ref: string): Promise<CommitInfo | undefined> {
    return this.reads.resolveCommit(this.path(repo), ref);
  }

  commitSignature(repo: RepoRef, sha: string): Promise<CommitSignature | undefined> {
    return this.reads.commitSignature(this.path(repo), sha);
  }

  tree(repo: RepoRef, ref: string, path: string, recursive: boolean): Promise<TreeEntry[] | undefined> {
    return this.reads.tree(this.path(repo), ref, path, recursive);
  }

  blob(repo: RepoRef, sha: string): Promise<BlobInfo | undefined> {
    return this.reads.blob(this.path(repo), sha);
  }

  rawBlob(repo: RepoRef, sha: string): Promise<HeldBlob | RawBlob | undefined> {
    return this.rawBlobs.open(this.path(repo), sha);
  }

  keptBlob(repo: RepoRef, sha: string): HeldBlob | undefined {
    return this.rawBlobs.kept(this.path(repo), sha);
  }

  blobCache(): { bytes: number; hits: number } {
    return this.rawBlobs.blobCache;
  }

  branches(repo: RepoRef, defaultBranch: string | undefined): Promise<Branch[]> {
    return this.reads.branches(this.path(repo), defaultBranch);
  }

  mergeBase(repo: RepoRef, shas: string[]): Promise<string | undefined> {
    return this.reads.mergeBase(this.path(repo), shas);
  }

  compare(repo: RepoRef, from: string, to: string, limits: CompareLimits): Promise<Comparison> {
    return this.budget.run('walk', () => this.reads.compare(this.path(repo), from, to, limits));
  }

  contributors(repo: RepoRef, ref: string): Promise<Contributor[]> {
    return this.reads.contributors(this.path(repo), ref);
  }

  sizedFiles(repo: RepoRef, sha: string, limit: number): Promise<SizedFile[]> {
    return sizedFiles(this.path(repo), sha, limit);
  }

  async snapshot(repo: RepoRef): Promise<Readable | undefined> {
    const path = this.path(repo);
    return (await cli.exists(path)) ? tarOfDirectory(path) : undefined;
  }

  archive(repo: RepoRef, sha: string, ext: ArchiveExtension, prefix: string): Promise<Archive> {
    return this.archives.open(repo, this.path(repo), sha, ext, prefix);
  }

  /*
   * A page is `git log --skip=<offset> --max-count=<limit>`: git stops walking at the page's end, so
   * page N reads the commits up to it, never the whole history. The total (X-Total) is one
   * `git rev-list --count`, kept by what makes it immutable: the resolved commit (or, with `all`,
   * every ref's target) and the filters. The 40th page of 5,000 commits thus costs a walk of 4,000
   * and no count after the first page.
   */
  async commitLog(repo: RepoRef, q: CommitLogQuery): Promise<CommitLogPage> {
    const path = this.path(repo);
    let sha: string | undefined;
    let tips: string;
    if (q.all) {
      const refs = await listRefs(path);
      if (!refs.size) return { commits: [], total: 0 };
      tips = [...refs].map(([ref, id]) => `${id} ${ref}`).join('\n');
    } else {
      // GitLab 10.x (`raw_log`): an unknown ref lists nothing, rather than a 404.
      sha = q.ref ? (await this.reads.resolveCommit(path, q.ref))?.id : undefined;
      if (!sha) return { commits: [], total: 0 };
      tips = sha;
    }
    // A path is relative to the repository's top: leading slashes go, and one that climbs out of it
    // (`..`), which git refuses, names nothing that changed.
    const file = q.path?.replace(/^\/+/, '') || undefined;
    if (file?.split('/').includes('..')) return { commits: [], total: 0 };
    const filter: history.WalkFilter = { sha, all: q.all, path: file, since: q.since, until: q.until };
    const tipsKey = createHash('sha256').update(tips).digest('hex');
    const key = [path, tipsKey, filter.path ?? '', q.since?.getTime() ?? '', q.until?.getTime() ?? ''].join('\0');
    // The walk's ids, kept per immutable key: the page is a slice of them and the total their number.
    const list = await this.commitLists.get(key, () =>
      history.commitIds(path, filter, this.commitLists.maxIds(sha?.length ?? 40)),
    );
    const total = list ? list.length : await this.counts.get(key, () => history.countCommits(path, filter));
    // Past the end nothing is walked (and git never sees a skip too large for its integers).
    const inRange = q.offset < total && q.limit > 0;
    let page: { sha: string; stats?: CommitStats }[];
    if (list && !q.withStats) page = list.slice(q.offset, q.limit).map((id) => ({ sha: id }));
    else page = inRange ? await history.logPage(path, filter, q.offset, q.limit, q.withStats) : [];
    const infos = await this.reads.commitsBySha(
      path,
      page.map((p) => p.sha),
    );
    const stats = new Map(page.map((p) => [p.sha, p.stats]));
    return {
      commits: infos.map((c) => (q.withStats ? { ...c, stats: stats.get(c.id) } : c)),
      total,
    };
  }

  commitStats(repo: RepoRef, sha: string): Promise<CommitStats> {
    return this.reads.commitStats(this.path(repo), sha);
  }

  commitDiff(repo: RepoRef, sha: string, limits: CompareLimits): Promise<{ diffs: FileDiff[]; overflow: boolean }> {
    return this.reads.commitDiff(this.path(repo), sha, limits);
  }

  refsContaining(repo: RepoRef, sha: string): Promise<RefName[]> {
    return history.refsContaining(this.path(repo), sha);
  }

  tags(repo: RepoRef): Promise<Tag[]> {
    return this.peeledTags(this.path(repo), undefined);
  }

  async tag(repo: RepoRef, name: string): Promise<Tag | undefined> {
    // A name git refuses as a ref (`..`, a leading `-`, a space) names no tag; for-each-ref would widen a `*`.
    if (!name || name.startsWith('-') || /[\s\0]|\.\./.test(name)) return undefined;
    return (await this.peeledTags(this.path(repo), name)).find((t) => t.name === name);
  }

  private async peeledTags(path: string, name: string | undefined): Promise<Tag[]> {
    const tags: Tag[] = [];
    for (const t of await history.listTags(path, name)) {
      // Peeled through any chain of tag objects; a tag of a tree or a blob is no tag GitLab lists.
      const commit = await this.reads.resolveCommit(path, `refs/tags/${t.name}`);
      if (commit) tags.push({ ...t, commit });
    }
    return tags;
  }

  fileEntry(repo: RepoRef, sha: string, path: string): Promise<FileEntry | undefined> {
    return this.reads.fileEntry(this.path(repo), sha, path);
  }

  readFile(repo: RepoRef, sha: string, path: string): Promise<(FileEntry & { content: Buffer }) | undefined> {
    return this.reads.readFile(this.path(repo), sha, path);
  }

  /*
   * The files API's read: a small blob through the repository's long-lived cat-file process, as the
   * raw blob endpoint reads it (bench REPO-FILE: libgit2's revparse, peel, commit, tree, entry and
   * blob were seven thread-pool jobs, at 0.4-0.65 x the raw read); what that path declines (unusual
   * ref or path spellings, blobs over 1 MB) through libgit2.
   */
  async fileAtRef(repo: RepoRef, ref: string, file: string): Promise<FileAtRef | undefined> {
    const path = this.path(repo);
    // GitLab's `blob_at` drops leading slashes.
    const wanted = file.replace(/^\/+/, '');
    const fast = await this.rawBlobs.fileAt(path, ref, wanted);
    if (fast) {
      if (!fast.commit) return undefined;
      if (!fast.file) return { commitId: fast.commit };
      const name = wanted.slice(wanted.lastIndexOf('/') + 1);
      return { commitId: fast.commit, file: { blobId: fast.file.sha, path: wanted, name, content: fast.file.content } };
    }
    const commit = await this.reads.resolveCommit(path, ref);
    if (!commit) return undefined;
    return { commitId: commit.id, file: await this.reads.readFile(path, commit.id, file) };
  }

  lastCommitFor(repo: RepoRef, sha: string, file: string): Promise<string | undefined> {
    const path = this.path(repo);
    return this.lastCommits.get(`${path}\0${sha}\0${file}`, () => history.lastCommitFor(path, sha, file));
  }

  async blame(repo: RepoRef, sha: string, file: string): Promise<BlameRange[]> {
    const path = this.path(repo);
    const lines = await history.blameLines(path, sha, file);
    const commits = new Map(
      (await this.reads.commitsBySha(path, [...new Set(lines.map((l) => l.sha))])).map((c) => [c.id, c]),
    );
    // GitLab's `Blame#groups`: consecutive lines from one commit make one range.
    const ranges: BlameRange[] = [];
    for (const { sha: id, line } of lines) {
      const last = ranges[ranges.length - 1];
      if (last && last.commit.id === id) last.lines.push(line);
      else ranges.push({ commit: commits.get(id)!, lines: [line] });
    }
    return ranges;
  }

  refs(repo: RepoRef): Promise<Map<string, string>> {
    return listRefs(this.path(repo));
  }

  refsNamed(repo: RepoRef, names: readonly string[]): Promise<Map<string, string>> {
    return this.reads.refsNamed(this.path(repo), names);
  }

  /**
   * A branch moved forward by a plain line of commits (most pushes, every API commit) is described
   * from libgit2 in process; the rest (new branches, tags, deletions, merges, rewrites, more than
   * the payload's 20 commits) by git, in the updates' order.
   */
  async describeRefUpdates(repo: RepoRef, updates: RefCommand[], baseBranch: string | null): Promise<RefUpdate[]> {
    const path = this.path(repo);
    const inProcess = await Promise.all(
      updates.map(async (u): Promise<RefUpdate | undefined> => {
        if (!u.ref.startsWith('refs/heads/') || cli.isZeroSha(u.before) || cli.isZeroSha(u.after)) return undefined;
        const commits = await this.reads.commitLine(path, u.before, u.after, PAYLOAD_COMMITS);
        if (!commits) return undefined;
        return { ...u, checkoutSha: u.after, commits, totalCommitsCount: commits.length, message: null };
      }),
    );
    const rest = updates.filter((_, i) => !inProcess[i]);
    const described = rest.length ? await describeRefUpdates(path, rest, baseBranch) : [];
    return inProcess.map((update) => update ?? described.shift()!);
  }

  /**
   * The advertisement (`info/refs`) is cheap and served at once; a clone's or fetch's upload-pack and
   * a push's receive-pack take a slot of the work budget first. Refused past the wait: a plain 503
   * with Retry-After, which git shows as `The requested URL returned error: 503`.
   */
  serveHttp(
    req: IncomingMessage,
    res: ServerResponse,
    repo: RepoRef,
    service: string,
    remoteUser: string,
    options?: GitHttpOptions,
  ): void {
    if (
      service === 'info/refs' &&
      new URL(req.url ?? '/', 'http://x').searchParams.get('service') === 'git-receive-pack'
    ) {
      // Written here where it can be (nothing written when not): git answers the rest.
      void this.advertiseReceivePack(req, res, repo).then(
        (answered) => answered || this.serveHttpWithGit(req, res, repo, service, remoteUser, options),
        () => this.serveHttpWithGit(req, res, repo, service, remoteUser, options),
      );
      return;
    }
    this.serveHttpWithGit(req, res, repo, service, remoteUser, options);
  }

  /**
   * A push's ref advertisement written by Lode (see receive-pack-advertisement.ts): the refs through
   * libgit2, the capabilities of the one real advertisement this process took. False, with nothing
   * written, where git must answer: protocol v2 asked for, a repository not on disk, one with
   * alternates (git adds `.have` lines), more refs than ADVERTISED_REFS_IN_PROCESS.
   */
  private async advertiseReceivePack(req: IncomingMessage, res: ServerResponse, repo: RepoRef): Promise<boolean> {
    const version = requestedProtocolVersion(header(req, 'git-protocol'));
    const path = this.path(repo);
    if (version >= 2 || !(await this.advertisableInProcess(path))) return false;
    const [capabilities, refs] = await Promise.all([
      this.receivePackCapabilities(path),
      this.reads.refsUnder(path, ADVERTISED_REFS_IN_PROCESS),
    ]);
    if (capabilities === undefined || refs === undefined) return false;
    // http-backend's preamble, then receive-pack's own (a push is never v2); made before anything is sent.
    const body = `${pktLine('# service=git-receive-pack\n')}0000${receivePackAdvertisement(refs, capabilities, version === 1)}`;
    if (res.headersSent || res.destroyed) return true;
    res.writeHead(200, { ...NO_CACHE, 'Content-Type': 'application/x-git-receive-pack-advertisement' });
    res.end(body);
    return true;
  }

  /**
   * Whether the repository is one whose advertisement Lode writes: on disk, with the configuration
   * Lode gives every repository (nothing in it that changes what receive-pack advertises: another
   * object format, hidden refs, push options, signed pushes), no alternates (git adds `.have` lines)
   * and not shallow (git adds `shallow` lines). Anything else, a restored repository of another kind
   * say, is git's to answer.
   */
  private async advertisableInProcess(path: string): Promise<boolean> {
    const [config, alternates, shallow] = await Promise.all([
      readFile(join(path, 'config'), 'utf8').catch(() => undefined),
      stat(join(path, 'objects', 'info', 'alternates')).then(
        () => true,
        () => false,
      ),
      stat(join(path, 'shallow')).then(
        () => true,
        () => false,
      ),
    ]);
    return config !== undefined && !ADVERTISEMENT_CONFIG.test(config) && !alternates && !shallow;
  }

  /**
   * The capabilities receive-pack advertises, from one real advertisement run with the environment
   * git gets for a push's (so under the same configuration): with the repository's own configuration
   * checked (`advertisableInProcess`), they follow git's version and the machine's configuration. The
   * probe is also the check: Lode's advertisement of the same repository must come out byte for byte
   * as git's. A probe that failed is made again by the next push, as is one that differed (a ref may
   * have moved between git's read and Lode's) up to PROBES_THAT_MAY_DIFFER times; after that this
   * process leaves every advertisement to git (a machine's configuration hiding refs, say).
   */
  private receivePackCapabilities(path: string): Promise<string | undefined> {
    const probe = (this.receivePackProbe ??= this.probeReceivePack(path).catch(() => 'failed' as const));
    return probe.then((outcome) => {
      if (this.receivePackProbe === probe) {
        if (outcome === 'differs') this.receivePackDiffered++;
        if (outcome === 'failed' || (outcome === 'differs' && this.receivePackDiffered < PROBES_THAT_MAY_DIFFER))
          this.receivePackProbe = undefined;
      }
      return outcome === 'failed' || outcome === 'differs' ? undefined : outcome.capabilities;
    });
  }

  private async probeReceivePack(path: string): Promise<{ capabilities: string } | 'failed' | 'differs'> {
    const [advertised, refs] = await Promise.all([
      new Promise<Buffer | undefined>((resolve) => {
        const child = this.budget.spawn('git', ['receive-pack', '--advertise-refs', path], {
          env: { PATH: process.env.PATH, GIT_TERMINAL_PROMPT: '0' },
          stdio: ['ignore', 'pipe', 'ignore'],
        });
        const chunks: Buffer[] = [];
        let exited: number | null | undefined;
        let ended = false;
        const settle = () => ended && exited !== undefined && resolve(exited === 0 ? Buffer.concat(chunks) : undefined);
        child.stdout?.on('data', (chunk: Buffer) => chunks.push(chunk));
        child.stdout?.once('end', () => {
          ended = true;
          settle();
        });
        child.once('error', () => resolve(undefined));
        child.once('close', (code) => {
          exited = code;
          settle();
        });
      }),
      this.reads.refsUnder(path, ADVERTISED_REFS_IN_PROCESS).catch(() => undefined),
    ]);
    const capabilities = advertised && advertisedCapabilities(advertised);
    if (!advertised || capabilities === undefined || refs === undefined) return 'failed';
    if (Buffer.from(receivePackAdvertisement(refs, capabilities, false)).equals(advertised)) return { capabilities };
    this.logger.warn("receive-pack's advertisement differed from Lode's; it is asked again at the next push");
    return 'differs';
  }

  private serveHttpWithGit(
    req: IncomingMessage,
    res: ServerResponse,
    repo: RepoRef,
    service: string,
    remoteUser: string,
    options?: GitHttpOptions,
  ): void {
    const kind: GitWorkKind | undefined =
      service === 'git-upload-pack' ? 'clone' : service === 'git-receive-pack' ? 'push' : undefined;
    const start = (release?: () => void) => {
      const hook =
        options?.checkRefUpdates && service === 'git-receive-pack'
          ? this.hooks.register(options.checkRefUpdates, this.path(repo))
          : undefined;
      let cgi;
      try {
        cgi = serveGitHttp(
          req,
          res,
          this.path(repo),
          service,
          remoteUser,
          options,
          hook,
          this.budget.spawn.bind(this.budget),
        );
      } catch (err) {
        release?.();
        throw err;
      }
      if (!cgi) return release?.();
      if (release) {
        cgi.once('close', release);
        cgi.once('error', release);
      }
    };
    if (!kind) return start();
    // A client that goes away while it waits gives its place up.
    const gone = new AbortController();
    const onClose = () => gone.abort();
    res.once('close', onClose);
    this.budget.acquire(kind, gone.signal).then(
      (release) => {
        res.off('close', onClose);
        if (res.destroyed) return release();
        start(release);
      },
      (err: unknown) => {
        res.off('close', onClose);
        if (!(err instanceof GitBudgetExceeded)) return;
        this.logger.warn(`git ${service} refused: ${err.reason}`);
        if (res.headersSent) return void res.destroy();
        res.setHeader('Retry-After', String(BUDGET_RETRY_AFTER_S));
        fail(res, 503);
      },
    );
  }

  async writeCommit(repo: RepoRef, commit: NewCommit): Promise<string> {
    return writeCommit(this.path(repo), commit);
  }

  writeTagObject(repo: RepoRef, tag: NewTagObject): Promise<string> {
    return writeTagObject(this.path(repo), tag);
  }

  writeCherryPick(repo: RepoRef, pick: NewCherryPick): Promise<string | undefined> {
    return writeCherryPick(this.path(repo), pick);
  }

  writeRevert(repo: RepoRef, revert: NewRevert): Promise<RevertOutcome> {
    return writeRevert(this.path(repo), revert);
  }

  async moveRef(repo: RepoRef, ref: string, before: string, after: string): Promise<boolean> {
    const moved = await cli.moveRef(this.path(repo), ref, before, after);
    // The read handle caches what refs and objects it has seen: a later read must see this write.
    if (moved) this.reads.forget(this.path(repo));
    return moved;
  }

  /** As serveHttp: upload-pack and receive-pack in the work budget's slots; refused with a line on stderr and status 1. */
  servePack(repo: RepoRef, service: GitPackService, io: GitPackIo, options?: GitPackOptions): GitPackSession {
    const kind: GitWorkKind = service === 'git-receive-pack' ? 'push' : 'clone';
    const gone = new AbortController();
    let session: GitPackSession | undefined;
    const done = this.budget.acquire(kind, gone.signal).then(
      async (release) => {
        try {
          const hook =
            options?.checkRefUpdates && service === 'git-receive-pack'
              ? this.hooks.register(options.checkRefUpdates, this.path(repo))
              : undefined;
          session = servePack(this.path(repo), service, io, options, hook, this.budget.spawn.bind(this.budget));
          if (gone.signal.aborted) session.cancel();
          return await session.done;
        } finally {
          release();
        }
      },
      (err: unknown) => {
        if (err instanceof GitBudgetExceeded) {
          this.logger.warn(`git ${service} over SSH refused: ${err.reason}`);
          // gitlab-shell's form for a message git shows its user.
          io.stderr.write(`GitLab: The server is busy; try again in ${BUDGET_RETRY_AFTER_S} seconds.\n`);
        }
        return 1;
      },
    );
    return {
      done,
      cancel: () => {
        gone.abort();
        session?.cancel();
      },
    };
  }
}

/**
 * The commits from `from` to `tip` when known fast-forwards lead from one to the other, one after
 * another (a push's update, or the repository API's chain of one-commit updates); undefined otherwise.
 */
function stepsForward(from: string, tip: string, fastForwards: FastForward[]): number | undefined {
  let at = from;
  let commits = 0;
  for (let steps = 0; at !== tip && steps < fastForwards.length; steps++) {
    const step = fastForwards.find((f) => f.from === at);
    if (!step) return undefined;
    at = step.to;
    commits += step.commits;
  }
  return at === tip ? commits : undefined;
}
