import { AsyncResource } from 'node:async_hooks';

export interface GroupCommitOptions<Item> {
  /** Writes a batch, in the order the items were added; one call at a time. */
  write: (items: Item[]) => Promise<void>;
  /** A batch whose write failed: the items are not retried, so this is where they are reported. */
  failed: (items: Item[], error: unknown) => void;
  /** At most this many items per write. */
  maxBatch: number;
  /** Past this many waiting items, `add` resolves only once they are written (backpressure). */
  maxQueued: number;
}

/**
 * Items written in batches after their caller has moved on: every item added during one event-loop turn
 * goes in one write, and the items added while a write is in flight go in the next one (group commit), so
 * the slower the store, the bigger the batch. `flush()` resolves once every item added so far has been
 * written or reported as failed. Pure: the store is the `write` it is given.
 */
export class GroupCommit<Item> {
  private queued: Item[] = [];
  private draining: Promise<void> | null = null;
  /** Runs the drain in the context this queue was made in, not in the first caller's (its request, its transaction). */
  private readonly startDrain = AsyncResource.bind(() => this.drain());

  constructor(private readonly options: GroupCommitOptions<Item>) {}

  /** Queues an item; resolves at once, unless too many items wait to be written (see `maxQueued`). */
  add(item: Item): Promise<void> {
    this.queued.push(item);
    this.draining ??= this.startDrain();
    return this.queued.length > this.options.maxQueued ? this.draining : Promise.resolve();
  }

  /** Resolves when every item added so far has been written (or reported failed). */
  flush(): Promise<void> {
    return this.draining ?? Promise.resolve();
  }

  /** How many items wait for a write (not counting the batch being written). */
  get waiting(): number {
    return this.queued.length;
  }

  private async drain(): Promise<void> {
    // The rest of this turn's items join the first write.
    await new Promise<void>((resolve) => setImmediate(resolve));
    try {
      while (this.queued.length > 0) {
        const batch = this.queued.splice(0, this.options.maxBatch);
        try {
          await this.options.write(batch);
        } catch (error) {
          this.options.failed(batch, error);
        }
      }
    } finally {
      this.draining = null;
    }
  }
}
