/**
 * SystemService (runtime/system/service.ts) around its commands: op registration, answers as
 * data, cancel and release, the audit rows and the watchers' records, the built-in ops' refusals.
 * A scripted backend stands in for the tools (system-service.test.ts runs the real ones); files,
 * the journal and the secret box are the real ones on a private directory.
 */
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { ExecOptions, ExecResult, PtyResult } from '../../handlers/core/system';
import { openDatabase } from '../../runtime/db/database';
import type { AuditRow } from '../../runtime/db/audit';
import { ConfinedFiles } from '../../runtime/system/files';
import { IntentJournal } from '../../runtime/system/journal';
import { SecretBox } from '../../runtime/system/secret-box';
import { freshResult, SystemService, type CommandRecord } from '../../runtime/system/service';
import { RequestStop, SystemRefusal, type CommandBackend, type StopSignal } from '../../runtime/system/types';
import { privateDir } from '../helpers/tmp';

const dir = privateDir('ballast-sys-ops');
const etc = join(dir, 'etc');
mkdirSync(etc);
const db = openDatabase(join(dir, 'db.sqlite'));
afterAll(() => db.close());
const files = new ConfinedFiles([{ path: etc, writable: true }], join(dir, 'backups'));

const result = (o: Partial<ExecResult> = {}): ExecResult => ({
  code: 0,
  signal: null,
  stdout: '',
  stderr: '',
  timedOut: false,
  truncated: false,
  durationMs: 5,
  ...o,
});

/** Each exec waits for `gate` (when set) or its request's stop, and keeps what it was given. */
class Scripted implements CommandBackend {
  /** `stopped`: whether the command's request was cancelled by the time it ended */
  calls: { argv: string[]; opts: ExecOptions; stop?: StopSignal; stopped?: boolean }[] = [];
  gate?: Promise<void>;
  /** a tool that takes its time to exit: waits for `gate` even once stopped */
  deaf = false;
  next: Partial<ExecResult> = {};
  async exec(argv: string[], opts: ExecOptions, stop?: StopSignal): Promise<ExecResult> {
    const call: (typeof this.calls)[number] = { argv, opts, stop };
    this.calls.push(call);
    if (this.gate) {
      let forget = () => undefined as void;
      const stopped = new Promise<void>((r) => (forget = (!this.deaf && stop?.onStop(r)) || forget));
      await Promise.race([this.gate, stopped]);
      forget();
    }
    call.stopped = stop?.stopped;
    return result(stop?.stopped ? { code: 143, signal: 'SIGTERM' } : this.next);
  }
  async pty(argv: string[]): Promise<PtyResult> {
    this.calls.push({ argv, opts: {} });
    return { code: 0, output: 'secret echo', timedOut: false, durationMs: 3 } as unknown as PtyResult;
  }
}

function make(o: Partial<ConstructorParameters<typeof SystemService>[0]> = {}) {
  const backend = new Scripted();
  const rows: AuditRow[] = [];
  const started: [string | undefined, readonly string[]][] = [];
  const ended: CommandRecord[] = [];
  const progress: [string | undefined, Record<string, unknown>][] = [];
  const logs: string[] = [];
  const service = new SystemService({
    backend,
    files,
    db,
    concurrency: 1,
    queue: 4,
    observe: (r) => rows.push(r),
    onCommandStart: (id, argv) => started.push([id, argv]),
    onCommand: (c) => ended.push(c),
    onProgress: (id, p) => progress.push([id, p]),
    log: (l) => logs.push(l),
    ...o,
  });
  return { service, backend, rows, started, ended, progress, logs };
}

const BUILT_INS = [
  'exec',
  'pty',
  'resolve',
  'secret/seal',
  'journal/begin',
  'journal/step',
  'journal/end',
  'file/read',
  'file/write',
  'file/restore',
  'file/remove',
  'file/list',
  'file/stat',
  'job/progress',
];
/** What a cancelled request may still call: reads, resolve, progress, closing its journal. */
const AFTER_CANCEL = ['file/read', 'file/list', 'file/stat', 'resolve', 'job/progress', 'journal/end'];

