import { LodeConfig } from '@app/platform';
import { Injectable, Logger, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { ArchiveStore } from './archive-store';
import * as cli from './git-cli';
import {
  GitRepositories,
  type Archive,
  type ArchiveExtension,
  type BlobInfo,
  type Branch,
  type CommitInfo,
  type CompareLimits,
  type Comparison,
  type Contributor,
  type GitHttpOptions,
  type GitPackIo,
  type GitPackOptions,
  type GitPackService,
  type GitPackSession,
  type HeldBlob,
  type RawBlob,
  type RefCommand,
  type RefUpdate,
  type RepoRef,
  type RepositoryStatistics,
  type TreeEntry,
} from './git-repositories';
import { serveGitHttp } from './http-backend';
import { NodegitRepositories } from './nodegit-repositories';
import { servePack } from './pack-service';
import { RawBlobs } from './raw-blob';
import { RefUpdateHooks } from './ref-update-hooks';
import { describeRefUpdates, listRefs } from './ref-updates';

/**
 * GitRepositories on the local data directory (`$LODE_DATA_DIR/repositories/@hashed/...`): reads
 * through libgit2 (nodegit), raw blobs through long-lived `git cat-file` processes, and the rest
 * through the git command line run from the command helper (see command-runner.ts), or streamed
 * (`git http-backend`, `git archive`) where the output is large.
 */
/** How long a half-built repository must have been left untouched before it counts as abandoned. */
const STALE_TEMPORARY_MS = 60_000;

@Injectable()
export class LocalGitRepositories extends GitRepositories implements OnModuleInit, OnModuleDestroy {
  private readonly logger = new Logger('Git');
  private readonly reads = new NodegitRepositories();
  private readonly rawBlobs = new RawBlobs();
  private readonly archives: ArchiveStore;
  private readonly hooks: RefUpdateHooks;

  constructor(private readonly config: LodeConfig) {
    super();
    this.archives = new ArchiveStore(config.dataDir);
    this.hooks = new RefUpdateHooks(config.dataDir);
  }

  /**
   * The pre-receive hook is in place and its port open before the first push; what a crash left
   * half-built beside the repositories (`*.git.tmp-*`) is removed.
   */
  async onModuleInit(): Promise<void> {
    await this.hooks.start();
    const removed = await cli.removeStaleTemporaries(this.config.dataDir, STALE_TEMPORARY_MS);
    if (removed.length)
      this.logger.log(`removed ${removed.length} half-built repositories left by a crash: ${removed.join(', ')}`);
  }

  private path(repo: RepoRef): string {
    return cli.repositoryPath(this.config.dataDir, repo.projectId);
  }

  /*
   * The command helper is shared by every application in the process and unreferenced while idle,
   * so it neither keeps a stopping process alive nor is stopped here (another application in the
   * same process, as in the tests, may still use it); it exits with its parent.
   */
  async onModuleDestroy(): Promise<void> {
    this.rawBlobs.close();
    await this.hooks.close();
  }

  async init(repo: RepoRef, defaultBranch: string): Promise<void> {
    await cli.initBare(this.path(repo), defaultBranch);
    this.reads.forget(this.path(repo));
  }

  async cloneBare(source: RepoRef, target: RepoRef): Promise<void> {
    const from = this.path(source);
    if (!(await cli.exists(from))) throw new Error(`the source repository of project ${source.projectId} is missing`);
    await cli.cloneBare(from, this.path(target));
    this.reads.forget(this.path(target));
  }

  gc(repo: RepoRef): Promise<void> {
    return cli.gc(this.path(repo));
  }

  async remove(repo: RepoRef): Promise<void> {
    this.reads.forget(this.path(repo));
    await cli.removeRepository(this.path(repo));
    await cli.removeRepository(cli.archiveCachePath(this.config.dataDir, repo.projectId));
  }

  exists(repo: RepoRef): Promise<boolean> {
    return cli.exists(this.path(repo));
  }

  statistics(repo: RepoRef, branch: string | null): Promise<RepositoryStatistics> {
    return cli.statistics(this.path(repo), branch);
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

  tree(repo: RepoRef, ref: string, path: string, recursive: boolean): Promise<TreeEntry[] | undefined> {
    return this.reads.tree(this.path(repo), ref, path, recursive);
  }

  blob(repo: RepoRef, sha: string): Promise<BlobInfo | undefined> {
    return this.reads.blob(this.path(repo), sha);
  }

  rawBlob(repo: RepoRef, sha: string): Promise<HeldBlob | RawBlob | undefined> {
    return this.rawBlobs.open(this.path(repo), sha);
  }

  branches(repo: RepoRef, defaultBranch: string | undefined): Promise<Branch[]> {
    return this.reads.branches(this.path(repo), defaultBranch);
  }

  compare(repo: RepoRef, from: string, to: string, limits: CompareLimits): Promise<Comparison> {
    return this.reads.compare(this.path(repo), from, to, limits);
  }

  contributors(repo: RepoRef, ref: string): Promise<Contributor[]> {
    return this.reads.contributors(this.path(repo), ref);
  }

  archive(repo: RepoRef, sha: string, ext: ArchiveExtension, prefix: string): Promise<Archive> {
    return this.archives.open(repo, this.path(repo), sha, ext, prefix);
  }

  refs(repo: RepoRef): Promise<Map<string, string>> {
    return listRefs(this.path(repo));
  }

  describeRefUpdates(repo: RepoRef, updates: RefCommand[], baseBranch: string | null): Promise<RefUpdate[]> {
    return describeRefUpdates(this.path(repo), updates, baseBranch);
  }

  serveHttp(
    req: IncomingMessage,
    res: ServerResponse,
    repo: RepoRef,
    service: string,
    remoteUser: string,
    options?: GitHttpOptions,
  ): void {
    const hook =
      options?.checkRefUpdates && service === 'git-receive-pack'
        ? this.hooks.register(options.checkRefUpdates)
        : undefined;
    serveGitHttp(req, res, this.path(repo), service, remoteUser, options, hook);
  }

  servePack(repo: RepoRef, service: GitPackService, io: GitPackIo, options?: GitPackOptions): GitPackSession {
    const hook =
      options?.checkRefUpdates && service === 'git-receive-pack'
        ? this.hooks.register(options.checkRefUpdates)
        : undefined;
    return servePack(this.path(repo), service, io, options, hook);
  }
}
