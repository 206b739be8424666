/**
 * A durable "commit within N seconds or roll back" window, the part the certificate area's TLS
 * ingest (runtime/areas/certificate/ops.ts) and the network area's confirmed changes
 * (runtime/areas/network/changes.ts) share: one change at a time (a promise chain, so the
 * rollback the timer starts never runs in the middle of a commit or a new change) and one timer
 * for the deadline. The deadline itself lives where the area keeps its journal (a file, a SQLite
 * row): after a restart the area reads it back and calls `arm` again, or rolls back at once
 * when it has passed. The timer never keeps the process alive (unref).
 */
export class CommitWindow {
  private timer: NodeJS.Timeout | undefined;
  private queue: Promise<unknown> = Promise.resolve();

  /** `expire` runs inside `serial` once the deadline is reached; it re-checks its journal itself. */
  constructor(private readonly expire: () => Promise<void> | void) {}

  /** Runs `f` after every change queued before it (failures included), one at a time. */
  serial<T>(f: () => Promise<T> | T): Promise<T> {
    const run = this.queue.then(f, f);
    this.queue = run.catch(() => undefined);
    return run;
  }

  /** (Re)starts the timer for `deadline` (ms since the epoch); a past deadline fires at once. */
  arm(deadline: number): void {
    this.stop();
    this.timer = setTimeout(
      () => {
        this.timer = undefined;
        void this.serial(this.expire);
      },
      Math.max(0, deadline - Date.now()),
    );
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
  }

  /** Resolves once every queued change has finished (shutdown). */
  async idle(): Promise<void> {
    await this.queue;
  }
}
