import {
  CommitRefused,
  GitRepositories,
  projectRepo,
  validRefName,
  type CommitInfo,
  type FileAction,
  type RefCommand,
  type RepoRef,
} from '@app/git';
import { BadRequestMessage, Clock, NotFound, type Actor } from '@app/platform';
import { ProjectChangeNotices, ProjectQueries, PushRecorder, ZERO_SHA, type ProjectRow } from '@app/projects';
import { UserQueries } from '@app/users';
import { Injectable } from '@nestjs/common';
import { repositoryReady, RepositoryNotThereYet } from './repository-ready';

/**
 * How often a write that lost the race for its branch to another process is made again on the new
 * tip (writers in one process queue per branch instead, see `queues`).
 */
const ATTEMPTS = 10;

/** GitLab's refusal when the caller may not write to the branch (`authorize_push_to_branch!`, `Files::BaseService`). */
export const PUSH_INTO_BRANCH_REFUSED = 'You are not allowed to push into this branch';

/** GitLab's `Commits::ChangeService` refusal when a cherry-pick conflicts or changes nothing (10.x wraps it in two lines). */
export const CHERRY_PICK_REFUSED =
  'Sorry, we cannot cherry-pick this commit automatically. This commit may already have been cherry-picked, or a more recent commit may have updated some of its content.';

/** GitLab 11.5's `Commits::RevertService` refusal when a revert conflicts or changes nothing. */
export const REVERT_REFUSED =
  'Sorry, we cannot revert this commit automatically. This commit may already have been reverted, or a more recent commit may have updated some of its content.';

/** The project's branch could not be written for a reason GitLab answers with 400 or 403. */
export class BranchWriteRefused extends Error {}

/** A commit to make through the API (GitLab's `Files::MultiService` and the files endpoints). */
export interface ApiCommit {
  /** The branch the commit lands on. */
  branch: string;
  /** The branch it starts from when `branch` does not exist yet; `branch` itself otherwise. */
  startBranch?: string;
  message: string;
  actions: (FileAction & { lastCommitId?: string })[];
  authorName?: string;
  authorEmail?: string;
  /** GitLab's words when a `last_commit_id` is stale (the files API and the commits API word it apart). */
  staleMessage: (path: string) => string;
}

const branchRef = (branch: string) => `refs/heads/${branch}`;

/** A ref's writers in this process. A branch keeps the key its commits have always used; `:` cannot be in a ref name, so no clash. */
const queueKey = (project: Pick<ProjectRow, 'id'>, ref: string) =>
  `${project.id}:${ref.startsWith('refs/heads/') ? ref.slice('refs/heads/'.length) : `tag:${ref.slice('refs/tags/'.length)}`}`;

/**
 * The most API commits one push carries. A backlog is worked off in pushes of this size, so no
 * event, written-down push or hook fan-out grows with the queue.
 */
const MAX_BATCH = 50;

/** An API commit waiting for its branch's batch. */
interface CommitRequest {
  project: ProjectRow;
  actor: Actor;
  spec: ApiCommit;
  resolve: (sha: string) => void;
  reject: (err: unknown) => void;
}

type UserRow = Awaited<ReturnType<UserQueries['get']>>;

/**
 * The repository API's writes: commits built with libgit2 in process (the git port's `writeCommit`),
 * the branch moved by compare-and-swap, through the same gate and record as a git push
 * (`PushRecorder.session`: protected branches, the push written down before the ref moves, one
 * `RepositoryPushed` after), so hooks, statistics and `last_activity_at` follow as for a push. Two
 * writers to one branch never lose a commit: the loser is made again on the new tip while its change
 * still applies, and refused in GitLab's words when it does not.
 */
@Injectable()
export class RepositoryWrites {
  /**
   * Writers of one branch in this process, one after the other: twenty API commits at once to one
   * branch would otherwise mostly lose the compare-and-swap to each other and be made again and again.
   */
  private readonly queues = new Map<string, Promise<unknown>>();
  /**
   * Per branch, the API commits waiting behind its running write: taken together when it ends, as one
   * push (`commitBatch`).
   */
  private readonly open = new Map<string, CommitRequest[]>();

  constructor(
    private readonly git: GitRepositories,
    private readonly pushes: PushRecorder,
    private readonly users: UserQueries,
    private readonly clock: Clock,
    private readonly projects: ProjectQueries,
    private readonly notices: ProjectChangeNotices,
  ) {}

