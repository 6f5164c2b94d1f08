import { Readable, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { collectYoungGeneration, StreamedCollection } from './streamed-memory';

const CHUNK = 64 * 1024;

/** `total` bytes in fresh 64 KB chunks outside V8's heap, as a pipe from git hands them over, each dropped once written. */
function chunks(total: number): Readable {
  let n = 0;
  return new Readable({
    read() {
      this.push(n++ < total / CHUNK ? Buffer.allocUnsafeSlow(CHUNK).fill(n) : null);
    },
  });
}

/** Streams `source` to a sink that drops each chunk, and answers the most `arrayBuffers` grew meanwhile, in MB. */
async function highWaterMb(source: Readable): Promise<number> {
  const start = process.memoryUsage().arrayBuffers;
  let most = 0;
  await pipeline(
    source,
    new Writable({
      write(_chunk, _encoding, done) {
        most = Math.max(most, process.memoryUsage().arrayBuffers - start);
        setImmediate(done);
      },
    }),
  );
  return most / 1048576;
}

/** A clock that moves `msPerRead` each time it is read, so the 25 ms gate sees the pace the test chooses, not the machine's. */
function steppingClock(msPerRead: number): () => number {
  let now = 0;
  return () => (now += msPerRead);
}

describe('StreamedCollection', () => {
  it("frees a stream's dead chunks as it goes: 100 MB streamed hold about 8 MB at a time", async () => {
    // The clock moves 1 s a collection check, so the 25 ms gate never holds one back, whatever this
    // machine's speed: the high-water mark is the 8 MB between collections. Without the collections
    // the chunks pile up until V8's external-memory limit: 60-71 MB measured here (Node 24).
    const source = chunks(100 * 1048576);
    new StreamedCollection({ now: steppingClock(1000), collect: collectYoungGeneration }).count(source);
    expect(await highWaterMb(source)).toBeLessThan(20);
  });

  it('collects once every 8 MB streamed, by all streams together', async () => {
    let collections = 0;
    const counted = new StreamedCollection({ now: steppingClock(1000), collect: () => collections++ });
    const a = chunks(20 * 1048576);
    const b = chunks(20 * 1048576);
    counted.count(a);
    counted.count(b);
    await Promise.all([highWaterMb(a), highWaterMb(b)]);
    expect(collections).toBe(5);
  });

  it('collects at most once every 25 ms, however fast the bytes come', async () => {
    let collections = 0;
    // A clock that stands still (bytes faster than any machine streams them): after the first
    // collection the gate holds every other one, however many bytes come.
    const stopped = new StreamedCollection({ now: steppingClock(0), collect: () => collections++ });
    const burst = chunks(100 * 1048576);
    stopped.count(burst);
    await highWaterMb(burst);
    expect(collections).toBe(1);
  });
});
