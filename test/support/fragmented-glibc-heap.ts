/**
 * Some 170 MB of 64 KB Buffers dropped, with every tenth kept so the freed ones are holes inside
 * glibc's arena, not free space at its top that glibc trims by itself: what a burst's native
 * allocations leave behind once collected. Answers the kept ones; the caller holds them until it has
 * measured.
 */
export function fragmentGlibcHeap(): Buffer[] {
  // All held until the end, so no collection during the loop frees some and lets the next reuse them.
  const all = Array.from({ length: 3000 }, () => Buffer.alloc(64 * 1024, 1));
  return all.filter((_, i) => i % 10 === 0);
}