const refusal = async (p: Promise<unknown>) => {
  try {
    await p;
  } catch (e) {
    if (e instanceof SystemRefusal) return [e.status, e.code, e.message];
    throw e;
  }
  throw new Error('no refusal');
};

describe('ops', () => {
  it('an area op is called with its payload and request; a name taken twice or a built-in name stops the host', async () => {
    const { service } = make();
    const seen: unknown[] = [];
    service.register('fs', { 'fs/walk': async (p, id) => (seen.push([p, id]), { walked: true }) });
    expect(await service.handle('fs/walk', { path: '/x' }, 'req-1')).toEqual({ walked: true });
    expect(seen).toEqual([[{ path: '/x' }, 'req-1']]);
    expect(() => service.register('pod', { 'fs/walk': async () => 1 })).toThrow(
      'system op fs/walk (from pod) is already registered',
    );
    for (const name of BUILT_INS)
      expect(() => service.register('pod', { [name]: async () => 1 }), name).toThrow(
        `system op ${name} (from pod) is already registered`,
      );
    expect(await refusal(service.handle('nope', {}))).toEqual([404, 'not_found', 'unknown system operation nope']);
  });

  it('answers as data: a refusal with its status, a crash as a logged 500 naming only the op', async () => {
    const { service, logs } = make();
    service.register('t', {
      't/refuse': async () => {
        throw new SystemRefusal('conflict', 'already there');
      },
      't/crash': async () => {
        throw new Error('disk on fire /secret/path');
      },
    });
    expect(await service.answer('t/refuse', () => ({}), 'req-2')).toEqual({
      ok: false,
      status: 409,
      code: 'conflict',
      message: 'already there',
    });
    expect(await service.answer('t/crash', () => ({}), undefined)).toEqual({
      ok: false,
      status: 500,
      code: 'internal',
      message: 'system operation t/crash failed',
    });
    expect(logs[0]).toMatch(/^\[-\] system\/t\/crash failed: Error: disk on fire \/secret\/path\n {4}at /);
    const unreadable = await service.answer(
      't/refuse',
      () => {
        throw new Error('bad json');
      },
      'req-3',
    );
    expect(unreadable).toMatchObject({ ok: false, status: 500, message: 'system operation t/refuse failed' });
    expect(logs[1]).toMatch(/^\[req-3\] system\/t\/refuse failed: Error: bad json/);
  });

  it('a freshResult op: its value handed over as it is to the direct binding, through toWire otherwise', async () => {
    const { service } = make();
    const tree = { n: 1 };
    service.register('t', {
      't/fresh': freshResult(
        async () => tree,
        () => 'wired',
      ),
    });
    expect(await service.answer('t/fresh', () => ({}), 'r', true)).toEqual({ ok: true, value: tree });
    expect(((await service.answer('t/fresh', () => ({}), 'r', true)) as { value: unknown }).value).toBe(tree);
    expect(await service.answer('t/fresh', () => ({}), 'r')).toEqual({ ok: true, value: 'wired' });
  });

  it('the fetch protocol: the op from the path, the request id from its header, refusals as error JSON', async () => {
    const { service, backend, rows } = make();
    const ok = await service.fetch('http://binding.internal/system/exec', {
      method: 'POST',
      headers: { 'x-request-id': 'req-fetch' },
      body: JSON.stringify({ argv: ['/bin/true'] }),
    });
    expect([ok.status, ((await ok.json()) as ExecResult).code]).toEqual([200, 0]);
    expect(backend.calls.map((c) => c.argv)).toEqual([['/bin/true']]);
    expect(rows.map((r) => [r.requestId, r.kind, r.argv])).toEqual([['req-fetch', 'exec', '["/bin/true"]']]);
    const bad = await service.fetch('http://binding.internal/system/exec', {
      method: 'POST',
      body: JSON.stringify({ argv: [] }),
    });
    expect([bad.status, await bad.json()]).toEqual([
      400,
      { error: { code: 'bad_request', message: 'argv must be a non-empty list of strings without NUL' } },
    ]);
  });
});

