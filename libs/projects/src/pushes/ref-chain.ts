import type { PendingPush, ProposedUpdate, Pusher } from './pending-pushes';
import { isZeroSha } from './repository-push';

/** Two object names for the same ref value: equal, or both "missing" (forty or sixty-four zeros). */
export const sameSha = (a: string, b: string) => a === b || (isZeroSha(a) && isZeroSha(b));

const sameUpdate = (a: ProposedUpdate, b: ProposedUpdate) =>
  a.ref === b.ref && sameSha(a.before, b.before) && sameSha(a.after, b.after);

/** A move of a ref made by another written-down push, recorded before the update that came after it. */
export interface ChainStep {
  pendingPushId: string;
  pusher: Pusher;
  update: ProposedUpdate;
}

/** What one push's record holds, so that every ref's recorded updates chain without holes. */
export interface ChainPlan {
  /** This push's updates that moved their ref (git left the ref there, or a later move started from it). */
  moved: ProposedUpdate[];
  /**
   * What moved the refs between their recorded chain's head and this push's `before`, in order: other
   * written-down pushes' updates (`step`, recorded for their pusher), or, where no written-down push
   * explains it, the whole range (`range`: from the head to this push's `before`, for this pusher).
   */
  gaps: ({ kind: 'step'; step: ChainStep } | { kind: 'range'; update: ProposedUpdate })[];
  /** The recorded chain heads this plan was made from: the record is refused if they moved meanwhile. */
  heads: Map<string, string | undefined>;
}

/**
 * Plans the record of a push so that, for every ref, each recorded update's `before` is the previous
 * recorded update's `after` (a CI receiver hears every `before -> after` the ref went through):
 *
 * - an update whose ref holds its `after` moved its ref (as before);
 * - an update whose ref holds something else moved it too when a later written-down push of the same
 *   ref starts from its `after` and the recorded chain still ends at its `before`: it was overtaken,
 *   not refused (git's receive-pack only moves a ref whose value is the update's `before`);
 * - before a moved update whose `before` is not the chain's head (`heads`, from `recorded_refs`), the
 *   moves in between are recorded first: walked back from its `before` through other written-down
 *   pushes (each for its own pusher), and what they do not explain as one range from the head.
 *
 * - an update that a later update of this same push starts from moved its ref too: the repository
 *   API's grouped commits push one update per commit, each from the commit before it, and git moves
 *   the branch once, to the last (each is recorded, and the chain's head follows them).
 *
 * A ref the records have never seen (`heads` without it: a fork's, or one from before the chain was
 * kept) has an unknown head: written-down steps are still recorded, but no range is invented.
 */
export function planChain(
  own: readonly ProposedUpdate[],
  refs: ReadonlyMap<string, string>,
  heads: ReadonlyMap<string, string>,
  others: readonly PendingPush[],
): ChainPlan {
  const plan: ChainPlan = { moved: [], gaps: [], heads: new Map() };
  const used = new Set<string>();
  const key = (pushId: string, u: ProposedUpdate) => `${pushId} ${u.ref} ${u.before} ${u.after}`;
  // Walking back: an update is a link of this push's own chain when a later own update of its ref,
  // itself in the ref or a link, starts from its `after`.
  const link = new Array<boolean>(own.length).fill(false);
  const chainStart = new Map<string, string>();
  for (let i = own.length - 1; i >= 0; i--) {
    const c = own[i];
    const start = chainStart.get(c.ref);
    const holds = start === undefined && (isZeroSha(c.after) ? !refs.has(c.ref) : refs.get(c.ref) === c.after);
    link[i] = start !== undefined && !isZeroSha(c.after) && sameSha(start, c.after);
    if (holds || link[i]) chainStart.set(c.ref, c.before);
  }
  // Where each ref's records end as this plan goes: the recorded head, then each update taken.
  const running = new Map<string, string | undefined>();
  own.forEach((c, i) => {
    if (!plan.heads.has(c.ref)) plan.heads.set(c.ref, heads.get(c.ref));
    const head = running.has(c.ref) ? running.get(c.ref) : heads.get(c.ref);
    const holds = isZeroSha(c.after) ? !refs.has(c.ref) : refs.get(c.ref) === c.after;
    const overtaken =
      !holds &&
      !link[i] &&
      (head === undefined || sameSha(head, c.before)) &&
      others.some((o) => o.updates.some((u) => u.ref === c.ref && sameSha(u.before, c.after)));
    if (!holds && !link[i] && !overtaken) return;
    plan.moved.push(c);
    running.set(c.ref, c.after);
    if (head !== undefined && sameSha(head, c.before)) return;
    // Walk back from this update's `before` to the chain's head through other written-down pushes.
    const steps: ChainStep[] = [];
    let at = c.before;
    for (let guard = 0; guard < 1000 && (head === undefined || !sameSha(at, head)); guard++) {
      const found = others
        .flatMap((o) => o.updates.map((u) => ({ o, u })))
        .find(({ o, u }) => u.ref === c.ref && sameSha(u.after, at) && !used.has(key(o.id, u)));
      if (!found) break;
      used.add(key(found.o.id, found.u));
      steps.unshift({ pendingPushId: found.o.id, pusher: found.o.pusher, update: found.u });
      at = found.u.before;
    }
    if (head !== undefined && !sameSha(at, head))
      plan.gaps.push({ kind: 'range', update: { ref: c.ref, before: head, after: at } });
    plan.gaps.push(...steps.map((step) => ({ kind: 'step' as const, step })));
  });
  return plan;
}

/** `own`'s updates still in `remaining` (those a later push's record did not take as steps). */
export const stillOwn = <U extends ProposedUpdate>(own: readonly U[], remaining: readonly ProposedUpdate[]): U[] =>
  own.filter((u) => remaining.some((r) => sameUpdate(r, u)));