  /** Makes the commit and answers its sha; `BranchWriteRefused`/`BadRequestMessage` in GitLab's words otherwise. */
  commit(project: ProjectRow, actor: Actor, spec: ApiCommit): Promise<string> {
    const ref = branchRef(spec.branch);
    const key = queueKey(project, ref);
    return new Promise<string>((resolve, reject) => {
      const request: CommitRequest = { project, actor, spec, resolve, reject };
      const open = this.open.get(key);
      if (open && open.length < MAX_BATCH) {
        open.push(request);
        return;
      }
      // No batch waits for this branch (or it is full): this one opens the next, queued behind the
      // branch's running write; requests that arrive meanwhile join it.
      const batch = [request];
      this.open.set(key, batch);
      this.exclusive(project, ref, () => this.commitBatch(key, batch)).catch((err: unknown) => {
        // Refused before the batch was taken (no repository yet): every request in it hears so.
        if (this.open.get(key) === batch) this.open.delete(key);
        for (const r of batch) r.reject(err);
      });
    });
  }

  /** How many API commits to `branch` wait for its next batch (they are taken when the running write ends). */
  waiting(project: Pick<ProjectRow, 'id'>, branch: string): number {
    return this.open.get(queueKey(project, branchRef(branch)))?.length ?? 0;
  }

  /**
   * GitLab's `Commits::CherryPickService` through the API: `commit` applied on the tip of `branch` (a
   * merge commit against its first parent), the original author kept and the caller as committer, the
   * message GitLab's `cherry_pick_message`. Answers the new commit's sha; 404 `Branch Not Found` when
   * the branch is gone, 400 `CHERRY_PICK_REFUSED` when it does not apply, `BranchWriteRefused` as for
   * a commit. Queued and retried with the branch's other API writers.
   */
  cherryPick(project: ProjectRow, actor: Actor, commit: CommitInfo, branch: string): Promise<string> {
    return this.exclusive(project, branchRef(branch), () => this.cherryPickNow(project, actor, commit, branch));
  }

  private async cherryPickNow(project: ProjectRow, actor: Actor, commit: CommitInfo, branch: string): Promise<string> {
    const repo = projectRepo(project.id);
    const user = await this.users.get(actor.id);
    const committer = { name: user.name, email: user.email, when: this.clock.now() };
    const message = `${commit.message.trimEnd()}\n\n(cherry picked from commit ${commit.id})`;
    for (let attempt = 1; ; attempt++) {
      const tip = (await this.git.refs(repo)).get(branchRef(branch));
      if (!tip) throw new NotFound('Branch');
      const sha = await this.git.writeCherryPick(repo, { commit: commit.id, onto: tip, message, committer });
      if (!sha) throw new BadRequestMessage(CHERRY_PICK_REFUSED);
      if (await this.moveRef(project, actor, branchRef(branch), tip, sha)) return sha;
      if (attempt >= ATTEMPTS) throw new BadRequestMessage('The branch moved while the commit was made; try again');
      await new Promise((r) => setTimeout(r, Math.random() * 20 * attempt));
    }
  }

  /**
   * GitLab's `Commits::RevertService` through the API (11.5): `commit` undone on the tip of `branch`
   * (a merge commit against its first parent) by the caller as author and committer, with GitLab's
   * `revert_message`. Answers the new commit's sha; 404 `Branch Not Found` when the branch is gone,
   * 400 `REVERT_REFUSED` when it does not apply or changes nothing, `BranchWriteRefused` as for a
   * commit. Queued and retried with the branch's other API writers.
   */
  revert(project: ProjectRow, actor: Actor, commit: CommitInfo, branch: string): Promise<string> {
    return this.exclusive(project, branchRef(branch), () => this.revertNow(project, actor, commit, branch));
  }

  private async revertNow(project: ProjectRow, actor: Actor, commit: CommitInfo, branch: string): Promise<string> {
    const repo = projectRepo(project.id);
    const user = await this.users.get(actor.id);
    const person = { name: user.name, email: user.email, when: this.clock.now() };
    const message = `Revert "${commit.title.trim()}"\n\nThis reverts commit ${commit.id}`;
    for (let attempt = 1; ; attempt++) {
      const tip = (await this.git.refs(repo)).get(branchRef(branch));
      if (!tip) throw new NotFound('Branch');
      const outcome = await this.git.writeRevert(repo, { commit: commit.id, onto: tip, message, person });
      if ('refused' in outcome) throw new BadRequestMessage(REVERT_REFUSED);
      if (await this.moveRef(project, actor, branchRef(branch), tip, outcome.sha)) return outcome.sha;
      if (attempt >= ATTEMPTS) throw new BadRequestMessage('The branch moved while the commit was made; try again');
      await new Promise((r) => setTimeout(r, Math.random() * 20 * attempt));
    }
  }

