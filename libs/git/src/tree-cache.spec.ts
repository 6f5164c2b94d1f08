import type { TreeEntry } from './git-repositories';
import { TreeListingCache, treeListingBytes } from './tree-cache';

const entry = (n: number, name = `file-${String(n).padStart(4, '0')}.txt`): TreeEntry => ({
  id: n.toString(16).padStart(40, '0'),
  name,
  type: 'blob',
  path: `dir/${name}`,
  mode: '100644',
});
const listing = (from: number, count: number) => Array.from({ length: count }, (_, i) => entry(from + i));
const key = (n: number) => `${n.toString(16).padStart(40, '0')}\0dir\0${0}`;

describe('TreeListingCache', () => {
  it('counts a listing by its strings and entries, an empty one too', () => {
    expect(treeListingBytes(key(0), [])).toBeGreaterThan(0);
    expect(treeListingBytes(key(0), [entry(1, 'a-much-longer-name.txt')])).toBeGreaterThan(
      treeListingBytes(key(0), [entry(1, 'a')]),
    );
  });

  it('evicts the least recently used listings by their bytes, not their count', () => {
    const ten = treeListingBytes(key(0), listing(0, 10));
    const cache = new TreeListingCache(ten * 8);
    for (let i = 0; i < 8; i++) cache.set(key(i), listing(i * 10, 10));
    expect(cache.bytes).toBe(ten * 8);
    // Reading the first makes it the most recently used: the second goes first.
    expect(cache.get(key(0))).toEqual(listing(0, 10));
    cache.set(key(8), listing(80, 10));
    expect(cache.get(key(1))).toBeUndefined();
    expect(cache.get(key(0))).toEqual(listing(0, 10));
    expect(cache.bytes).toBe(ten * 8);
    // Ten entries with longer names weigh more than ten short ones: they push out two listings, not one.
    const long = Array.from({ length: 10 }, (_, i) => entry(100 + i, `${'n'.repeat(30)}-${i}`));
    expect(treeListingBytes(key(9), long)).toBeGreaterThan(ten);
    cache.set(key(9), long);
    expect(cache.get(key(9))).toEqual(long);
    expect(cache.get(key(2))).toBeUndefined();
    expect(cache.get(key(3))).toBeUndefined();
    expect(cache.get(key(4))).toEqual(listing(40, 10));
    expect(cache.bytes).toBeLessThanOrEqual(ten * 8);
  });

  it('keeps no listing larger than a quarter of its bound, and none at 0', () => {
    const cache = new TreeListingCache(10_000);
    const big = listing(0, 200);
    expect(treeListingBytes(key(0), big)).toBeGreaterThan(10_000 / 4);
    cache.set(key(0), big);
    expect(cache.get(key(0))).toBeUndefined();
    expect(cache.bytes).toBe(0);
    const off = new TreeListingCache(0);
    off.set(key(1), []);
    expect(off.get(key(1))).toBeUndefined();
  });

  it("keeps a listing reached from a commit once: the commit's key holds the way to the tree's", () => {
    const ten = treeListingBytes(key(0), listing(0, 10));
    const cache = new TreeListingCache(ten * 8);
    const commitKey = `commit ${'c'.repeat(40)}\0dir\0${0}`;
    cache.set(key(0), listing(0, 10));
    cache.alias(commitKey, key(0));
    expect(cache.get(commitKey)).toEqual(listing(0, 10));
    // The listing's bytes once, and a few for the way to it.
    expect(cache.bytes).toBeGreaterThan(ten);
    expect(cache.bytes).toBeLessThan(ten + 400);
    // Once the listing itself is pushed out, the commit's way leads nowhere: the tree is read again.
    for (let i = 1; i <= 8; i++) cache.set(key(i), listing(i * 10, 10));
    expect(cache.get(key(0))).toBeUndefined();
    expect(cache.get(commitKey)).toBeUndefined();
  });
});
