import type { PendingPush } from './pending-pushes';
import { planChain } from './ref-chain';

const Z = '0'.repeat(40);
const [A, B, C, D] = ['a', 'b', 'c', 'd'].map((c) => c.repeat(40));
const MAIN = 'refs/heads/main';
const alice = { id: 1, username: 'alice' };
const bob = { id: 2, username: 'bob' };
const pending = (id: string, pusher: typeof alice, ...updates: [string, string][]): PendingPush => ({
  id,
  projectId: 7,
  pusher,
  createdAt: new Date(0),
  updates: updates.map(([before, after]) => ({ ref: MAIN, before, after })),
});
const refs = (sha?: string) => new Map(sha ? [[MAIN, sha]] : []);

describe('the recorded chain of a ref', () => {
  it('records an update whose ref holds its after, with nothing ahead when the chain ends at its before', () => {
    const plan = planChain([{ ref: MAIN, before: A, after: B }], refs(B), new Map([[MAIN, A]]), []);
    expect(plan.moved).toEqual([{ ref: MAIN, before: A, after: B }]);
    expect(plan.gaps).toEqual([]);
    expect(plan.heads).toEqual(new Map([[MAIN, A]]));
  });

  it('leaves out an update that moved nothing (refused, or lost the race for the ref)', () => {
    const lost = pending('9', bob, [A, C]);
    expect(planChain([{ ref: MAIN, before: A, after: B }], refs(C), new Map([[MAIN, A]]), [lost]).moved).toEqual([]);
  });

  it('records an update overtaken by a later written-down push that starts from its after', () => {
    const later = pending('9', bob, [B, C]);
    const plan = planChain([{ ref: MAIN, before: A, after: B }], refs(C), new Map([[MAIN, A]]), [later]);
    expect(plan.moved).toEqual([{ ref: MAIN, before: A, after: B }]);
    expect(plan.gaps).toEqual([]);
    // ...and for a ref the records never saw (its first creation, overtaken).
    const first = planChain([{ ref: MAIN, before: Z, after: B }], refs(C), new Map(), [later]);
    expect(first.moved).toHaveLength(1);
  });

  it('does not take an overtaken update once the chain went past its before (a range covered it)', () => {
    const later = pending('9', bob, [B, C]);
    expect(planChain([{ ref: MAIN, before: A, after: B }], refs(C), new Map([[MAIN, C]]), [later]).moved).toEqual([]);
  });

  it('records the written-down pushes between the chain head and the before first, each for its pusher', () => {
    const first = pending('5', alice, [A, B]);
    const second = pending('6', bob, [B, C]);
    const plan = planChain([{ ref: MAIN, before: C, after: D }], refs(D), new Map([[MAIN, A]]), [second, first]);
    expect(plan.moved).toEqual([{ ref: MAIN, before: C, after: D }]);
    expect(plan.gaps).toEqual([
      { kind: 'step', step: { pendingPushId: '5', pusher: alice, update: { ref: MAIN, before: A, after: B } } },
      { kind: 'step', step: { pendingPushId: '6', pusher: bob, update: { ref: MAIN, before: B, after: C } } },
    ]);
  });

  it('records what no written-down push explains as one range from the chain head', () => {
    const second = pending('6', bob, [B, C]);
    const plan = planChain([{ ref: MAIN, before: C, after: D }], refs(D), new Map([[MAIN, A]]), [second]);
    expect(plan.gaps).toEqual([
      { kind: 'range', update: { ref: MAIN, before: A, after: B } },
      { kind: 'step', step: { pendingPushId: '6', pusher: bob, update: { ref: MAIN, before: B, after: C } } },
    ]);
    // A deleted ref's head is its zeros: a creation chains on it.
    expect(planChain([{ ref: MAIN, before: Z, after: D }], refs(D), new Map([[MAIN, Z]]), []).gaps).toEqual([]);
  });

  it('invents no range for a ref whose head is unknown (a fork’s refs)', () => {
    const plan = planChain([{ ref: MAIN, before: C, after: D }], refs(D), new Map(), []);
    expect(plan.moved).toHaveLength(1);
    expect(plan.gaps).toEqual([]);
  });

  it('records every update of one push that chains to where the ref stands (grouped API commits)', () => {
    const own = [
      { ref: MAIN, before: A, after: B },
      { ref: MAIN, before: B, after: C },
      { ref: MAIN, before: C, after: D },
    ];
    const plan = planChain(own, refs(D), new Map([[MAIN, A]]), []);
    expect(plan.moved).toEqual(own);
    expect(plan.gaps).toEqual([]);
    expect(plan.heads).toEqual(new Map([[MAIN, A]]));
    // A link whose chain does not reach the ref's value moved nothing.
    expect(planChain(own.slice(0, 2), refs(D), new Map([[MAIN, A]]), []).moved).toEqual([]);
    // With the records behind, the range comes once, before the first link.
    const behind = planChain(own.slice(1), refs(D), new Map([[MAIN, A]]), []);
    expect(behind.moved).toEqual(own.slice(1));
    expect(behind.gaps).toEqual([{ kind: 'range', update: { ref: MAIN, before: A, after: B } }]);
  });
});
