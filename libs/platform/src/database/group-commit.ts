/**
 * Group commit for small statements made once per job: calls that arrive while a flush is in flight
 * wait for it and go together in the next flush, as one statement. Alone, a call costs the round
 * trip it always did (it is flushed at once); under load, N calls cost about one round trip a flush
 * instead of N, which is what lets the webhook workers keep pace while the API is writing. Each call
 * resolves with its own result, or rejects with the flush's error (the flush is all or nothing).
 */
export class GroupCommit<I, R> {
  private waiting: { item: I; resolve: (r: R) => void; reject: (e: unknown) => void }[] = [];
  private flushing = 0;

  /**
   * `flush` answers one result per item, in order. `parallel` flushes may run at once (each waiting
   * call is in exactly one); a flush takes at most `maxBatch` items.
   */
  constructor(
    private readonly flush: (items: I[]) => Promise<R[]>,
    private readonly options: { parallel?: number; maxBatch?: number } = {},
  ) {}

  run(item: I): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      this.waiting.push({ item, resolve, reject });
      this.pump();
    });
  }

  private pump(): void {
    const parallel = this.options.parallel ?? 2;
    const maxBatch = this.options.maxBatch ?? 500;
    while (this.flushing < parallel && this.waiting.length) {
      const batch = this.waiting.splice(0, maxBatch);
      this.flushing++;
      // A flush that throws synchronously rejects its batch like one that fails.
      Promise.resolve()
        .then(() => this.flush(batch.map((b) => b.item)))
        .then(
          (results) => batch.forEach((b, i) => b.resolve(results[i])),
          (err: unknown) => batch.forEach((b) => b.reject(err)),
        )
        .finally(() => {
          this.flushing--;
          this.pump();
        });
    }
  }
}
