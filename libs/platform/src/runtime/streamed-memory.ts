import type { Readable } from 'node:stream';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

/** V8's own collection, with the options Node's `--expose-gc` function takes. */
export type Collect = (options: {
  type: 'major' | 'minor';
  execution: 'sync';
  flavor?: 'regular' | 'last-resort';
}) => void;

let exposed: Collect | undefined;

/**
 * V8's `gc` function, as `--expose-gc` provides it (the flag set now reaches contexts made after it):
 * fetched once, so the process makes one context for it.
 */
export function collector(): Collect {
  if (!exposed) {
    setFlagsFromString('--expose-gc');
    exposed = runInNewContext('gc') as Collect;
  }
  return exposed;
}

/**
 * Bytes streamed through the process (every stream together) after which a young-generation
 * collection runs. Measured on a 100 MB blob from `git cat-file` to an HTTP client (Node 24, 8 MB
 * semi-spaces, as `npm start` runs): the high-water mark grew 78 MB without, 22-24 MB with it, each
 * collection some 1.2 ms (14 ms per 100 MB).
 */
const STREAMED_BYTES_PER_COLLECTION = 8 * 1024 * 1024;
/**
 * The least time between two of these collections, whatever streams: many clones at once (1 GB/s
 * together) would otherwise collect 125 times a second, and each collection ages the live young
 * objects of the requests in flight towards the old generation.
 */
const MIN_MS_BETWEEN_COLLECTIONS = 25;

/** What decides when streamed bytes are collected: the clock and the collection itself are given so a test can drive both. */
export interface StreamedCollectionParts {
  now: () => number;
  collect: () => void;
}

/**
 * Counts what streams pass through the process (a child's output on its way to a client, a file
 * sent) so that their chunks are collected as they go. Each chunk a pipe or file read hands Node is a
 * fresh 64 KB buffer outside V8's heap; it dies as soon as it is written out, but only a collection
 * frees it, and a stream allocates next to nothing on the heap, so V8 would run one only when those
 * buffers reach its external-memory limit: a 100 MB read held some 45 MB of dead chunks at a time
 * (bench PERF-8: `external` 67 MB after it). A young-generation collection every 8 MB streamed
 * frees them while they are still young (at most one every 25 ms).
 */
export class StreamedCollection {
  private streamedSinceCollection = 0;
  private lastCollection = -Infinity;

  constructor(private readonly parts: StreamedCollectionParts) {}

  count(stream: Readable): void {
    stream.on('data', (chunk: { length: number }) => this.streamed(chunk.length));
  }

  private streamed(bytes: number): void {
    this.streamedSinceCollection += bytes;
    if (this.streamedSinceCollection < STREAMED_BYTES_PER_COLLECTION) return;
    const now = this.parts.now();
    if (now - this.lastCollection < MIN_MS_BETWEEN_COLLECTIONS) return;
    this.streamedSinceCollection = 0;
    this.lastCollection = now;
    this.parts.collect();
  }
}

/** The collection streamed bytes call for: the young generation, where their dead chunks still are. */
export function collectYoungGeneration(): void {
  collector()({ type: 'minor', execution: 'sync' });
}

/** One count for the whole process: the budget is the process's, whichever streams spend it. */
const processStreams = new StreamedCollection({ now: () => performance.now(), collect: collectYoungGeneration });

/** Counts `stream` into the process's streamed bytes (see StreamedCollection). */
export function collectAsStreamed(stream: Readable): void {
  processStreams.count(stream);
}