describe('commands, their audit rows and records', () => {
  it('argv must be a non-empty list of strings without NUL', async () => {
    const { service, backend } = make();
    for (const argv of [[], 'ls', ['/bin/ls', 3], ['/bin/ls', 'a\0b'], undefined])
      expect(await refusal(service.handle('exec', { argv }))).toEqual([
        400,
        'bad_request',
        'argv must be a non-empty list of strings without NUL',
      ]);
    expect(await refusal(service.handle('pty', { argv: [] }))).toEqual([
      400,
      'bad_request',
      'argv must be a non-empty list of strings without NUL',
    ]);
    expect(backend.calls).toEqual([]);
  });

  it('exec passes its options, audits argv, exit and duration, and tells the watchers', async () => {
    const { service, backend, rows, started, ended } = make();
    backend.next = { code: 3, stderr: 'no such thing\n', durationMs: 42 };
    const r = (await service.handle(
      'exec',
      { argv: ['/bin/x', '--', 'a'], stdin: 'in', timeoutMs: 900, env: { A: '1' }, maxOutputBytes: 10 },
      'req-4',
    )) as ExecResult;
    expect(r.code).toBe(3);
    expect(backend.calls[0].opts).toEqual({ stdin: 'in', timeoutMs: 900, env: { A: '1' }, maxOutputBytes: 10 });
    expect(rows).toEqual([
      {
        at: expect.any(Number),
        requestId: 'req-4',
        kind: 'exec',
        argv: '["/bin/x","--","a"]',
        exitCode: 3,
        durationMs: 42,
        note: null,
      },
    ]);
    expect(started).toEqual([['req-4', ['/bin/x', '--', 'a']]]);
    expect(ended).toEqual([
      {
        requestId: 'req-4',
        kind: 'exec',
        argv: ['/bin/x', '--', 'a'],
        exitCode: 3,
        durationMs: 42,
        timedOut: false,
        stderr: 'no such thing\n',
      },
    ]);
    backend.next = { code: 137, timedOut: true };
    await service.handle('exec', { argv: ['/bin/slow'] }, undefined);
    expect(rows[1]).toMatchObject({ requestId: null, note: 'timeout', exitCode: 137 });
    expect(ended[1]).toMatchObject({ requestId: undefined, timedOut: true });
  });

  it('a pty is audited without what was typed, and its record keeps no output', async () => {
    const { service, rows, ended } = make();
    await service.handle('pty', { argv: ['/usr/bin/kinit', 'u'], dialogue: [{ expect: ':', send: 'pw' }] }, 'req-5');
    expect(rows).toEqual([
      expect.objectContaining({ kind: 'pty', argv: '["/usr/bin/kinit","u"]', exitCode: 0, durationMs: 3, note: null }),
    ]);
    expect(JSON.stringify(rows)).not.toContain('pw');
    expect(ended).toEqual([
      {
        requestId: 'req-5',
        kind: 'pty',
        argv: ['/usr/bin/kinit', 'u'],
        exitCode: 0,
        durationMs: 3,
        timedOut: false,
        stderr: '',
      },
    ]);
  });

  it('file writes, restores and removes are audited with the path and what happened', async () => {
    const { service, rows } = make();
    const f = join(etc, 'a.conf');
    await service.handle('file/write', { path: f, content: 'one\n', mode: 0o640 }, 'req-6');
    await service.handle('file/write', { path: f, content: 'two\n', backup: true }, 'req-6');
    expect(readFileSync(f, 'utf8')).toBe('two\n');
    expect(await service.handle('file/restore', { path: f }, 'req-6')).toEqual({ restored: true });
    expect(readFileSync(f, 'utf8')).toBe('one\n');
    await service.handle('file/restore', { path: join(etc, 'none') }, 'req-6');
    await service.handle('file/remove', { path: join(etc, 'none') }, 'req-6');
    await service.handle('file/remove', { path: f }, 'req-6');
    expect(rows.map((r) => [r.kind, JSON.parse(r.argv) as string[], r.note])).toEqual([
      ['file/write', [f], null],
      ['file/write', [f], null],
      ['file/restore', [f], null],
      ['file/restore', [join(etc, 'none')], 'nothing to restore'],
      ['file/remove', [join(etc, 'none')], 'absent'],
      ['file/remove', [f], null],
    ]);
    expect(await service.handle('file/read', { path: f })).toEqual({ content: null });
  });
});

