/**
 * Values by key, bounded by their bytes together (as the caller counts them), least recently used
 * first out. A value larger than `largest` is not kept: one huge value would flush all the others.
 */
export class BytesLru<V> {
  private readonly kept = new Map<string, { value: V; bytes: number }>();
  private total = 0;

  constructor(
    private readonly maxBytes: number,
    private readonly largest: number,
  ) {}

  /** The most one value may cost and still be kept. */
  get largestBytes(): number {
    return this.largest;
  }

  /** The bytes kept now. */
  get bytes(): number {
    return this.total;
  }

  get(key: string): V | undefined {
    const kept = this.kept.get(key);
    if (!kept) return undefined;
    this.kept.delete(key);
    this.kept.set(key, kept);
    return kept.value;
  }

  /** Forgets every value whose key `drop` names (a scan of them all: for rare events). */
  deleteWhere(drop: (key: string) => boolean): void {
    for (const [key, kept] of this.kept)
      if (drop(key)) {
        this.kept.delete(key);
        this.total -= kept.bytes;
      }
  }

  /** Keeps `value` (unless too large, or kept already by a racing caller), then forgets the oldest past the bound. */
  set(key: string, value: V, bytes: number): void {
    if (bytes > this.largest || this.kept.has(key)) return;
    this.kept.set(key, { value, bytes });
    this.total += bytes;
    for (const [oldest, kept] of this.kept) {
      if (this.total <= this.maxBytes) break;
      this.kept.delete(oldest);
      this.total -= kept.bytes;
    }
  }
}
