import { mallocTrimAddon } from './malloc-trim';
import { collector } from './streamed-memory';
import { fragmentGlibcHeap } from '../../../../test/support/fragmented-glibc-heap';

const MB = 1024 * 1024;

describe('native/malloc-trim', () => {
  it('is built by npm install and loads: this is a glibc machine', () => {
    const addon = mallocTrimAddon();
    expect(addon).toBeDefined();
    expect(addon!.available).toBe(true);
    expect(mallocTrimAddon()).toBe(addon);
  });

  it('gives back the free pages a collection leaves inside glibc’s arena', () => {
    const kept = fragmentGlibcHeap();
    collector()({ type: 'major', execution: 'sync', flavor: 'last-resort' });
    const collected = process.memoryUsage.rss();
    expect(mallocTrimAddon()!.mallocTrim()).toBe(true);
    const trimmed = process.memoryUsage.rss();
    // The Buffers' memory was freed by the collection and stayed resident until malloc_trim.
    expect(collected - trimmed).toBeGreaterThan(100 * MB);
    expect(kept).toHaveLength(300);
  });
});
