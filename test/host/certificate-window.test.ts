/**
 * The certificate commit window (#35 item 3), on TlsManager with private files and a fake clock:
 * the rollback comes exactly when the window closes (not a tenth of it, not later), a commit
 * inside the window keeps the new pieces for good, a commit after it is refused and rolls back,
 * and a host restarted with a pending window rolls back on the remaining time, or at once when it
 * ran out while the host was down; a regenerate cut off mid-swap is rolled back at start (and
 * neither a commit nor the timer touches its journal); what interrupted writes left is swept.
 * No real time passes: the timers are vitest's. The trail (files, modes, audit rows, refusals,
 * failures) is in certificate-window-trail.test.ts.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { PIECES } from '../../handlers/certificate/contract';
import { makePki, type Pki } from '../helpers/certificate-pki';
import { closeWindowHosts, windowHost } from '../helpers/tls-window';
import { privateDir } from '../helpers/tmp';

let pki: Pki;
beforeAll(() => {
  pki = makePki(privateDir('window-pki'));
});

const T0 = 1_800_000_000_000;
const A_MODES = { root: 0o644, intermediate: 0o644, server: 0o644, private_key: 0o600 };
afterEach(() => {
  vi.useRealTimers();
  closeWindowHosts();
});

/** A manager over private piece files holding chain a; `seconds` is the commit window. */
const setup = (seconds: number, dir?: string) => windowHost({ seconds, dir, seed: pki.a });

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
    // the commit clears the pending state at once: no timer left to fire, no journal, no copies
    expect([vi.getTimerCount(), w.journal(), existsSync(w.previousDir)]).toEqual([0, null, false]);
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
    expect([second.files(), second.modes(), second.journal(), vi.getTimerCount()]).toEqual([pki.a, A_MODES, null, 0]);
    expect(second.rollbacks().map((r) => r.reason)).toEqual(['the commit window ran out while the host was down']);
  });

  it('a regenerate cut off mid-swap is rolled back at once, with no rolled_back event (no window was open)', async () => {
    vi.useFakeTimers({ now: T0 });
    const first = setup(20);
    // what regenerate does up to its swap: the journal, then the new pieces
    first.store.begin('regenerate', T0, [...PIECES]);
    first.store.apply({
      server: pki.b.server,
      private_key: pki.b.private_key,
      root: undefined,
      intermediate: undefined,
    });
    vi.setSystemTime(T0 + 1_000);
    const second = setup(20, first.dir);
    second.manager.recover();
    expect([second.files(), second.modes(), second.journal(), vi.getTimerCount()]).toEqual([pki.a, A_MODES, null, 0]);
    expect(second.log).toEqual([
      'certificate: previous TLS certificate restored (the host stopped while regenerating the certificate)',
    ]);
    expect(second.audit()).toEqual([
      {
        kind: 'certificate/rollback',
        requestId: null,
        argv: PIECES.map((p) => second.paths[p]),
        note: 'the host stopped while regenerating the certificate',
      },
    ]);
    expect(second.rollbacks()).toEqual([]);
  });

  it('what interrupted writes left is swept: temp files, a staged key, copies no journal refers to', () => {
    vi.useFakeTimers({ now: T0 });
    const first = setup(20);
    const temps = [
      join(first.dir, 'tls', '.server.pem.tmp-0123456789ab'),
      join(first.dir, 'certificate', '.journal.json.tmp-abcdef012345'),
    ];
    const staged = `${first.paths.private_key}.new`;
    mkdirSync(first.previousDir, { recursive: true });
    for (const f of [...temps, staged, join(first.previousDir, 'server')]) writeFileSync(f, 'left over');
    const second = setup(20, first.dir);
    second.manager.recover();
    expect(second.log).toEqual(['certificate: removed 2 temp file(s) of interrupted writes']);
    expect([...temps, staged, first.previousDir].map((f) => existsSync(f))).toEqual([false, false, false, false]);
    expect([second.files(), second.audit(), vi.getTimerCount()]).toEqual([pki.a, [], 0]);
  });
});

describe('a regenerate journal is for recover alone', () => {
  it('neither a commit nor the window timer acts on one', async () => {
    vi.useFakeTimers({ now: T0 });
    const w = setup(10);
    await w.manager.ingest(pki.b, 'r1');
    // the journal a regenerate writes before its swap, found by the armed timer and a commit
    w.store.begin('regenerate', T0, [...PIECES]);
    await expect(w.manager.commit('r2')).rejects.toMatchObject({
      code: 'conflict',
      message: 'no ingested certificate is waiting for a commit',
    });
    await vi.advanceTimersByTimeAsync(10_000);
    expect(w.journal()).toMatchObject({ kind: 'regenerate', deadline: T0 });
    expect(w.audit().map((a) => a.kind)).toEqual(['certificate/ingest']);
    expect([w.files(), w.rollbacks(), w.log]).toEqual([pki.b, [], []]);
  });
});
