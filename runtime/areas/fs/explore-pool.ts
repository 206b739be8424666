/**
 * Worker threads for explore's walks of local filesystems (the code they run: explore-worker.ts).
 *
 * Why threads: an lstat on a warm local disk is a few microseconds of kernel time, and Node's
 * lstatSync adds as much again building the Stats object (four Dates each on Node 20). On the
 * event loop that is ~0.45 s of blocking per 100 000 entries, plus ~0.08 s of readdir; through
 * libuv's async pool it is 4-6x that in per-call overhead. Workers reading directories and
 * lstat'ing their names leave the event loop free to write the answer meanwhile, and hand back
 * the numbers packed in one transferred Float64Array per task, so the host's heap never sees a
 * Stats.
 *
 * How many (defaultPoolSize): a core is left for the event loop, which serialises the answer
 * (~0.3 s of CPU per 100 000 entries, as much as the lstat calls). On the 2-core bench machine
 * one worker walked the 100 000-entry tree as fast as two (alternating, 10 walks each: 630 and
 * 626 ms median; the host's CPU the same) with ~40 MB less peak RSS (~160 against ~200 MB):
 * the machine was busy either way, and the second worker's lstat calls only made each one dearer.
 *
 * A worker that dies (out of memory, killed) fails its tasks; the caller redoes them on the
 * async path, so a walk never loses entries to the pool.
 */
import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import { STAT_STRIDE } from '../../../handlers/fs/contract';
import { exploreWorkerMain, type WorkerAnswer, type WorkerTask } from './explore-worker';

export { type StatsAnswer, type WorkerAnswer, type WorkerTask } from './explore-worker';

const WORKER_SOURCE = `(${exploreWorkerMain.toString()})(${STAT_STRIDE});`;

interface Pending {
  resolve: (b: WorkerAnswer) => void;
  reject: (e: Error) => void;
}

interface PoolWorker {
  worker: Worker;
  pending: Map<number, Pending>;
  /** stopped on purpose (idle, close): its exit is no failure */
  stopping?: boolean;
}

export interface ExplorePoolOptions {
  /** worker threads (default: defaultPoolSize) */
  size?: number;
  /** tasks queued on one worker at once, so it never waits for the host between tasks */
  perWorker?: number;
  /** the workers are stopped after this long without a task (their memory goes back) */
  idleMs?: number;
}

/** Worker threads for a machine of `cores`: one core left for the event loop, at least 1, at most 4. */
export function defaultPoolSize(cores: number): number {
  return Math.min(4, Math.max(1, cores - 1));
}

export class ExplorePool {
  private readonly workers: PoolWorker[] = [];
  private readonly size: number;
  private readonly perWorker: number;
  private readonly idleMs: number;
  private nextId = 0;
  private idleTimer: NodeJS.Timeout | null = null;
  private warned = false;
  private readonly roomWaiters = new Set<() => void>();

  constructor(o: ExplorePoolOptions = {}) {
    this.size = o.size ?? defaultPoolSize(availableParallelism());
    this.perWorker = o.perWorker ?? 2;
    this.idleMs = o.idleMs ?? 30_000;
  }

  /** tasks in flight */
  get inFlight(): number {
    return this.workers.reduce((n, w) => n + w.pending.size, 0);
  }

  /** a task given now would start without waiting behind a full queue */
  hasRoom(): boolean {
    return this.inFlight < this.size * this.perWorker;
  }

  /**
   * Calls `f` once, when a task settles and there is room again. The room may be held by
   * another walk's tasks (or by read-ahead a finished count left in flight): a walk that waits
   * for room must not count on its own answers to wake it.
   */
  whenRoom(f: () => void): void {
    this.roomWaiters.add(f);
  }

  private settled(): void {
    if (this.roomWaiters.size === 0 || !this.hasRoom()) return;
    const waiting = [...this.roomWaiters];
    this.roomWaiters.clear();
    for (const f of waiting) f();
  }

  run(task: WorkerTask): Promise<WorkerAnswer> {
    if (this.idleTimer) {
      clearTimeout(this.idleTimer);
      this.idleTimer = null;
    }
    const w = this.pick();
    const id = this.nextId++;
    return new Promise<WorkerAnswer>((resolve, reject) => {
      w.pending.set(id, { resolve, reject });
      w.worker.postMessage({ id, task });
    });
  }

  /** Stops every worker; their tasks fail (callers redo them elsewhere). */
  async close(): Promise<void> {
    if (this.idleTimer) clearTimeout(this.idleTimer);
    this.idleTimer = null;
    const all = this.workers.splice(0);
    for (const w of all) w.stopping = true;
    await Promise.all(all.map((w) => w.worker.terminate()));
  }

  private pick(): PoolWorker {
    let best: PoolWorker | null = null;
    for (const w of this.workers) if (!best || w.pending.size < best.pending.size) best = w;
    if (best && (best.pending.size === 0 || this.workers.length >= this.size)) return best;
    return this.spawn();
  }

  private spawn(): PoolWorker {
    // a small heap: a worker holds one directory's names and numbers at a time, and its garbage
    // (a Stats and a Dirent per name) is dead at once
    const worker = new Worker(WORKER_SOURCE, {
      eval: true,
      resourceLimits: { maxYoungGenerationSizeMb: 4, maxOldGenerationSizeMb: 32 },
    });
    worker.unref(); // an idle pool never keeps the host alive
    const w: PoolWorker = { worker, pending: new Map() };
    const fail = (e: Error) => {
      // a worker that cannot start (or dies) is worth an operator's eye: the walks still answer
      // the same, on the event loop, only slower
      if (!w.stopping && !this.warned) {
        this.warned = true;
        console.error(`explore: a worker thread failed (${e.message}); its work is done on the event loop instead`);
      }
      const i = this.workers.indexOf(w);
      if (i >= 0) this.workers.splice(i, 1);
      for (const p of w.pending.values()) p.reject(e);
      w.pending.clear();
      this.settled();
    };
    worker.on('message', (m: { id: number; value: WorkerAnswer }) => {
      const p = w.pending.get(m.id);
      w.pending.delete(m.id);
      p?.resolve(m.value);
      if (this.inFlight === 0) this.armIdle();
      this.settled();
    });
    worker.on('error', fail);
    worker.on('exit', (code) => fail(new Error(`explore worker exited with code ${code}`)));
    this.workers.push(w);
    return w;
  }

  private armIdle(): void {
    if (this.idleTimer) clearTimeout(this.idleTimer);
    this.idleTimer = setTimeout(() => void this.close(), this.idleMs);
    this.idleTimer.unref();
  }
}
