import { BytesLru } from './bytes-lru';
import type { TreeEntry } from './git-repositories';

/** About what a listing holds in memory: its strings at two bytes a character, and an object an entry. */
export function treeListingBytes(key: string, entries: readonly TreeEntry[]): number {
  let text = key.length;
  for (const e of entries) text += e.id.length + e.name.length + e.path.length + e.mode.length + e.type.length;
  // An empty listing still costs its key and array, so empty trees cannot pile up uncounted.
  return 2 * text + 64 * (entries.length + 1);
}

/**
 * Tree listings by (tree id, path, recursive), and the way to them from (commit id, path, recursive)
 * for the commit that led to one: an id names its content, so its listing never changes. Listing a
 * tree through nodegit costs five native calls an entry; the 1,800-entry directory of the benchmark
 * took 9 ms of CPU a request (PERF-7), a kept one well under one. Bounded by bytes
 * (LODE_TREE_CACHE_BYTES), least recently used first out; a listing larger than a quarter of the
 * bound (a huge recursive one) is not kept. A commit's key holds only the tree's key, so a listing
 * reached both ways is kept, and counted, once.
 */
export class TreeListingCache {
  /** A listing, or (under a commit's key) the key of the tree's listing. */
  private readonly listings: BytesLru<TreeEntry[] | string>;

  constructor(maxBytes: number) {
    this.listings = new BytesLru(maxBytes, maxBytes / 4);
  }

  get bytes(): number {
    return this.listings.bytes;
  }

  get(key: string): TreeEntry[] | undefined {
    const kept = this.listings.get(key);
    // The tree's listing may have gone first; then the commit's way to it leads nowhere.
    return typeof kept === 'string' ? (this.listings.get(kept) as TreeEntry[] | undefined) : kept;
  }

  set(key: string, entries: TreeEntry[]): void {
    this.listings.set(key, entries, treeListingBytes(key, entries));
  }

  /** Answers `key` with the listing kept under `listingKey`, for as long as that one is kept. */
  alias(key: string, listingKey: string): void {
    this.listings.set(key, listingKey, 2 * (key.length + listingKey.length) + 64);
  }
}
