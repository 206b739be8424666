/**
 * The certificate commit window (#35 item 3), on TlsManager with private files and a fake clock:
 * the rollback comes exactly when the window closes (not a tenth of it, not later), a commit
 * inside the window keeps the new pieces for good, a commit after it is refused and rolls back,
 * and a host restarted with a pending window rolls back on the remaining time, or at once when it
 * ran out while the host was down. No real time passes: the timers are vitest's.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { certificateSettings, PIECES, type Piece } from '../../handlers/certificate/contract';
import { TlsManager } from '../../runtime/areas/certificate/ops';
import { TlsFileStore } from '../../runtime/areas/certificate/tls-store';
import { openDatabase, type SqliteDb } from '../../runtime/db/database';
import { EventsProducer } from '../../runtime/events';
import type { SystemService } from '../../runtime/system/service';
import { makePki, type Pki } from '../helpers/certificate-pki';
import { privateDir } from '../helpers/tmp';

let pki: Pki;
beforeAll(() => {
  pki = makePki(privateDir('window-pki'));
});

const T0 = 1_800_000_000_000;
const dbs: SqliteDb[] = [];
afterEach(() => {
  vi.useRealTimers();
  for (const d of dbs.splice(0)) d.close();
});

/** A manager over private piece files holding chain a; `seconds` is the commit window. */
function setup(seconds: number, dir = privateDir('window')) {
  const paths = Object.fromEntries(PIECES.map((p) => [p, join(dir, 'tls', `${p}.pem`)])) as Record<Piece, string>;
  mkdirSync(join(dir, 'tls'), { recursive: true });
  const fresh = !dbs.length;
  if (fresh) for (const p of PIECES) writeFileSync(paths[p], pki.a[p], { mode: p === 'private_key' ? 0o600 : 0o644 });
  const db = openDatabase(join(dir, 'ballast.db'));
  dbs.push(db);
  const log: string[] = [];
  let reloads = 0;
  const manager = new TlsManager({
    store: new TlsFileStore({ paths, dir: join(dir, 'certificate') }),
    settings: certificateSettings.parse({ commitWindowSeconds: seconds }),
    db,
    events: new EventsProducer(db),
    system: {} as SystemService,
    openssl: '/usr/bin/openssl',
    reloadTls: () => void reloads++,
    log: (l) => void log.push(l),
  });
  const server = () => readFileSync(paths.server, 'utf8');
  const rollbacks = () =>
    (db.prepare("SELECT data FROM events WHERE kind = 'certificate.tls.rolled_back'").all() as { data: string }[]).map(
      (r) => JSON.parse(r.data) as { reason: string },
    );
  return { dir, manager, server, rollbacks, log, reloads: () => reloads };
}

describe('the commit window', () => {
  it('rolls back exactly when the window closes, not a millisecond before', async () => {
    vi.useFakeTimers({ now: T0 });
    const w = setup(30);
    expect(await w.manager.ingest(pki.b, 'req-1')).toMatchObject({ ok: true, confirmationTimeout: 30 });
    expect(w.server()).toBe(pki.b.server);
    const journal = JSON.parse(readFileSync(join(w.dir, 'certificate/journal.json'), 'utf8')) as { deadline: number };
    expect(journal.deadline).toBe(T0 + 30_000);
    await vi.advanceTimersByTimeAsync(29_999);
    expect([w.server(), w.rollbacks()]).toEqual([pki.b.server, []]);
    await vi.advanceTimersByTimeAsync(1);
    expect(w.server()).toBe(pki.a.server);
    expect(w.rollbacks()).toEqual([
      { reason: 'no commit within the commit window', pieces: ['root', 'intermediate', 'server', 'private_key'] },
    ]);
    expect(w.reloads()).toBe(2);
    expect(w.log).toContain('certificate: previous TLS certificate restored (no commit within the commit window)');
    await expect(w.manager.commit('req-2')).rejects.toThrow('no ingested certificate is waiting for a commit');
  });

  it('a commit inside the window keeps the new pieces past it', async () => {
    vi.useFakeTimers({ now: T0 });
    const w = setup(10);
    expect((await w.manager.ingest(pki.b, 'r')).ok).toBe(true);
    await vi.advanceTimersByTimeAsync(9_999);
    expect(await w.manager.commit('r2')).toEqual({ pieces: ['root', 'intermediate', 'server', 'private_key'] });
    await vi.advanceTimersByTimeAsync(3_600_000);
    expect([w.server(), w.rollbacks()]).toEqual([pki.b.server, []]);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('a commit when the window has closed but its timer has not run yet: refused, rolled back', async () => {
    vi.useFakeTimers({ now: T0, toFake: ['Date'] });
    const w = setup(5);
    await w.manager.ingest(pki.b, 'r');
    vi.setSystemTime(T0 + 5_000);
    await expect(w.manager.commit('r2')).rejects.toThrow(
      `the commit window closed at ${new Date(T0 + 5_000).toISOString()}; the previous certificate was restored`,
    );
    expect(w.server()).toBe(pki.a.server);
    expect(w.rollbacks()).toHaveLength(1);
    w.manager.stop();
  });

  it('a second ingest while one waits for its commit is a conflict', async () => {
    vi.useFakeTimers({ now: T0 });
    const w = setup(60);
    await w.manager.ingest(pki.b, 'r');
    await expect(w.manager.ingest(pki.a, 'r')).rejects.toThrow(/waiting for a commit until/);
    w.manager.stop();
  });
});

describe('a host restarted with a window open', () => {
  it('rolls back when the rest of the window has run, counted from the ingest', async () => {
    vi.useFakeTimers({ now: T0 });
    const first = setup(20);
    await first.manager.ingest(pki.b, 'r');
    first.manager.stop(); // the host dies: its timer with it
    vi.setSystemTime(T0 + 15_000);
    const second = setup(20, first.dir);
    second.manager.recover();
    expect(second.log).toEqual([
      `certificate: a commit is due by ${new Date(T0 + 20_000).toISOString()}; the previous certificate comes back if none arrives`,
    ]);
    await vi.advanceTimersByTimeAsync(4_999);
    expect(second.server()).toBe(pki.b.server);
    await vi.advanceTimersByTimeAsync(1);
    expect(second.server()).toBe(pki.a.server);
    expect(second.rollbacks().map((r) => r.reason)).toEqual(['no commit within the commit window']);
  });

  it('a window that ran out while the host was down is rolled back at once', async () => {
    vi.useFakeTimers({ now: T0 });
    const first = setup(20);
    await first.manager.ingest(pki.b, 'r');
    first.manager.stop();
    vi.setSystemTime(T0 + 20_000);
    const second = setup(20, first.dir);
    second.manager.recover();
    expect(second.server()).toBe(pki.a.server);
    expect(second.rollbacks().map((r) => r.reason)).toEqual(['the commit window ran out while the host was down']);
  });
});
