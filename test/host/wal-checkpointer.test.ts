/**
 * WAL checkpoints move to a worker thread once the host writes audit rows fast: the host's own
 * connection stops checkpointing, the worker copies the WAL into the database file, a WAL that
 * sustained writes keep growing is restarted, and the checkpoints go back if the worker fails.
 */
import { describe, expect, it } from 'vitest';
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { openDatabase, type SqliteDb } from '../../runtime/db/database';
import { BatchedAudit, type AuditRow } from '../../runtime/db/audit';
import { START_AFTER_ROWS, WalCheckpointer } from '../../runtime/db/checkpointer';
import { privateDir } from '../helpers/tmp';

const row = (): AuditRow => ({
  at: Date.now(),
  requestId: 'r-0000',
  kind: 'exec',
  argv: JSON.stringify(['/usr/bin/klist', '-c', 'FILE:/tmp/krb5cc_0', 'x'.repeat(200)]),
  exitCode: 0,
  durationMs: 1,
  note: null,
});

const autocheckpoint = (db: SqliteDb) => db.pragma('wal_autocheckpoint', { simple: true }) as number;
const size = (f: string) => {
  try {
    return statSync(f).size;
  } catch {
    return 0;
  }
};
const until = async (what: () => boolean, ms = 10_000) => {
  const t0 = Date.now();
  while (!what()) {
    if (Date.now() - t0 > ms) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 20));
  }
};

function setup(o: ConstructorParameters<typeof WalCheckpointer>[1] = {}) {
  const file = join(privateDir('ballast-wal'), 'db.sqlite');
  const db = openDatabase(file);
  const logs: string[] = [];
  const ck = new WalCheckpointer(db, { intervalMs: 20, log: (l) => logs.push(l), ...o });
  const audit = new BatchedAudit(db, { maxAgeDays: 30, maxRows: 1_000_000 }, () => undefined, ck.wrote);
  const write = (n: number) => {
    for (let i = 0; i < n; i++) audit.write(row());
    audit.flush();
  };
  /** the worker first, so the host connection's close is the last */
  const close = async () => {
    await ck.close();
    audit.close();
    db.close();
  };
  return { file, db, ck, audit, write, logs, close };
}

describe('WalCheckpointer', () => {
  it('starts after START_AFTER_ROWS rows; then the worker, not the host connection, fills the database file', async () => {
    const t = setup();
    try {
      t.write(START_AFTER_ROWS - 1);
      expect(t.ck.stats().active).toBe(false);
      expect(autocheckpoint(t.db)).toBe(1000);
      t.write(1);
      await until(() => t.ck.stats().active);
      expect(autocheckpoint(t.db)).toBe(0);
      // the host's connection no longer checkpoints: without the worker this stays in the WAL
      const before = size(t.file);
      t.write(3000);
      await until(() => t.ck.stats().checkpoints > 0 && t.ck.stats().lastCheckpointed === t.ck.stats().lastLog);
      await until(() => size(t.file) > before + 200_000);
      const n = t.db.prepare('SELECT COUNT(*) AS n FROM audit_log').get() as { n: number };
      expect(n.n).toBe(START_AFTER_ROWS + 3000);
      expect(t.logs).toEqual([]);
    } finally {
      await t.close();
    }
  });

  it('restarts a WAL that sustained writes keep growing (the host connection checkpoints once), so the file is reused', async () => {
    const t = setup({ startAfterRows: 1, restartFrames: 64 });
    try {
      t.write(1);
      await until(() => t.ck.stats().active);
      // The WAL file is a ring: it is as big as its longest run between two restarts. So what
      // keeps it bounded is that it restarts again and again under load, counted here from the
      // worker's reports (fewer frames than the report before, after a host checkpoint). How
      // big one run gets depends on how fast this machine syncs, so no size is asserted.
      // Without the host's checkpoint a passive checkpoint never finds a pause between these
      // commits, the count stays 0 and the WAL grows by every commit.
      let restarts = 0;
      let peakLog = 0;
      let seenHostCheckpoints = 0;
      let commits = 0;
      const t0 = Date.now();
      while (restarts < 3 && Date.now() - t0 < 20_000) {
        t.write(16);
        commits++;
        const { lastLog, hostCheckpoints } = t.ck.stats();
        if (hostCheckpoints > seenHostCheckpoints && lastLog < peakLog) {
          restarts++;
          seenHostCheckpoints = hostCheckpoints;
          peakLog = 0;
        }
        peakLog = Math.max(peakLog, lastLog);
        await new Promise((r) => setImmediate(r));
      }
      expect(restarts, `${commits} commits in ${Date.now() - t0} ms`).toBe(3);
      expect(t.ck.stats().hostCheckpoints).toBeGreaterThanOrEqual(3);
      expect(t.logs).toEqual([]);
    } finally {
      await t.close();
    }
  });

  it('a worker that dies gives the checkpoints back to the host connection, said once', async () => {
    const t = setup({ startAfterRows: 1 });
    try {
      t.write(1);
      await until(() => t.ck.stats().active);
      await (t.ck as unknown as { worker: { terminate(): Promise<number> } }).worker.terminate();
      await until(() => t.logs.length > 0);
      // the line comes from the terminated worker's 'exit', the last event a worker emits
      expect(t.logs).toEqual(['sqlite: WAL checkpoints are back on the request path (the worker exited with code 1)']);
      expect(autocheckpoint(t.db)).toBe(1000);
      expect(t.ck.stats().active).toBe(false);
      // No second worker: the rows reach wrote() within flush (synchronously), where a worker
      // would be started, so its absence is checked at once, without a wait. With no worker
      // left, nothing is there to say a second line.
      const before = t.ck.stats();
      t.write(2000);
      expect((t.ck as unknown as { worker?: unknown }).worker).toBeUndefined();
      expect(t.ck.stats()).toEqual(before);
      expect(t.logs.length).toBe(1);
    } finally {
      await t.close();
    }
  });

  it('close stops the worker and gives the checkpoints back; the database closes cleanly after', async () => {
    const t = setup({ startAfterRows: 1 });
    t.write(10);
    await until(() => t.ck.stats().active);
    await t.ck.close();
    expect(autocheckpoint(t.db)).toBe(1000);
    t.write(10); // no worker after close
    expect((t.ck as unknown as { worker?: unknown }).worker).toBeUndefined();
    t.audit.close();
    t.db.close();
    // the last connection's close checkpointed and removed the WAL
    expect(size(`${t.file}-wal`)).toBe(0);
    expect(t.logs).toEqual([]);
  });

  it('an in-memory database never gets a worker', async () => {
    const db = openDatabase(':memory:');
    const ck = new WalCheckpointer(db, { startAfterRows: 1 });
    ck.wrote(10_000);
    expect((ck as unknown as { worker?: unknown }).worker).toBeUndefined();
    await ck.close();
    db.close();
  });
});