describe('RequestStop', () => {
  it('runs each callback once, at once for one added after the stop, never for one removed', () => {
    const stop = new RequestStop('req-1');
    const seen: string[] = [];
    const forget = stop.onStop(() => seen.push('removed'));
    stop.onStop(() => seen.push('a'));
    forget();
    forget();
    expect(stop.stopped).toBe(false);
    stop.stop();
    stop.stop();
    expect(stop.stopped).toBe(true);
    expect(seen).toEqual(['a']);
    stop.onStop(() => seen.push('late'));
    expect(seen).toEqual(['a', 'late']);
  });
});

describe('cancel and release', () => {
  it('a running command gets its stop and is audited as cancelled; nothing new starts until release', async () => {
    const { service, backend, rows } = make();
    let open!: () => void;
    backend.gate = new Promise<void>((r) => (open = r));
    const running = service.handle('exec', { argv: ['/bin/long'] }, 'req-7');
    await expect.poll(() => backend.calls.length).toBe(1);
    expect(service.isCancelled('req-7')).toBe(false);
    service.cancel('req-7', 'cancelled by alice');
    expect(service.isCancelled('req-7')).toBe(true);
    expect(((await running) as ExecResult).code).toBe(143);
    expect(backend.calls[0].stopped).toBe(true);
    expect(rows.at(-1)).toMatchObject({ requestId: 'req-7', note: 'cancelled', exitCode: 143 });
    expect(await refusal(service.handle('exec', { argv: ['/bin/next'] }, 'req-7'))).toEqual([
      409,
      'cancelled',
      'request req-7 was cancelled by alice: system/exec is not started',
    ]);
    expect(await refusal(service.handle('file/write', { path: join(etc, 'x'), content: '' }, 'req-7'))).toEqual([
      409,
      'cancelled',
      'request req-7 was cancelled by alice: system/file/write is not started',
    ]);
    // reading and reporting still work; another request is not touched
    expect(await service.handle('file/read', { path: join(etc, 'x') }, 'req-7')).toEqual({ content: null });
    expect(await service.handle('job/progress', { step: 1 }, 'req-7')).toEqual({ recorded: true });
    open();
    expect(((await service.handle('exec', { argv: ['/bin/other'] }, 'req-8')) as ExecResult).code).toBe(0);
    service.release('req-7');
    expect(service.isCancelled('req-7')).toBe(false);
    expect(((await service.handle('exec', { argv: ['/bin/next'] }, 'req-7')) as ExecResult).code).toBe(0);
    // a request's stop goes with its last command (a long-lived host would keep them)
    expect((service as unknown as { running: unknown[] }).running.length).toBe(0);
  });

  it('a command started after release gets a fresh stop while a stopped one of the same request still runs', async () => {
    const { service, backend } = make({ concurrency: 2 });
    let exit!: () => void;
    backend.deaf = true;
    backend.gate = new Promise<void>((r) => (exit = r));
    const slow = service.handle('exec', { argv: ['/bin/slow'] }, 'req-5');
    await expect.poll(() => backend.calls.length).toBe(1);
    const firstStop = backend.calls[0].stop!;
    service.cancel('req-5', 'cancelled');
    expect(firstStop.stopped).toBe(true);
    service.release('req-5');
    backend.gate = undefined;
    expect(((await service.handle('exec', { argv: ['/bin/after'] }, 'req-5')) as ExecResult).code).toBe(0);
    expect(backend.calls[1].stop).not.toBe(firstStop);
    expect(backend.calls[1].stopped).toBe(false);
    exit();
    expect(((await slow) as ExecResult).code).toBe(143);
    expect((service as unknown as { running: unknown[] }).running.length).toBe(0);
  });

  it('cancelling one request stops its command and not the one another request is running', async () => {
    const { service, backend } = make({ concurrency: 2 });
    let open!: () => void;
    backend.gate = new Promise<void>((r) => (open = r));
    const first = service.handle('exec', { argv: ['/bin/a'] }, 'req-a');
    await expect.poll(() => backend.calls.length).toBe(1);
    const second = service.handle('exec', { argv: ['/bin/b'] }, 'req-b');
    await expect.poll(() => backend.calls.length).toBe(2);
    expect(backend.calls[1].stop).not.toBe(backend.calls[0].stop);
    service.cancel('req-a', 'cancelled');
    expect(((await first) as ExecResult).code).toBe(143);
    expect(backend.calls[1].stop?.stopped).toBe(false);
    open();
    expect(((await second) as ExecResult).code).toBe(0);
    expect(backend.calls.map((c) => c.stopped)).toEqual([true, false]);
    service.release('req-a');
  });

  it('cancel reaches every running command of a request, also once another of its commands ended', async () => {
    const { service, backend } = make({ concurrency: 2 });
    let openFirst!: () => void;
    backend.gate = new Promise<void>((r) => (openFirst = r));
    const first = service.handle('exec', { argv: ['/bin/a'] }, 'req-9');
    await expect.poll(() => backend.calls.length).toBe(1);
    backend.gate = new Promise<void>(() => undefined);
    const second = service.handle('exec', { argv: ['/bin/b'] }, 'req-9');
    await expect.poll(() => backend.calls.length).toBe(2);
    // one stop for the request's commands (not one each)
    expect(backend.calls[1].stop).toBe(backend.calls[0].stop);
    openFirst();
    expect(((await first) as ExecResult).code).toBe(0);
    service.cancel('req-9', 'cancelled');
    expect(((await second) as ExecResult).code).toBe(143);
    expect(backend.calls.map((c) => c.stopped)).toEqual([false, true]);
    service.release('req-9');
  });

  it('a command cancelled while it waits for a slot never starts; a command without a request cannot be stopped', async () => {
    const { service, backend } = make();
    let open!: () => void;
    backend.gate = new Promise<void>((r) => (open = r));
    const first = service.handle('exec', { argv: ['/bin/first'] }, undefined);
    const queued = service.handle('exec', { argv: ['/bin/queued'] }, 'req-9');
    const queuedPty = service.handle('pty', { argv: ['/bin/pty'] }, 'req-9');
    await expect.poll(() => backend.calls.length).toBe(1);
    service.cancel('req-9', 'stopped at its budget');
    open();
    expect(((await first) as ExecResult).code).toBe(0);
    expect(backend.calls[0].stop).toBe(undefined);
    expect(await refusal(queued)).toEqual([409, 'cancelled', 'request req-9 was stopped at its budget: not started']);
    expect(await refusal(queuedPty)).toEqual([
      409,
      'cancelled',
      'request req-9 was stopped at its budget: not started',
    ]);
    expect(backend.calls.map((c) => c.argv[0])).toEqual(['/bin/first']);
  });

  it('a cancelled request leaves its journal intent open for the host to roll back', async () => {
    const journal = new IntentJournal(db, files);
    const { service } = make({ journal });
    const { id } = (await service.handle('journal/begin', { area: 'fs', files: [] }, 'req-10')) as { id: number };
    service.cancel('req-10', 'cancelled');
    expect(await service.handle('journal/end', { id }, 'req-10')).toEqual({ ended: false });
    expect(db.prepare('SELECT id FROM intents WHERE id = ?').get(id)).toEqual({ id });
    service.release('req-10');
    expect(await service.handle('journal/end', { id }, 'req-10')).toEqual({ ended: true });
    expect(db.prepare('SELECT id FROM intents WHERE id = ?').get(id)).toBe(undefined);
  });
});

