import { SystemRefusal } from './types';

/** Caps concurrent commands; a bounded queue waits, and past it the caller is told to retry. */
export class Semaphore {
  private active = 0;
  private readonly waiting: (() => void)[] = [];

  constructor(
    private readonly max: number,
    private readonly maxQueue: number,
  ) {}

  async run<T>(fn: () => Promise<T>): Promise<T> {
    const release = await this.acquire();
    try {
      return await fn();
    } finally {
      release();
    }
  }

  /**
   * A place, held until the returned function is called (once; later calls do nothing): for work
   * that outlives the call that started it (a streamed answer).
   */
  async acquire(): Promise<() => void> {
    if (this.active >= this.max) {
      if (this.waiting.length >= this.maxQueue) {
        throw new SystemRefusal(
          'busy',
          `too many commands in progress (${this.max} running, ${this.maxQueue} waiting); retry later`,
        );
      }
      await new Promise<void>((r) => this.waiting.push(r));
    }
    this.active++;
    let held = true;
    return () => {
      if (!held) return;
      held = false;
      this.active--;
      this.waiting.shift()?.();
    };
  }
}