  /**
   * Runs `work` after this process's other writes of `ref` (`refs/heads/...` or `refs/tags/...`) in the
   * project have ended: a look at the ref followed by its move is then not raced from this process.
   * Callers that check before they move (a branch or tag created or deleted) run both in here, as a
   * lost swap whose proposed value is the winner's would otherwise still be recorded as a push.
   */
  exclusive<T>(project: Pick<ProjectRow, 'id' | 'import_status'>, ref: string, work: () => Promise<T>): Promise<T> {
    const key = queueKey(project, ref);
    const run = (this.queues.get(key) ?? Promise.resolve())
      .catch(() => undefined)
      .then(() => this.repositoryThere(project))
      .then(work);
    this.queues.set(key, run);
    void run
      .catch(() => undefined)
      .finally(() => {
        if (this.queues.get(key) === run) this.queues.delete(key);
      });
    return run;
  }

  /**
   * A fork's repository is not there until its copy (a job) finishes: a write waits a moment for it,
   * then is refused with 409 instead of writing into nothing (or into the empty stand-in reads use).
   */
  private async repositoryThere(project: Pick<ProjectRow, 'id' | 'import_status'>): Promise<void> {
    if (!(await repositoryReady(this.projects, this.notices, project))) throw new RepositoryNotThereYet();
  }

  /**
   * Takes the open batch of the branch's commits: the requests that arrived while the branch's last
   * write ran (at most MAX_BATCH). Each caller's requests are one push; callers in arrival order.
   */
  private async commitBatch(key: string, batch: CommitRequest[]): Promise<void> {
    if (this.open.get(key) === batch) this.open.delete(key);
    const callers = new Map<string, CommitRequest[]>();
    for (const r of batch) {
      const who = [r.actor.id, r.actor.tokenId, r.actor.impersonatedBy, r.actor.isAdmin, r.project.access].join(':');
      callers.set(who, [...(callers.get(who) ?? []), r]);
    }
    for (const requests of callers.values()) {
      let waiting = requests;
      try {
        const user = await this.users.get(waiting[0].actor.id);
        // A push that creates the branch carries that one commit; the rest follow as a chain of updates.
        while (waiting.length) waiting = await this.pushChain(waiting, user);
      } catch (err) {
        for (const r of waiting) r.reject(err);
      }
    }
  }

  /**
   * One push of `requests` (one caller, one branch): each commit built on the one before it, the
   * chain written down as one push (an update per commit, `before` the previous commit), the branch
   * moved once from the chain's base to its last commit by compare-and-swap, one `RepositoryPushed`
   * recorded. A request whose actions do not apply to the tree before it is answered with its own
   * refusal and left out. Answers the requests still to push: those after a branch creation, which
   * is a push of its own, as it meets other rules than an update.
   */
  private async pushChain(requests: CommitRequest[], user: UserRow): Promise<CommitRequest[]> {
    const { project, actor, spec } = requests[0];
    const repo = projectRepo(project.id);
    const ref = branchRef(spec.branch);
    let waiting = requests;
    for (let attempt = 1; ; attempt++) {
      const refs = await this.git.refs(repo);
      const base = refs.get(ref);
      const chain: { request: CommitRequest; update: RefCommand }[] = [];
      let rest: CommitRequest[] = [];
      for (const [i, request] of waiting.entries()) {
        const before = refs.get(ref) ?? ZERO_SHA;
        try {
          const sha = await this.build(repo, refs, request.spec, user);
          chain.push({ request, update: { ref, before, after: sha } });
          refs.set(ref, sha);
        } catch (err) {
          request.reject(err);
          continue;
        }
        if (before === ZERO_SHA) {
          rest = waiting.slice(i + 1);
          break;
        }
      }
      if (!chain.length) return rest;
      const after = chain[chain.length - 1].update.after;
      let moved: boolean;
      try {
        moved = await this.moveChain(
          project,
          actor,
          chain.map((c) => c.update),
          base ?? ZERO_SHA,
          after,
        );
      } catch (err) {
        for (const c of chain) c.request.reject(err);
        return rest;
      }
      if (moved) {
        for (const c of chain) c.request.resolve(c.update.after);
        return rest;
      }
      waiting = [...chain.map((c) => c.request), ...rest];
      if (attempt >= ATTEMPTS) {
        const lost = new BadRequestMessage('The branch moved while the commit was made; try again');
        for (const r of waiting) r.reject(lost);
        return [];
      }
      // Another process won: a short, growing, jittered pause before building again on its tip.
      await new Promise((r) => setTimeout(r, Math.random() * 20 * attempt));
    }
  }