describe('built-in ops a host may not offer', () => {
  it('refuse clearly without a journal, a secret key or path confinement', async () => {
    const { service } = make();
    for (const op of ['journal/begin', 'journal/step', 'journal/end'])
      expect(await refusal(service.handle(op, {}))).toEqual([
        501,
        'not_implemented',
        'this host keeps no intent journal',
      ]);
    expect(await refusal(service.handle('secret/seal', { values: ['x'] }))).toEqual([
      501,
      'not_implemented',
      'this host keeps no secret key',
    ]);
    expect(await refusal(service.handle('resolve', { path: '/x', kind: 'fs.device' }))).toEqual([
      501,
      'not_implemented',
      'this host has no path confinement',
    ]);
  });

  it('secret/seal seals each string and refuses anything else', async () => {
    const { service } = make({ secrets: new SecretBox(join(dir, 'secret.key')) });
    const r = (await service.handle('secret/seal', { values: ['a', 'b'] })) as { sealed: string[] };
    expect(r.sealed.map((s) => SecretBox.isSealed(s))).toEqual([true, true]);
    expect(r.sealed.join()).not.toContain('a,b');
    for (const values of [undefined, 'a', ['a', 1]])
      expect(await refusal(service.handle('secret/seal', { values }))).toEqual([
        400,
        'bad_request',
        'secret/seal needs values: string[]',
      ]);
  });

  it('job/progress goes to the jobs with its request', async () => {
    const { service, progress } = make();
    expect(await service.handle('job/progress', { phase: 'write', step: 2 }, 'req-11')).toEqual({ recorded: true });
    expect(progress).toEqual([['req-11', { phase: 'write', step: 2 }]]);
  });

  it('resolve hands path, kind and both flags to the confinement, and refuses a payload without them', async () => {
    const seen: unknown[] = [];
    const confinement = {
      resolve: (...a: unknown[]) => (seen.push(a), '/real'),
      check: (argv: string[]) => argv,
    } as unknown as ConstructorParameters<typeof SystemService>[0]['confinement'];
    const { service } = make({ confinement });
    expect(
      await service.handle('resolve', { path: '/a', kind: 'fs.device', strictlyBelow: true, recursive: true }),
    ).toEqual({
      path: '/real',
    });
    await service.handle('resolve', { path: '/b', kind: 'fs.device', strictlyBelow: 'yes', recursive: 1 });
    expect(seen).toEqual([
      ['/a', 'fs.device', true, true],
      ['/b', 'fs.device', false, false],
    ]);
    for (const p of [{ kind: 'fs.device' }, { path: '/a' }, { path: 1, kind: 'x' }])
      expect(await refusal(service.handle('resolve', p))).toEqual([400, 'bad_request', 'resolve needs path and kind']);
  });
});

