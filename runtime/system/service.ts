import type { SqliteDb } from '../db/database';
import { immediateAudit, type AuditRow, type AuditWriter } from '../db/audit';
import type { DirectAnswer, SystemDirect } from '../../handlers/core/bindings';
import type { CommandBackend, StopSignal } from './types';
import { RequestStop, SystemRefusal } from './types';
import type { ConfinedFiles } from './files';
import type { PathConfinement } from './confine';
import type { IntentJournal } from './journal';
import type { SecretBox } from './secret-box';
import { Semaphore } from './semaphore';

/**
 * A deep copy of plain data (what the fetch protocol could carry: primitives, arrays, plain
 * objects), with structuredClone for anything else. Not structuredClone for everything: on
 * Node 20 each call leaves native memory behind (measured: +100 MB of malloc heap over 90k
 * SYSTEM calls), and a walk over plain objects is also faster for the small payloads routes send.
 */
export function copyPlain<T>(value: T): T {
  if (value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) {
    const out = new Array<unknown>(value.length);
    for (let i = 0; i < value.length; i++) out[i] = copyPlain(value[i]);
    return out as T;
  }
  const proto = Object.getPrototypeOf(value) as object | null;
  if (proto !== Object.prototype && proto !== null) return structuredClone(value);
  const out: Record<string, unknown> = {};
  for (const k of Object.keys(value)) {
    const v = copyPlain((value as Record<string, unknown>)[k]);
    // an own "__proto__" key (JSON.parse makes them) stays data, never the copy's prototype
    if (k === '__proto__')
      Object.defineProperty(out, k, { value: v, enumerable: true, writable: true, configurable: true });
    else out[k] = v;
  }
  return out as T;
}

/** ops marked freshResult, with what turns their result into data for the binding protocol */
const freshOps = new WeakMap<HostOp, (value: unknown) => unknown>();
/**
 * Marks a host op whose every result is built for that call and never kept by the host (the
 * explore walk's tree, or its stream): the direct binding hands it over without a copy. `toWire`
 * makes the result plain data for the binding protocol (JSON), e.g. collects a stream.
 */
export function freshResult(op: HostOp, toWire: (value: unknown) => unknown = (v) => v): HostOp {
  freshOps.set(op, toWire);
  return op;
}

export type HostOp = (payload: Record<string, unknown>, requestId: string | undefined) => Promise<unknown>;

const BUILT_IN_OPS = new Set([
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
]);

/** What a cancelled request may still do: read, resolve, report (and close its journal: a no-op). */
const AFTER_CANCEL = new Set(['file/read', 'file/list', 'file/stat', 'resolve', 'job/progress', 'journal/end']);

/** One command as it ended, for whoever watches the host's commands (the jobs' log tail). */
export interface CommandRecord {
  requestId: string | undefined;
  kind: 'exec' | 'pty';
  argv: readonly string[];
  exitCode: number;
  durationMs: number;
  timedOut: boolean;
  /** exec's stderr (a pty's output is not kept: it may echo what was typed) */
  stderr: string;
}

export interface SystemServiceOptions {
  backend: CommandBackend;
  files: ConfinedFiles;
  /** Path operands of commands, checked against each area's roots (confine.ts). */
  confinement?: PathConfinement;
  /** Multi-step changes in flight (journal.ts). */
  journal?: IntentJournal;
  /** Seals secrets the routes store (secret-box.ts). */
  secrets?: SecretBox;
  db: SqliteDb;
  /** Where audit rows go (the host batches them: db/audit.ts); default one INSERT each, at once. */
  audit?: AuditWriter;
  concurrency: number;
  queue: number;
  log?: (line: string) => void;
  /** Each command as it starts, and once it ended (after its audit row). Must not throw or block. */
  onCommandStart?: (requestId: string | undefined, argv: readonly string[]) => void;
  onCommand?: (c: CommandRecord) => void;
  /** A route's `job/progress` report for its request (runtime/jobs/ checks and keeps it). */
  onProgress?: (requestId: string | undefined, progress: Record<string, unknown>) => void;
  /**
   * Told of each audited action as its row is written (the host's command log lines and
   * metrics), with the operands the row holds as JSON text.
   */
  observe?: (row: AuditRow, argv: readonly unknown[]) => void;
}

