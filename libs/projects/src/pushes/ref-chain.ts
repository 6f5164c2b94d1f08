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
  for (const c of own) {
    const head = heads.get(c.ref);
    plan.heads.set(c.ref, head);
    const holds = isZeroSha(c.after) ? !refs.has(c.ref) : refs.get(c.ref) === c.after;
    const overtaken =
      !holds &&
      (head === undefined || sameSha(head, c.before)) &&
      others.some((o) => o.updates.some((u) => u.ref === c.ref && sameSha(u.before, c.after)));
    if (!holds && !overtaken) continue;
    plan.moved.push(c);
    if (head !== undefined && sameSha(head, c.before)) continue;
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
  }
  return plan;
}

/** `own`'s updates still in `remaining` (those a later push's record did not take as steps). */
export const stillOwn = <U extends ProposedUpdate>(own: readonly U[], remaining: readonly ProposedUpdate[]): U[] =>
  own.filter((u) => remaining.some((r) => sameUpdate(r, u)));
