import { GitRepositories, projectRepo, type ProposedRefUpdate, type RefCommand, type RefUpdateCheck } from '@app/git';
import { Invalidations, LodeConfig, type Actor } from '@app/platform';
import { Injectable, Logger } from '@nestjs/common';
import { CommandBus } from '@nestjs/cqrs';
import { DataSource } from 'typeorm';
import { setTimeout as sleep } from 'node:timers/promises';
import { ProtectedBranchPolicy, type BranchCaller } from '../protected-refs/protected-branch';
import { ProtectedBranchQueries } from '../protected-refs/protected-branch.queries';
import { ProtectedTagPolicy } from '../protected-refs/protected-tag';
import { ProtectedTagQueries } from '../protected-refs/protected-tag.queries';
import type { ProjectRow } from '../projects/project.queries';
import { publicProjectKey } from '../projects/public-project-answers';
import { PendingPushes, type Pusher } from './pending-pushes';
import { PushInspector } from './push-inspector';
import { ChainMoved, RecordRepositoryPush } from './record-repository-push.command';
import { RecordedRefs } from './recorded-refs';
import { planChain } from './ref-chain';
import { isBranchRef, isTagRef, isZeroSha } from './repository-push';

/**
 * Attempts to record an accepted push when PostgreSQL stumbles (the refs have moved already): waits
 * of 0.5, 1, 2 and 4 s, about 8 s in all. Past them the push stays written down for the reconciler.
 */
const RECORD_ATTEMPTS = 5;

/** One push as a transport runs it: the gate git asks before any ref moves, and the record after. */
export interface PushSession {
  /** git's pre-receive: writes the push down (PostgreSQL must take it, or the push is refused). */
  check: RefUpdateCheck;
  /**
   * After git exited, whatever its status: records what moved before the client hears the end.
   * `moved: false` from a writer that knows its compare-and-swap lost: nothing of its own moved, even
   * where the ref holds the value it proposed (another writer's identical change), so the written-down
   * push is forgotten rather than recorded twice.
   */
  finish: (moved?: boolean) => Promise<void>;
}

/**
 * The push's one path, whatever moved the refs (git over HTTP, git over SSH, the repository API's
 * writes): `session` is each transport's one entry. At git's pre-receive, before any ref moves, every
 * branch update is held to the project's protected branches (the first refusal refuses the whole
 * push, in GitLab's words), then the push is written down in PostgreSQL (`PendingPushes`, record
 * first); after git, the inspector reads what moved and `RecordRepositoryPush` records it, striking
 * the written-down push off. A push whose process dies in between is recorded by `PushReconciler`
 * through `record`, as its pusher. If PostgreSQL cannot take the written-down push, git refuses the
 * push and nothing moves.
 */
@Injectable()
export class PushRecorder {
  private readonly logger = new Logger('PushRecorder');

  constructor(
    private readonly git: GitRepositories,
    private readonly commands: CommandBus,
    private readonly pending: PendingPushes,
    private readonly protectedBranches: ProtectedBranchQueries,
    private readonly protectedTags: ProtectedTagQueries,
    private readonly inspector: PushInspector,
    private readonly config: LodeConfig,
    private readonly recorded: RecordedRefs,
    private readonly invalidations: Invalidations,
    private readonly db: DataSource,
  ) {}

  /**
   * The gate and the record of one push by `pusher` (a user, or the user behind a deploy key), who
   * meets the protected-branch rules as `branchCaller`. `viaApi`: the repository API's writes
   * (GitLab's `protocol: 'web'`), recorded with `origin: 'api'`.
   */
  session(
    project: ProjectRow,
    pusher: Actor,
    branchCaller: BranchCaller,
    options: { viaApi?: boolean } = {},
  ): PushSession {
    let pendingId: string | undefined;
    let proposed: RefCommand[] = [];
    /** The updates the check saw were fast-forwards (`ref before after`). */
    const fastForwards = new Set<string>();
    const origin = options.viaApi ? 'api' : 'git';
    return {
      check: async (updates) => {
        const refusal =
          (await this.branchRefusal(project, updates, branchCaller, options.viaApi === true)) ??
          (await this.tagRefusal(project, updates, branchCaller));
        if (refusal) return refusal;
        proposed = updates.map(({ ref, before, after }) => ({ ref, before, after }));
        for (const u of updates) if (!u.forced) fastForwards.add(updateKey(u));
        pendingId = await this.pending.begin(project.id, proposed, pusher);
        return undefined;
      },
      finish: async (moved?: boolean) => {
        if (pendingId === undefined) return;
        if (moved === false) return this.pending.forget(pendingId);
        if (this.config.faultPauseBeforePushRecordMs > 0) await sleep(this.config.faultPauseBeforePushRecordMs);
        await this.record(project, pusher, proposed, pendingId, origin, (u) => fastForwards.has(updateKey(u)));
      },
    };
  }