/**
 * The SYSTEM binding, host side. Routes in an isolate reach it with `env.SYSTEM.fetch(POST
 * /system/<op>)`, routes in the host's process with `env.SYSTEM_DIRECT.call(op, payload)`.
 * Every command is audited (argv, exit code, duration; never stdin or pty answers).
 */
export class SystemService {
  private readonly sem: Semaphore;
  private readonly auditLog: AuditWriter;
  /** Area-specific host capabilities (e.g. fs/explore), keyed by op name. */
  private readonly ops = new Map<string, HostOp>();
  /**
   * The stops of the requests whose commands run (one each), for cancel(). A list, not a Map:
   * at most `concurrency` long, and a Map's table, rebuilt as requests come and go on a busy
   * host, outlived the young generation each time (old-generation garbage under load).
   */
  private readonly running: RequestStop[] = [];
  /** Requests cancelled and not yet released, with why: nothing new starts for them. */
  private readonly cancelled = new Map<string, string>();

  constructor(private readonly o: SystemServiceOptions) {
    this.sem = new Semaphore(o.concurrency, o.queue);
    this.auditLog = o.audit ?? immediateAudit(o.db);
  }

  private audit(
    requestId: string | undefined,
    kind: string,
    argv: unknown[],
    exitCode: number | null,
    durationMs: number | null,
    note: string | null,
  ): void {
    const row = {
      at: Date.now(),
      requestId: requestId ?? null,
      kind,
      argv: JSON.stringify(argv),
      exitCode,
      durationMs,
      note,
    };
    this.auditLog.write(row);
    this.o.observe?.(row, argv);
  }

  /** Adds an area's ops; a name taken twice is a programming error that stops the host. */
  register(owner: string, ops: Record<string, HostOp>): void {
    for (const [name, op] of Object.entries(ops)) {
      if (this.ops.has(name) || BUILT_IN_OPS.has(name))
        throw new Error(`system op ${name} (from ${owner}) is already registered`);
      this.ops.set(name, op);
    }
  }

  /**
   * One op, answered as data: the value, or a refusal's status, code and message (a failure is
   * logged and answered `500 internal` naming the op), as every transport sends it. The payload
   * is read inside, so a payload that cannot be read is that same failure. `copy` (the direct
   * binding): the payload and the result are deep-copied (copyPlain: neither side keeps a
   * reference into the other's objects), but an op marked freshResult hands its result over as
   * it is. Without `copy` (a transport that serialises) a freshResult op's result goes through
   * its `toWire` first.
   */
  async answer(
    op: string,
    payload: () => Record<string, unknown> | Promise<Record<string, unknown>>,
    requestId: string | undefined,
    copy = false,
  ): Promise<DirectAnswer> {
    try {
      const p = await payload();
      const value = await this.handle(op, copy ? copyPlain(p) : p, requestId);
      const extra = this.ops.get(op);
      const fresh = extra && freshOps.get(extra);
      if (fresh) return { ok: true, value: copy ? value : await fresh(value) };
      return { ok: true, value: copy ? copyPlain(value) : value };
    } catch (e) {
      if (e instanceof SystemRefusal) return { ok: false, status: e.status, code: e.code, message: e.message };
      this.o.log?.(`[${requestId ?? '-'}] system/${op} failed: ${(e as Error)?.stack ?? String(e)}`);
      return { ok: false, status: 500, code: 'internal', message: `system operation ${op} failed` };
    }
  }

  /** The same service for handlers in this process (env.SYSTEM_DIRECT): answer() with copies. */
  readonly direct: SystemDirect = {
    call: (op, payload, requestId) => this.answer(op, () => payload as Record<string, unknown>, requestId, true),
  };