describe('what a cancelled request may still do', () => {
  it('exactly the reads, resolve, progress and journal end; every other op is refused', async () => {
    const journal = new IntentJournal(db, files);
    const confinement = { resolve: () => '/r', check: (a: string[]) => a } as unknown as ConstructorParameters<
      typeof SystemService
    >[0]['confinement'];
    const { service } = make({ journal, confinement, secrets: new SecretBox(join(dir, 'secret2.key')) });
    service.cancel('req-12', 'cancelled');
    const allowed: string[] = [];
    for (const op of BUILT_INS) {
      const r = await service.answer(op, () => ({ path: join(etc, 'y'), kind: 'k', id: 0 }), 'req-12');
      if (!(r.ok === false && r.code === 'cancelled')) allowed.push(op);
    }
    expect(allowed.sort()).toEqual([...AFTER_CANCEL].sort());
  });

  it('file/list and file/stat answer what is there; remove with backup keeps a copy restore brings back', async () => {
    const { service } = make();
    const f = join(etc, 'keep.conf');
    await service.handle('file/write', { path: f, content: 'kept\n' });
    expect(await service.handle('file/stat', { path: f })).toMatchObject({ stat: { type: 'file', size: 5 } });
    expect(JSON.stringify(await service.handle('file/list', { path: etc }))).toContain('keep.conf');
    expect(await service.handle('file/remove', { path: f, backup: true })).toMatchObject({ removed: true });
    expect(await service.handle('file/read', { path: f })).toEqual({ content: null });
    expect(await service.handle('file/restore', { path: f })).toEqual({ restored: true });
    expect(readFileSync(f, 'utf8')).toBe('kept\n');
  });
});
