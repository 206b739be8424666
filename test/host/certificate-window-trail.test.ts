/**
 * The certificate commit window's trail and its refusals (#35), on TlsManager with private files
 * and vitest's fake clock: the piece files' text and mode after an ingest, a commit and a
 * rollback (a removed piece comes back too), the audit rows and rolled_back events each step
 * writes, the exact refusal of each request that cannot be done, and what a swap or a rollback
 * that fails leaves behind.
 */
import { chmodSync, existsSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { PIECES } from '../../handlers/certificate/contract';
import { makePki, type Pki } from '../helpers/certificate-pki';
import { allPaths, closeWindowHosts, windowHost } from '../helpers/tls-window';
import { privateDir } from '../helpers/tmp';

let pki: Pki;
beforeAll(() => {
  pki = makePki(privateDir('window-trail-pki'));
});

const T0 = 1_800_000_000_000;
afterEach(() => {
  vi.useRealTimers();
  closeWindowHosts();
});

const A_MODES = { root: 0o644, intermediate: 0o644, server: 0o644, private_key: 0o600 };

describe('the files and the audit trail of a window', () => {
  it('a rollback puts back each piece as it was: text and mode; the audit says ingest then rollback', async () => {
    vi.useFakeTimers({ now: T0 });
    const w = windowHost({ seconds: 30, seed: pki.a });
    // modes of the host's own choosing, which the ingest does not keep but the rollback restores
    chmodSync(w.paths.private_key, 0o640);
    chmodSync(w.paths.server, 0o444);
    expect(await w.manager.ingest(pki.b, 'req-1')).toEqual({
      ok: true,
      confirmationTimeout: 30,
      resolutions: PIECES.map((p) => ({ piece: p, output: w.paths[p] })),
    });
    expect([w.files(), w.modes()]).toEqual([pki.b, A_MODES]);
    expect(w.journal()).toMatchObject({ kind: 'ingest', deadline: T0 + 30_000, startedAt: T0, changed: PIECES });
    await vi.advanceTimersByTimeAsync(30_000);
    expect(w.files()).toEqual(pki.a);
    expect(w.modes()).toEqual({ ...A_MODES, server: 0o444, private_key: 0o640 });
    expect([w.journal(), existsSync(w.previousDir), vi.getTimerCount()]).toEqual([null, false, 0]);
    expect(w.audit()).toEqual([
      {
        kind: 'certificate/ingest',
        requestId: 'req-1',
        argv: allPaths(w.paths),
        note: 'root, intermediate, server, private_key; commit due in 30 s',
      },
      {
        kind: 'certificate/rollback',
        requestId: null,
        argv: allPaths(w.paths),
        note: 'no commit within the commit window',
      },
    ]);
  });

  it('removed pieces: gone during the window, back (text and mode) after its rollback', async () => {
    vi.useFakeTimers({ now: T0 });
    const w = windowHost({ seconds: 10, seed: pki.a });
    expect(await w.manager.ingest({ root: '', intermediate: '' }, 'req-1')).toEqual({
      ok: true,
      confirmationTimeout: 10,
      resolutions: [
        { piece: 'root', output: w.paths.root },
        { piece: 'intermediate', output: w.paths.intermediate },
      ],
    });
    expect(w.files()).toEqual({ root: null, intermediate: null, server: pki.a.server, private_key: pki.a.private_key });
    expect(w.audit()).toEqual([
      {
        kind: 'certificate/ingest',
        requestId: 'req-1',
        argv: [w.paths.root, w.paths.intermediate],
        note: 'root removed, intermediate removed; commit due in 10 s',
      },
    ]);
    await vi.advanceTimersByTimeAsync(10_000);
    expect([w.files(), w.modes()]).toEqual([pki.a, A_MODES]);
    expect(w.rollbacks()).toEqual([{ reason: 'no commit within the commit window', pieces: ['root', 'intermediate'] }]);
  });

  it('a commit keeps a removal and says so in the audit; the pending state is gone', async () => {
    vi.useFakeTimers({ now: T0 });
    const w = windowHost({ seconds: 10, seed: pki.a });
    await w.manager.ingest({ root: '' }, 'req-1');
    expect(await w.manager.commit('req-2')).toEqual({ pieces: ['root'] });
    expect([w.journal(), existsSync(w.previousDir), vi.getTimerCount()]).toEqual([null, false, 0]);
    expect(w.audit()).toEqual([
      {
        kind: 'certificate/ingest',
        requestId: 'req-1',
        argv: [w.paths.root],
        note: 'root removed; commit due in 10 s',
      },
      { kind: 'certificate/commit', requestId: 'req-2', argv: [w.paths.root], note: 'previous pieces discarded' },
    ]);
    await vi.advanceTimersByTimeAsync(3_600_000);
    expect(w.files()).toEqual({ ...pki.a, root: null });
    expect(w.rollbacks()).toEqual([]);
  });
});

describe('refusals', () => {
  /** After a refusal: the files, no window, no audit row, no event. */
  const untouched = (w: ReturnType<typeof windowHost>) => {
    expect([w.files(), w.journal(), existsSync(w.previousDir), vi.getTimerCount()]).toEqual([pki.a, null, false, 0]);
    expect([w.audit(), w.rollbacks(), w.reloads()]).toEqual([[], [], 0]);
  };

  it('an ingest of no piece', async () => {
    vi.useFakeTimers({ now: T0 });
    const w = windowHost({ seconds: 10, seed: pki.a });
    expect(await w.manager.ingest({}, 'r')).toEqual({
      ok: false,
      problems: [{ piece: 'server', message: 'no piece given' }],
    });
    untouched(w);
  });

  it('an ingest whose pieces do not fit: the problems, nothing swapped', async () => {
    vi.useFakeTimers({ now: T0 });
    const w = windowHost({ seconds: 10, seed: pki.a });
    expect(await w.manager.ingest({ private_key: pki.otherKey }, 'r')).toEqual({
      ok: false,
      problems: [{ piece: 'private_key', message: 'does not match the server certificate' }],
    });
    expect(await w.manager.ingest({ server: '' }, 'r')).toEqual({
      ok: false,
      problems: [{ piece: 'server', message: 'a server certificate is required (HTTPS cannot be served without one)' }],
    });
    untouched(w);
  });

  it('a second ingest while one waits: a conflict naming the deadline', async () => {
    vi.useFakeTimers({ now: T0 });
    const w = windowHost({ seconds: 60, seed: pki.a });
    await w.manager.ingest({ root: '' }, 'r');
    await expect(w.manager.ingest(pki.b, 'r2')).rejects.toMatchObject({
      code: 'conflict',
      message: `an ingested certificate is waiting for a commit until ${new Date(T0 + 60_000).toISOString()}; commit it or let it roll back first`,
    });
    expect(w.files()).toEqual({ ...pki.a, root: null });
    expect(w.audit().map((a) => a.kind)).toEqual(['certificate/ingest']);
  });

  it('a commit with nothing pending', async () => {
    vi.useFakeTimers({ now: T0 });
    const w = windowHost({ seconds: 10, seed: pki.a });
    await expect(w.manager.commit('r')).rejects.toMatchObject({
      code: 'conflict',
      message: 'no ingested certificate is waiting for a commit',
    });
    untouched(w);
  });

  it('a commit after the deadline: refused, and the rollback is audited under its request', async () => {
    vi.useFakeTimers({ now: T0, toFake: ['Date'] });
    const w = windowHost({ seconds: 5, seed: pki.a });
    await w.manager.ingest(pki.b, 'r1');
    vi.setSystemTime(T0 + 5_000);
    await expect(w.manager.commit('r2')).rejects.toMatchObject({ code: 'conflict' });
    expect(w.files()).toEqual(pki.a);
    expect(w.audit()[1]).toEqual({
      kind: 'certificate/rollback',
      requestId: 'r2',
      argv: allPaths(w.paths),
      note: 'no commit within the commit window',
    });
    expect(w.rollbacks()).toEqual([{ reason: 'no commit within the commit window', pieces: PIECES }]);
    w.manager.stop();
  });
});

describe('failures', () => {
  it('TLS refuses the new pieces: they are swapped back, the ingest is a bad_request, no window', async () => {
    vi.useFakeTimers({ now: T0 });
    const w = windowHost({
      seconds: 10,
      seed: pki.a,
      reloadTls: (n) => {
        if (n === 1) throw new Error('reload broke');
      },
    });
    await expect(w.manager.ingest(pki.b, 'req-1')).rejects.toMatchObject({
      code: 'bad_request',
      message: 'the new pieces could not be served (reload broke); the previous ones were restored',
    });
    expect([w.files(), w.journal(), vi.getTimerCount(), w.reloads()]).toEqual([pki.a, null, 0, 2]);
    expect(w.audit()).toEqual([
      {
        kind: 'certificate/rollback',
        requestId: 'req-1',
        argv: allPaths(w.paths),
        note: 'the swap failed: reload broke',
      },
    ]);
    expect(w.rollbacks()).toEqual([{ reason: 'the swap failed: reload broke', pieces: PIECES }]);
    expect(w.log).toEqual(['certificate: previous TLS certificate restored (the swap failed: reload broke)']);
  });

  it('a reload that fails after the rollback too is logged; the files are back all the same', async () => {
    vi.useFakeTimers({ now: T0 });
    const w = windowHost({
      seconds: 10,
      seed: pki.a,
      reloadTls: () => {
        throw new Error('reload broke');
      },
    });
    await expect(w.manager.ingest(pki.b, 'req-1')).rejects.toMatchObject({ code: 'bad_request' });
    expect(w.files()).toEqual(pki.a);
    expect(w.log).toEqual([
      'certificate: TLS reload after rollback failed: reload broke',
      'certificate: previous TLS certificate restored (the swap failed: reload broke)',
    ]);
  });

  it('a rollback at the deadline that fails is logged, and its journal stays for the next start', async () => {
    vi.useFakeTimers({ now: T0 });
    const w = windowHost({ seconds: 10, seed: pki.a });
    await w.manager.ingest(pki.b, 'r');
    const copy = join(w.previousDir, 'server');
    rmSync(copy);
    await vi.advanceTimersByTimeAsync(10_000);
    expect(w.log).toEqual([`certificate: rollback failed: ENOENT: no such file or directory, open '${copy}'`]);
    expect(w.journal()).toMatchObject({ kind: 'ingest', deadline: T0 + 10_000 });
    expect(w.rollbacks()).toEqual([]);
  });
});