  /** The fetch protocol (`POST /system/<op>`), answered once the op's audit rows are committed. */
  readonly fetch = async (input: Request | string, init?: RequestInit): Promise<Response> => {
    const request = typeof input === 'string' ? new Request(input, init) : input;
    const op = new URL(request.url).pathname.replace(/^\/system\//, '');
    const requestId = request.headers.get('x-request-id') ?? undefined;
    const a = await this.answer(op, () => request.json() as Promise<Record<string, unknown>>, requestId);
    if (!a.ok) return Response.json({ error: { code: a.code, message: a.message } }, { status: a.status });
    await this.auditWritten();
    return Response.json(a.value);
  };

  /**
   * Resolves once the audit rows written so far are committed. The binding protocol answers
   * after it, so a route in an isolate finds its rows in audit_log as an in-process one does.
   */
  async auditWritten(): Promise<void> {
    await this.auditLog.whenWritten?.();
  }

  /**
   * Stops a request: its running commands get SIGTERM (their process groups; SIGKILL after a
   * grace period), and from now on it may only read (AFTER_CANCEL): no command, write, journal
   * step or area op starts for it, so what the request left is what the journal rolls back.
   * Held until release(requestId), when whoever cancelled it has seen its handler end.
   */
  cancel(requestId: string, why: string): void {
    this.cancelled.set(requestId, why);
    for (const stop of this.running) if (stop.requestId === requestId) stop.stop();
  }

  release(requestId: string): void {
    this.cancelled.delete(requestId);
  }

  isCancelled(requestId: string): boolean {
    return this.cancelled.has(requestId);
  }

  /** Runs a command with its request's StopSignal, which cancel() fires. */
  private async stoppable<T>(requestId: string | undefined, run: (stop?: StopSignal) => Promise<T>): Promise<T> {
    if (requestId === undefined) return run();
    // one stop for the request's commands; a command started after release() gets a fresh one
    let stop = this.running.find((s) => s.requestId === requestId && !s.stopped);
    if (!stop) this.running.push((stop = new RequestStop(requestId)));
    stop.users++;
    try {
      return await run(stop);
    } finally {
      if (--stop.users === 0) this.running.splice(this.running.indexOf(stop), 1);
    }
  }

  private journalOf(): IntentJournal {
    if (!this.o.journal) throw new SystemRefusal('not_implemented', 'this host keeps no intent journal');
    return this.o.journal;
  }

  /** argv as a list of strings, path operands resolved and confined. */
  private argvOf(p: Record<string, unknown>): string[] {
    const argv = p.argv;
    if (
      !Array.isArray(argv) ||
      argv.length === 0 ||
      !argv.every((a): a is string => typeof a === 'string' && !a.includes('\0'))
    ) {
      throw new SystemRefusal('bad_request', 'argv must be a non-empty list of strings without NUL');
    }
    return this.o.confinement
      ? this.o.confinement.check(argv, typeof p.stdin === 'string' ? p.stdin : undefined)
      : argv;
  }

  async handle(op: string, p: Record<string, unknown>, requestId?: string): Promise<unknown> {
    const f = this.o.files;
    if (requestId !== undefined && this.cancelled.size > 0 && !AFTER_CANCEL.has(op)) {
      const why = this.cancelled.get(requestId);
      if (why !== undefined)
        throw new SystemRefusal('cancelled', `request ${requestId} was ${why}: system/${op} is not started`);
    }
    switch (op) {
      case 'exec': {
        const argv = this.argvOf(p);
        return this.sem.run(async () => {
          // cancelled while it waited for a slot: it never starts
          if (requestId !== undefined && this.cancelled.has(requestId))
            throw new SystemRefusal(
              'cancelled',
              `request ${requestId} was ${this.cancelled.get(requestId)}: not started`,
            );
          this.o.onCommandStart?.(requestId, argv);
          const r = await this.stoppable(requestId, (stop) =>
            this.o.backend.exec(
              argv,
              {
                stdin: p.stdin as string | undefined,
                timeoutMs: p.timeoutMs as number | undefined,
                env: p.env as Record<string, string> | undefined,
                maxOutputBytes: p.maxOutputBytes as number | undefined,
              },
              stop,
            ),
          );
          const note = r.timedOut
            ? 'timeout'
            : requestId !== undefined && this.cancelled.has(requestId)
              ? 'cancelled'
              : null;
          this.audit(requestId, 'exec', argv, r.code, r.durationMs, note);
          this.o.onCommand?.({
            requestId,
            kind: 'exec',
            argv,
            exitCode: r.code,
            durationMs: r.durationMs,
            timedOut: r.timedOut,
            stderr: r.stderr,
          });
          return r;
        });
      }
      case 'pty': {
        const argv = this.argvOf(p);
        return this.sem.run(async () => {
          const dialogue = Array.isArray(p.dialogue)
            ? (p.dialogue as { expect: string; send: string; secret?: boolean }[])
            : [];
          if (requestId !== undefined && this.cancelled.has(requestId))
            throw new SystemRefusal(
              'cancelled',
              `request ${requestId} was ${this.cancelled.get(requestId)}: not started`,
            );
          this.o.onCommandStart?.(requestId, argv);
          const r = await this.stoppable(requestId, (stop) =>
            this.o.backend.pty(
              argv,
              dialogue,
              { timeoutMs: p.timeoutMs as number | undefined, env: p.env as Record<string, string> | undefined },
              stop,
            ),
          );
          this.audit(requestId, 'pty', argv, r.code, r.durationMs, r.timedOut ? 'timeout' : null);
          this.o.onCommand?.({
            requestId,
            kind: 'pty',
            argv,
            exitCode: r.code,
            durationMs: r.durationMs,
            timedOut: r.timedOut,
            stderr: '',
          });
          return r;
        });
      }
      case 'secret/seal': {
        // routes can seal a secret for storage, never open one: only host code sends them
        if (!this.o.secrets) throw new SystemRefusal('not_implemented', 'this host keeps no secret key');
        const values = p.values;
        if (!Array.isArray(values) || !values.every((v): v is string => typeof v === 'string'))
          throw new SystemRefusal('bad_request', 'secret/seal needs values: string[]');
        const box = this.o.secrets;
        return { sealed: values.map((v) => box.seal(v)) };
      }
      case 'journal/begin':
        return this.journalOf().begin(p.area, p.files, requestId);
      case 'journal/step':
        return this.journalOf().step(p.id, p.undo);
      case 'journal/end':
        // a cancelled request's intent stays open: the host rolls it back (runtime/jobs/)
        if (requestId !== undefined && this.cancelled.has(requestId)) return { ended: false };
        return this.journalOf().end(p.id);
      case 'job/progress':
        this.o.onProgress?.(requestId, p);
        return { recorded: true };
      case 'resolve': {
        // a route's early answer for a path it will hand to a command (same rule as exec)
        if (!this.o.confinement) throw new SystemRefusal('not_implemented', 'this host has no path confinement');
        if (typeof p.path !== 'string' || typeof p.kind !== 'string')
          throw new SystemRefusal('bad_request', 'resolve needs path and kind');
        return {
          path: this.o.confinement.resolve(p.path, p.kind, p.strictlyBelow === true, p.recursive === true),
        };
      }
      case 'file/read':
        return f.read(p.path);
      case 'file/write': {
        const r = await f.write(p.path, p.content, {
          mode: p.mode as number | undefined,
          backup: p.backup === true,
          exclusive: p.exclusive === true,
        });
        this.audit(requestId, 'file/write', [r.path], null, null, null);
        return r;
      }
      case 'file/restore': {
        const r = await f.restore(p.path);
        this.audit(requestId, 'file/restore', [p.path], null, null, r.restored ? null : 'nothing to restore');
        return r;
      }
      case 'file/remove': {
        const r = await f.remove(p.path, { backup: p.backup === true });
        this.audit(requestId, 'file/remove', [p.path], null, null, r.removed ? null : 'absent');
        return r;
      }
      case 'file/list':
        return f.list(p.path);
      case 'file/stat':
        return f.stat(p.path);
      default: {
        const extra = this.ops.get(op);
        if (extra) return extra(p, requestId);
        throw new SystemRefusal('not_found', `unknown system operation ${op}`);
      }
    }
  }
}