  /**
   * Records what a push changed as a `RepositoryPushed` event (the updates git accepted: those whose
   * ref now holds the proposed value, or that a later push started from), striking the written-down
   * push off in the same transaction. Where an update's `before` is not where its ref's recorded chain
   * ends, the moves in between are recorded first (`planChain`): every ref's records chain without
   * holes. If PostgreSQL stays away through every attempt, the push stays written down and the
   * reconciler records it once PostgreSQL is back.
   */
  async record(
    project: Pick<ProjectRow, 'id' | 'default_branch'>,
    pusher: Pusher,
    commands: RefCommand[],
    pendingPushId: string,
    origin = 'git',
    /** Whether an update is a fast-forward, where the push's check knew it (the reconciler does not). */
    isFastForward?: (update: RefCommand) => boolean,
  ): Promise<void> {
    const repo = projectRepo(project.id);
    for (let attempt = 1, moved = 0; ;) {
      try {
        // Read for the refs the push named: what it still holds may be fewer (a later push's record may
        // have taken some of it as steps), and the plan looks only at those.
        const names = [...new Set(commands.map((c) => c.ref))];
        const [refs, heads, standing] = await Promise.all([
          this.refsToRecord(project, names),
          this.recorded.heads(project.id, names),
          this.pending.standing(project.id, names, pendingPushId),
        ]);
        const own = standing.own ?? commands;
        const others = standing.others;
        const plan = planChain(own, refs, heads, others);
        const gapCommands = plan.gaps.map((g) => (g.kind === 'step' ? g.step.update : g.update));
        const push = await this.inspector.inspect(
          repo,
          plan.moved,
          project.default_branch,
          refs,
          gapCommands,
          isFastForward,
        );
        const gaps = plan.gaps.map((g, i) => ({
          pendingPushId: g.kind === 'step' ? g.step.pendingPushId : undefined,
          userId: g.kind === 'step' ? g.step.pusher.id : pusher.id,
          update: push.gaps[i],
        }));
        if (gaps.length)
          this.logger.warn(
            `push ${pendingPushId} to project ${project.id}: recording ${gaps.length} earlier move(s) of its refs first`,
          );
        await this.commands.execute(
          new RecordRepositoryPush(project.id, { userId: pusher.id, ...push.own }, pusher, pendingPushId, origin, {
            gaps,
            heads: plan.heads,
          }),
        );
        return;
      } catch (err) {
        // Another record moved a chain head between the plan and its transaction: plan again, at once.
        if (err instanceof ChainMoved && ++moved <= 20) continue;
        if (attempt >= RECORD_ATTEMPTS) {
          this.logger.error(
            `push to project ${project.id} by ${pusher.username} could not be recorded yet (${String(err)}); the reconciler will record it`,
          );
          // Its refs moved with no event yet to say so: what every process keeps of the project's
          // anonymous answers (a file at a ref) is evicted now, not when the reconciler records it.
          await this.invalidations.announce([publicProjectKey(project.id)], this.db);
          return;
        }
        await sleep(250 * 2 ** attempt);
        attempt++;
      }
    }
  }

  /**
   * The refs a record reads: the pushed ones (what they hold now) and the default branch (new
   * branches are compared with it, and its commits counted), looked up by name: no listing of every
   * ref (a git process per push). The first push of a project without a default branch lists them
   * all, as it chooses one among them.
   */
  private refsToRecord(
    project: Pick<ProjectRow, 'id' | 'default_branch'>,
    names: string[],
  ): Promise<Map<string, string>> {
    const repo = projectRepo(project.id);
    if (project.default_branch === null) return this.git.refs(repo);
    return this.git.refsNamed(repo, [...new Set([...names, `refs/heads/${project.default_branch}`])]);
  }

  /** The first protected-branch refusal among the branch updates, or undefined. */
  private async branchRefusal(
    project: ProjectRow,
    updates: ProposedRefUpdate[],
    caller: BranchCaller,
    viaApi: boolean,
  ): Promise<string | undefined> {
    const branches = updates.filter((u) => isBranchRef(u.ref));
    if (!branches.length) return undefined;
    // Whether the repository is empty decides only for a push that creates or deletes a branch: an
    // update from one tip to another cannot move in an empty repository (git compares its `before`
    // with the ref), whatever the rules say of it. (A deletion of a branch that does not exist is
    // no move either, but an empty protected repository refuses it: that refusal is kept.)
    const createsOrDeletes = branches.some((u) => isZeroSha(u.before) || isZeroSha(u.after));
    const [rules, empty] = await Promise.all([
      this.protectedBranches.forProject(project.id),
      createsOrDeletes
        ? this.git.refs(projectRepo(project.id)).then((refs) => ![...refs.keys()].some(isBranchRef))
        : false,
    ]);
    const repository = {
      defaultBranch: project.default_branch,
      empty,
      defaultBranchProtection: this.config.defaultBranchProtection,
    };
    for (const u of branches) {
      const change = {
        branch: u.ref.slice('refs/heads/'.length),
        creation: isZeroSha(u.before),
        deletion: isZeroSha(u.after),
        forced: u.forced,
        viaApi,
      };
      const refusal = ProtectedBranchPolicy.refusal(rules, change, caller, repository);
      if (refusal) return refusal;
    }
    return undefined;
  }

  /**
   * The first protected-tag refusal among the tag updates, or undefined. GitLab checks a change's
   * branch rules, then its tag rules; a push holds both kinds, so the branches' refusal comes first.
   */
  private async tagRefusal(
    project: ProjectRow,
    updates: ProposedRefUpdate[],
    caller: BranchCaller,
  ): Promise<string | undefined> {
    const tags = updates.filter((u) => isTagRef(u.ref));
    if (!tags.length || 'deployKey' in caller) return undefined;
    const rules = await this.protectedTags.forProject(project.id);
    for (const u of tags) {
      const change = {
        tag: u.ref.slice('refs/tags/'.length),
        creation: isZeroSha(u.before),
        deletion: isZeroSha(u.after),
      };
      const refusal = ProtectedTagPolicy.refusal(rules, change, caller);
      if (refusal) return refusal;
    }
    return undefined;
  }
}

const updateKey = (u: RefCommand) => `${u.ref} ${u.before} ${u.after}`;