  /**
   * Builds one request's commit on `refs` as they stand with the batch's earlier commits (the
   * branch's entry is the chain's tip so far) and answers its sha; no ref moves. GitLab's refusals
   * (`BadRequestMessage`) in GitLab's order.
   */
  private async build(repo: RepoRef, refs: Map<string, string>, spec: ApiCommit, user: UserRow): Promise<string> {
    const now = this.clock.now();
    const committer = { name: user.name, email: user.email, when: now };
    const author = { name: spec.authorName ?? user.name, email: spec.authorEmail ?? user.email, when: now };
    const empty = ![...refs.keys()].some((r) => r.startsWith('refs/heads/'));
    const start = spec.startBranch ?? spec.branch;
    const target = refs.get(branchRef(spec.branch));
    let parent: string | null = null;
    if (!empty) {
      // GitLab's Files::BaseService#validate!, in its order.
      const startSha = refs.get(branchRef(start));
      if (!startSha) throw new BadRequestMessage('You can only create or edit files when you are on a branch');
      if (start !== spec.branch && target)
        throw new BadRequestMessage(
          `A branch called '${spec.branch}' already exists. Switch to that branch in order to make changes`,
        );
      parent = startSha;
      await this.checkLastCommits(repo, startSha, spec);
    }
    // GitLab's `validate_new_branch_name!` (ValidateNewBranchService) asks GitRefValidator after the checks above, before a
    // commit starts a branch from another; Lode asks whenever the branch is new (an empty
    // repository's first commit too), so no name git cannot write reaches the ref move.
    if (!target && !validRefName(spec.branch))
      throw new BadRequestMessage(
        `Something went wrong when we tried to create '${spec.branch}' for you: Branch name is invalid`,
      );
    try {
      return await this.git.writeCommit(repo, {
        parent,
        actions: spec.actions,
        message: spec.message,
        author,
        committer,
      });
    } catch (err) {
      if (err instanceof CommitRefused) throw new BadRequestMessage(err.message);
      throw err;
    }
  }

  /**
   * Moves the branch from `before` to `after` through the gate and records the push of `chain` (one
   * update per commit, each from the one before): refused (`BranchWriteRefused`) before anything is
   * written down; false when another writer moved the branch first. Every update of a chain is one
   * change to the same branch by the same caller, never a creation, deletion or forced update, so
   * the protected-branch rules answer each of them alike.
   */
  private async moveChain(
    project: ProjectRow,
    actor: Actor,
    chain: RefCommand[],
    before: string,
    after: string,
  ): Promise<boolean> {
    const session = this.pushes.session(
      project,
      actor,
      { accessLevel: project.access, isAdmin: actor.isAdmin },
      { viaApi: true },
    );
    const refusal = await session.check(chain.map((c) => ({ ...c, forced: false })));
    if (refusal) throw new BranchWriteRefused(refusal);
    let moved: boolean | undefined;
    try {
      moved = await this.git.moveRef(projectRepo(project.id), chain[0].ref, before, after);
      return moved;
    } finally {
      // Records the chain (the inspector accepts every update leading to what the branch holds) and
      // strikes the written-down push off; a lost swap records nothing.
      await session.finish(moved);
    }
  }

  /**
   * Moves one ref through the gate and records it as a push: refused (`BranchWriteRefused` with the
   * rules' words) before anything is written down; false when another writer moved it first.
   */
  async moveRef(project: ProjectRow, actor: Actor, ref: string, before: string, after: string): Promise<boolean> {
    const session = this.pushes.session(
      project,
      actor,
      { accessLevel: project.access, isAdmin: actor.isAdmin },
      { viaApi: true },
    );
    // A commit made on its branch's tip (or a new ref, or a deletion) is never a forced update.
    const refusal = await session.check([{ ref, before, after, forced: false }]);
    if (refusal) throw new BranchWriteRefused(refusal);
    let moved: boolean | undefined;
    try {
      moved = await this.git.moveRef(projectRepo(project.id), ref, before, after);
      return moved;
    } finally {
      // Records what moved and strikes the written-down push off; a lost swap (moved false) records
      // nothing, and an error (moved unknown) leaves it to what the ref now holds.
      await session.finish(moved);
    }
  }

  /** GitLab's `file_has_changed?`: a `last_commit_id` that is not the last commit touching the path at the start. */
  private async checkLastCommits(repo: RepoRef, startSha: string, spec: ApiCommit): Promise<void> {
    for (const action of spec.actions) {
      if (!action.lastCommitId || !['update', 'move', 'delete'].includes(action.action)) continue;
      const path = action.previousPath ?? action.filePath;
      const last = await this.git.lastCommitFor(repo, startSha, path.replace(/^\/+/, ''));
      if (last !== undefined && last !== action.lastCommitId) throw new BadRequestMessage(spec.staleMessage(path));
    }
  }
}
