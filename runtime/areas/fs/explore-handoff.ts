/**
 * The streamed walk's records on their way from the walk (explore-dfs.ts) to the route: a bounded
 * queue, so the host holds at most QUEUED_RECORDS records whatever the size of the tree, and the
 * route leaving (or not reading for STALL_MS) stops the walk at its next put (WalkLeft).
 */
import type { ExploreRecords } from '../../../handlers/fs/contract';

/** records waiting for the route before the walk waits for it */
const QUEUED_RECORDS = 16_384;
/** a reader that takes nothing for this long is gone: the walk stops and gives back its place */
const STALL_MS = 120_000;

/** The walk's records on their way to the route: bounded, and the route leaving stops the walk. */
export class Handoff {
  private readonly batches: ExploreRecords[] = [];
  private queued = 0;
  private ended = false;
  private failure: { error: unknown } | null = null;
  /** the reader left (or stalled): the walk stops at its next put */
  left = false;
  private wakeReader: (() => void) | null = null;
  private wakeWalker: (() => void) | null = null;

  async put(batch: ExploreRecords): Promise<void> {
    if (this.left) throw new WalkLeft();
    this.batches.push(batch);
    this.queued += batch.names.length;
    this.wakeReader?.();
    while (this.queued > QUEUED_RECORDS && !this.left) {
      const stalled = setTimeout(() => this.leave(), STALL_MS);
      await new Promise<void>((r) => (this.wakeWalker = r));
      clearTimeout(stalled);
    }
    if (this.left) throw new WalkLeft();
  }

  end(failure?: { error: unknown }): void {
    this.ended = true;
    this.failure = failure ?? null;
    this.wakeReader?.();
  }

  private leave(): void {
    this.left = true;
    this.batches.length = 0;
    this.wakeWalker?.();
  }

  async *read(): AsyncGenerator<ExploreRecords, void, undefined> {
    try {
      for (;;) {
        const batch = this.batches.shift();
        if (batch) {
          this.queued -= batch.names.length;
          this.wakeWalker?.();
          yield batch;
        } else if (this.ended) {
          if (this.failure) throw this.failure.error;
          return;
        } else {
          await new Promise<void>((r) => (this.wakeReader = r));
          this.wakeReader = null;
        }
      }
    } finally {
      if (!this.ended) this.leave();
    }
  }
}

export class WalkLeft extends Error {}
