/**
 * WAL checkpoints in a worker thread, once the host writes enough for them to matter.
 *
 * Why: with `synchronous = NORMAL` a commit never waits for the disk, but SQLite's automatic
 * checkpoint (every 1 000 WAL pages, run by the connection that commits) syncs the WAL and the
 * database file: 12-17 ms on this appliance's disk, during which the event loop stands still.
 * Under load (audit rows of every exec route) that was a stall every 0.3-0.5 s, felt by every
 * request in flight, and most of the host's p99.
 *
 * How: after START_AFTER_ROWS audit rows the host starts one worker with its own connection.
 * It runs `wal_checkpoint(PASSIVE)` every intervalMs: the copy and the syncs happen there while
 * the host keeps committing (a passive checkpoint takes no lock a writer needs). Once the worker
 * is ready the host's connection stops checkpointing (`wal_autocheckpoint = 0`).
 *
 * A passive checkpoint cannot reset the WAL while commits keep coming (a commit lands during
 * every sync), so under sustained load the file grows. When the worker reports restartFrames
 * frames, the host's connection runs one passive checkpoint itself: only the frames since the
 * worker's are left to copy, and it syncs (the old stall, every 32 MB of WAL instead of every
 * 4 MB); its next commit then starts the WAL from the start. (A TRUNCATE from the worker would
 * hold the host's writes as long, and it waits for a moment between two commits, which under
 * load came late: the WAL reached 100 MB in a test.)
 *
 * A worker that fails or exits gives the checkpoints back to the host's connection (logged once).
 */
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import type { SqliteDb } from './database';

/** Audit rows committed before the worker is worth a thread. */
export const START_AFTER_ROWS = 1000;
/** SQLite's default, given back to the host's connection when the worker stops. */
const AUTOCHECKPOINT_PAGES = 1000;

export interface CheckpointerOptions {
  intervalMs?: number;
  /** WAL frames (pages) past which the host connection checkpoints once itself, so the WAL restarts */
  restartFrames?: number;
  /** rows before the worker starts (default START_AFTER_ROWS) */
  startAfterRows?: number;
  log?: (line: string) => void;
}

export interface CheckpointStats {
  /** the worker is running and the host's connection does not checkpoint */
  active: boolean;
  /** the worker's checkpoints that found frames */
  checkpoints: number;
  /** the host connection's own, when the WAL reached restartFrames */
  hostCheckpoints: number;
  /** the last passive checkpoint's WAL size and frames copied (SQLite's log / checkpointed) */
  lastLog: number;
  lastCheckpointed: number;
}

interface WorkerReport {
  ready?: true;
  log?: number;
  checkpointed?: number;
  error?: string;
}

/**
 * The worker's code: stands alone (it runs as text), loads better-sqlite3 from the path it is
 * given and reports each checkpoint that did something.
 */
function checkpointWorkerMain(sqlitePath: string, file: string, intervalMs: number): void {
  const { parentPort } = process.getBuiltinModule('node:worker_threads');
  const { createRequire: requireFrom } = process.getBuiltinModule('node:module');
  const Database = requireFrom(sqlitePath)(sqlitePath) as typeof import('better-sqlite3');
  const db = new Database(file, { fileMustExist: true });
  const passive = db.prepare('PRAGMA wal_checkpoint(PASSIVE)');
  let lastLog = -1;
  const tick = () => {
    try {
      const r = passive.get() as { busy: number; log: number; checkpointed: number };
      if (r.log !== lastLog && r.log > 0) parentPort!.postMessage({ log: r.log, checkpointed: r.checkpointed });
      lastLog = r.log;
    } catch (e) {
      parentPort!.postMessage({ error: String(e) });
    }
  };
  const timer = setInterval(tick, intervalMs);
  parentPort!.on('message', (m: unknown) => {
    if (m !== 'stop') return;
    clearInterval(timer);
    db.close();
    parentPort!.close();
  });
  parentPort!.postMessage({ ready: true });
}

export class WalCheckpointer {
  private worker: Worker | undefined;
  private rows = 0;
  private stopped = false;
  private failed = false;
  private readonly s: CheckpointStats = {
    active: false,
    checkpoints: 0,
    hostCheckpoints: 0,
    lastLog: 0,
    lastCheckpointed: 0,
  };
  private readonly intervalMs: number;
  private readonly restartFrames: number;
  private readonly startAfterRows: number;
  private readonly log: (line: string) => void;

  /** `db`: the host's connection; the worker opens the same file (`db.name`) */
  constructor(
    private readonly db: SqliteDb,
    o: CheckpointerOptions = {},
  ) {
    this.intervalMs = o.intervalMs ?? 250;
    this.restartFrames = o.restartFrames ?? 8192;
    this.startAfterRows = o.startAfterRows ?? START_AFTER_ROWS;
    this.log = o.log ?? (() => undefined);
  }

  /** The host committed `n` rows; the worker starts once enough have come. */
  readonly wrote = (n: number): void => {
    if (this.worker || this.stopped || this.failed || this.db.memory) return;
    this.rows += n;
    if (this.rows >= this.startAfterRows) this.start();
  };

  stats(): CheckpointStats {
    return { ...this.s };
  }

  private start(): void {
    const sqlitePath = createRequire(import.meta.url).resolve('better-sqlite3');
    const args = [sqlitePath, this.db.name, this.intervalMs].map((a) => JSON.stringify(a));
    const worker = new Worker(`(${checkpointWorkerMain.toString()})(${args.join(', ')});`, {
      eval: true,
      resourceLimits: { maxYoungGenerationSizeMb: 2, maxOldGenerationSizeMb: 16 },
    });
    worker.unref();
    this.worker = worker;
    worker.on('message', (m: WorkerReport) => {
      if (m.ready) {
        if (this.stopped) return;
        this.db.pragma('wal_autocheckpoint = 0');
        this.s.active = true;
      } else if (m.error) this.fail(`a checkpoint failed: ${m.error}`);
      else {
        this.s.checkpoints++;
        this.s.lastLog = m.log ?? 0;
        this.s.lastCheckpointed = m.checkpointed ?? 0;
        if (this.s.lastLog >= this.restartFrames && this.s.active && this.db.open) {
          // never waits: busy (the worker is at it) just means next time
          this.db.pragma('wal_checkpoint(PASSIVE)');
          this.s.hostCheckpoints++;
        }
      }
    });
    worker.on('error', (e) => this.fail(e.message));
    worker.on('exit', (code) => {
      if (!this.stopped) this.fail(`the worker exited with code ${code}`);
    });
  }

  /** Checkpoints go back to the host's connection; said once, never retried (a broken thread stays broken). */
  private fail(why: string): void {
    if (this.failed || this.stopped) return;
    this.failed = true;
    this.giveBack();
    this.log(`sqlite: WAL checkpoints are back on the request path (${why})`);
    void this.worker?.terminate();
    this.worker = undefined;
  }

  private giveBack(): void {
    this.s.active = false;
    if (this.db.open) this.db.pragma(`wal_autocheckpoint = ${AUTOCHECKPOINT_PAGES}`);
  }

  /** Stops the worker (before the host's connection closes, so that close is the last). */
  async close(): Promise<void> {
    this.stopped = true;
    const w = this.worker;
    this.worker = undefined;
    if (!w) return;
    this.giveBack();
    const exited = new Promise<void>((r) => w.once('exit', () => r()));
    w.postMessage('stop');
    const timer = setTimeout(() => void w.terminate(), 2000);
    await exited;
    clearTimeout(timer);
  }
}
