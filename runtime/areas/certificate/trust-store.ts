/**
 * Changes of the system trust store (add and remove a `<name>.crt`, then update-ca-certificates),
 * all or nothing across failures, timeouts and kill -9.
 *
 * update-ca-certificates is a shell script that changes the store step by step: with `--fresh`
 * it deletes the symlinks first, it appends to `<bundle>.new` (never truncated: a leftover from a
 * killed run ends up in the next bundle), and it rebuilds the hash links (`openssl rehash`) only
 * at the end. Stopped part way it leaves dangling or missing hash links and a partial bundle.
 *
 * So a change first writes `<stateDir>/certificate/trust-intent.json` (what it is about to do and
 * the file's text), then changes the file, then runs the tool. Success: the event, then the intent
 * goes. Failure or timeout: the file is put back, the partial bundle removed, and the tool run
 * again with `--fresh` (every link and the bundle rebuilt from the files); only then does the
 * intent go, so a repair that fails is retried before the next change and at start. At start an
 * intent left by a killed host is settled: a change that had fully taken effect (file, link and
 * bundle agree, no partial bundle) is recorded (event, audit row) as the request would have;
 * anything less is rolled back as above (`certificate.trusted.rolled_back`).
 */
import {
  lstatSync,
  mkdirSync,
  readFileSync,
  readdirSync,
  readlinkSync,
  rmSync,
  unlinkSync,
  type Dirent,
} from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import * as z from 'zod';
import {
  TRUST_BUNDLE,
  TRUST_OP,
  parseUpdateCaCertificates,
  trustPayload,
  type TrustResult,
  type TrustRun,
} from '../../../handlers/certificate/contract';
import { committedOpAudit } from '../../db/audit';
import type { SqliteDb } from '../../db/database';
import type { EventsProducer } from '../../events';
import type { HostOp, SystemService } from '../../system/service';
import { SystemRefusal, type ExecResult } from '../../system/types';
import { atomicWriteSync, isErrno } from '../../system/files';
import { payloadOf } from '../../system/host-op';
import { readManaged } from './tls-store';
import { inspectPem } from './x509';

const trustIntent = z.object({
  action: z.enum(['add', 'remove']),
  name: z.string(),
  /** the file's text: what add writes, or what remove takes away */
  content: z.string(),
  requestId: z.string().nullable(),
  startedAt: z.number(),
  /**
   * `applying`: the change may have taken effect and nobody was told (a host killed now lets the
   * next start find out); `rolling_back`: the request failed and the store is being put back;
   * `rolling_back_untold`: a killed host's change being put back (its client never heard, so the
   * rollback's event is still owed when this rollback is retried).
   */
  phase: z.enum(['applying', 'rolling_back', 'rolling_back_untold']),
});
export type TrustIntent = z.output<typeof trustIntent>;

export const TRUST_EVENT = {
  add: 'certificate.trusted.added',
  remove: 'certificate.trusted.removed',
  rolledBack: 'certificate.trusted.rolled_back',
} as const;

/** Where the change in flight is journaled. */
export const trustIntentFile = (stateDir: string) => join(resolve(stateDir), 'certificate', 'trust-intent.json');

export interface TrustStoreOptions {
  /** `paths.caCertificates`: the `.crt` files */
  localDir: string;
  /** `paths.sslCerts`: links and bundle, written by the tool */
  etcDir: string;
  intentFile: string;
  /** the update-ca-certificates argv (contract updateArgv) */
  argv(fresh: boolean): string[];
  /** `settings.certificate.trustTimeoutMs`: one run of the tool (a change's, a repair's) */
  timeoutMs: number;
  system: SystemService;
  events: EventsProducer;
  db: SqliteDb;
  log(line: string): void;
}

export class TrustStore {
  private queue: Promise<unknown> = Promise.resolve();
  private readonly audit;
  private readonly eventSince;

  constructor(private readonly o: TrustStoreOptions) {
    this.audit = committedOpAudit(o.db);
    this.eventSince = o.db.prepare('SELECT 1 FROM events WHERE kind = ? AND data = ? AND at >= ? LIMIT 1');
  }

  /** One change at a time; the start-up settling is the first. */
  private serial<T>(f: () => Promise<T>): Promise<T> {
    const run = this.queue.then(f, f);
    this.queue = run.catch(() => undefined);
    return run;
  }

  /** Resolves when no change is running (shutdown waits for it before the DB closes). */
  idle(): Promise<void> {
    return this.queue.then(() => undefined);
  }

  /**
   * At setup. Without an intent, a partial bundle is only a leftover (a killed run of the tool)
   * and goes at once; with one, the change is settled as the first queued job, so it runs once
   * every area's command policies are in place and before any trust change.
   */
  recover(): void {
    const intent = this.intent();
    if (!intent) {
      if (this.dropPartialBundle())
        this.o.log(
          `certificate: removed the partial bundle ${this.partialBundle} an interrupted update-ca-certificates left`,
        );
      return;
    }
    void this.serial(() => this.settle(intent)).catch((e) =>
      this.o.log(`certificate: could not settle the trust store change of ${intent.name}.crt: ${message(e)}`),
    );
  }

  add(name: string, pem: string, requestId: string | undefined): Promise<TrustResult> {
    return this.serial(async () => {
      const blocked = await this.settleLeftover();
      if (blocked) return blocked;
      // the route checked the text; the host writes nothing but one certificate all the same
      const info = inspectPem(pem);
      if (info.error || info.certificates.length !== 1 || info.otherBlocks.length || info.layout)
        throw new SystemRefusal('bad_request', `${TRUST_OP}: pem must be one certificate and nothing else`);
      const file = this.file(name);
      if (exists(file)) throw new SystemRefusal('conflict', `a trusted certificate named ${name} already exists`);
      const fingerprint = info.certificates[0].fingerprint256;
      const already = this.trustedAs(fingerprint);
      if (already)
        throw new SystemRefusal(
          'conflict',
          `this certificate (${info.certificates[0].subject}, SHA-256 ${fingerprint}) is already trusted as ${already}`,
        );
      const intent = this.begin('add', name, info.normalized, requestId);
      try {
        await this.o.system.handle(
          'file/write',
          { path: file, content: info.normalized, mode: 0o644, exclusive: true },
          requestId,
        );
      } catch (e) {
        this.clearIntent();
        throw e;
      }
      return this.apply(intent, false, requestId);
    });
  }

  remove(name: string, requestId: string | undefined): Promise<TrustResult> {
    return this.serial(async () => {
      const blocked = await this.settleLeftover();
      if (blocked) return blocked;
      const file = this.file(name);
      const current = readManaged(file, `${name}.crt`);
      if (!current) throw new SystemRefusal('not_found', `no trusted certificate named ${name}`);
      const intent = this.begin('remove', name, current.data.toString('utf8'), requestId);
      try {
        // the backup keeps mode and owner for the rollback
        await this.o.system.handle('file/remove', { path: file, backup: true }, requestId);
      } catch (e) {
        this.clearIntent();
        throw e;
      }
      return this.apply(intent, true, requestId);
    });
  }

  /** The trust store file (a regular `.crt`, as the list shows them) that holds this certificate. */
  private trustedAs(fingerprint256: string): string | undefined {
    let entries: Dirent[];
    try {
      entries = readdirSync(this.o.localDir, { withFileTypes: true });
    } catch (e) {
      if (isErrno(e, 'ENOENT')) return undefined;
      throw e;
    }
    for (const e of entries.sort((a, b) => (a.name < b.name ? -1 : 1))) {
      if (!e.isFile() || !e.name.endsWith('.crt') || e.name.startsWith('.')) continue;
      let r: ReturnType<typeof readManaged>;
      try {
        r = readManaged(join(this.o.localDir, e.name), e.name);
      } catch (err) {
        // swapped for a link or grown past 1 MiB since the listing: not a file the store manages
        if (err instanceof SystemRefusal) continue;
        throw err;
      }
      if (r && inspectPem(r.data.toString('utf8')).certificates.some((c) => c.fingerprint256 === fingerprint256))
        return e.name;
    }
    return undefined;
  }

  private file(name: string): string {
    return join(this.o.localDir, `${name}.crt`);
  }

  private get partialBundle(): string {
    return join(this.o.etcDir, `${TRUST_BUNDLE}.new`);
  }

  intent(): TrustIntent | undefined {
    let text: string;
    try {
      text = readFileSync(this.o.intentFile, 'utf8');
    } catch (e) {
      if (isErrno(e, 'ENOENT')) return undefined;
      throw e;
    }
    const r = trustIntent.safeParse(JSON.parse(text));
    if (!r.success) throw new Error(`${this.o.intentFile} is not a trust store intent: ${r.error.message}`);
    return r.data;
  }

  private writeIntent(i: TrustIntent): void {
    mkdirSync(dirname(this.o.intentFile), { recursive: true, mode: 0o700 });
    atomicWriteSync(this.o.intentFile, JSON.stringify(i), 0o600);
  }

  private clearIntent(): void {
    rmSync(this.o.intentFile, { force: true });
  }

  /**
   * A repair's audit row (`note` says what happened), committed, and only then the intent gone: a
   * host killed in between repairs (and records) again at start, where a batched row would have
   * been lost with the intent already removed. A row the database refuses keeps the intent.
   */
  private recordThenForget(i: TrustIntent, note: string): RollBack {
    try {
      this.audit({ kind: TRUST_OP, requestId: i.requestId ?? undefined, argv: [this.file(i.name)], note });
    } catch (e) {
      const why = `its audit row could not be written (${message(e)})`;
      this.o.log(
        `certificate: the repair of the ${i.action} of ${i.name}.crt is done but ${why}; recorded again before the next change and at start`,
      );
      return { restored: false, error: why };
    }
    this.clearIntent();
    return { restored: true };
  }

  private begin(action: TrustIntent['action'], name: string, content: string, requestId: string | undefined) {
    const i: TrustIntent = {
      action,
      name,
      content,
      requestId: requestId ?? null,
      startedAt: Date.now(),
      phase: 'applying',
    };
    this.writeIntent(i);
    return i;
  }

  /** The file changed: run the tool; on failure put everything back. */
  private async apply(i: TrustIntent, fresh: boolean, requestId: string | undefined): Promise<TrustResult> {
    let run: TrustRun;
    try {
      run = await this.run(fresh, requestId);
    } catch (e) {
      // (a refusal: busy, not recorded…) the tool may not have run, the file did change
      await this.rollBack(i, requestId, true);
      throw e;
    }
    if (succeeded(run)) {
      // the event before the intent goes: a host killed in between records it at start, once
      this.o.events.record({ kind: TRUST_EVENT[i.action], data: { name: i.name }, requestId });
      this.clearIntent();
      const certificates = inspectPem(i.content).certificates.map((c) => ({
        subject: c.subject,
        fingerprint256: c.fingerprint256,
      }));
      return { ok: true, output: run.stdout, file: `${i.name}.crt`, certificates };
    }
    const back = await this.rollBack(i, requestId, true);
    return { ok: false, failure: run, restored: back.restored };
  }

  /**
   * File back as it was, partial bundle gone, the tool run with `--fresh`; the intent goes only
   * when that worked. Never throws: when the store could not be put back yet, the failed run or
   * what stopped it.
   */
  private async rollBack(i: TrustIntent, requestId: string | undefined, told: boolean): Promise<RollBack> {
    const failed = (why: string) =>
      this.o.log(
        `certificate: putting the trust store back after the ${i.action} of ${i.name}.crt failed: ${why}; retried before the next change and at start`,
      );
    try {
      if (i.phase === 'applying') this.writeIntent({ ...i, phase: told ? 'rolling_back' : 'rolling_back_untold' });
      await this.restoreFile(i, requestId);
      this.dropPartialBundle();
      const run = await this.run(true, requestId);
      const problem = runProblem(run);
      if (problem !== undefined) {
        failed(problem);
        return { restored: false, run };
      }
    } catch (e) {
      failed(message(e));
      return { restored: false, error: message(e) };
    }
    // event and row before the intent goes (a host killed in between repairs again: the event once)
    if (!told)
      this.recordOnce(TRUST_EVENT.rolledBack, i, { action: i.action, reason: 'the host stopped during the change' });
    return this.recordThenForget(
      i,
      `${i.action} of ${i.name}.crt ${told ? 'failed' : 'interrupted by a host stop'}; rolled back (file as before, update-ca-certificates --fresh)`,
    );
  }

  /** The event of a change a killed host left, unless an earlier settling already recorded it. */
  private recordOnce(
    kind: (typeof TRUST_EVENT)[keyof typeof TRUST_EVENT],
    i: TrustIntent,
    more: Record<string, string> = {},
  ): void {
    const data = { name: i.name, ...more };
    if (!this.eventSince.get(kind, JSON.stringify(data), i.startedAt))
      this.o.events.record({ kind, data, requestId: i.requestId ?? undefined });
  }

  private async restoreFile(i: TrustIntent, requestId: string | undefined): Promise<void> {
    const file = this.file(i.name);
    const now = readManaged(file, `${i.name}.crt`)?.data.toString('utf8');
    if (i.action === 'add') {
      // only what this add wrote (a file that differs was never ours: the add checked first)
      if (now === i.content) await this.o.system.handle('file/remove', { path: file }, requestId);
      return;
    }
    if (now !== undefined) return;
    const r = (await this.o.system.handle('file/restore', { path: file }, requestId)) as { restored: boolean };
    if (!r.restored || readManaged(file, `${i.name}.crt`)?.data.toString('utf8') !== i.content)
      await this.o.system.handle('file/write', { path: file, content: i.content, mode: 0o644 }, requestId);
  }

  /** A change a killed host left (or whose repair failed): recorded when it took effect, else rolled back. */
  private async settle(i: TrustIntent): Promise<RollBack> {
    if (i.phase === 'applying' && this.tookEffect(i)) {
      this.recordOnce(TRUST_EVENT[i.action], i);
      const recorded = this.recordThenForget(
        i,
        `${i.action} of ${i.name}.crt had taken effect when the host stopped; recorded at start`,
      );
      if (recorded.restored)
        this.o.log(`certificate: the ${i.action} of ${i.name}.crt had taken effect when the host stopped; recorded`);
      return recorded;
    }
    // an intent still `applying` is a killed host's: its client never heard of the outcome
    const back = await this.rollBack(i, i.requestId ?? undefined, i.phase === 'rolling_back');
    if (back.restored) this.o.log(`certificate: the ${i.action} of ${i.name}.crt did not complete; rolled back`);
    return back;
  }

  /** Before a change: an earlier one that could not be put back is settled first, or blocks it. */
  private async settleLeftover(): Promise<TrustResult | undefined> {
    const i = this.intent();
    if (!i) return undefined;
    const back = await this.settle(i);
    if (back.restored) return undefined;
    const why = `an earlier change (${i.action} of ${i.name}.crt) could not be put back, so nothing was changed`;
    if (back.run) return { ok: false, failure: back.run, restored: false, message: why };
    throw new SystemRefusal('conflict', `${why}: ${back.error ?? 'see the host log'}`);
  }

  /** File, `<name>.pem` link and bundle all show the change, and no run of the tool is half done. */
  private tookEffect(i: TrustIntent): boolean {
    if (exists(this.partialBundle)) return false;
    const file = this.file(i.name);
    const now = readManaged(file, `${i.name}.crt`)?.data.toString('utf8');
    const link = linkTarget(join(this.o.etcDir, `${i.name}.pem`));
    let bundle = '';
    try {
      bundle = readFileSync(join(this.o.etcDir, TRUST_BUNDLE), 'utf8');
    } catch (e) {
      if (!isErrno(e, 'ENOENT')) throw e;
    }
    if (i.action === 'add')
      return now === i.content && link !== undefined && resolve(link) === resolve(file) && bundle.includes(i.content);
    return now === undefined && link === undefined && !bundle.includes(i.content);
  }

  /** The tool appends to `<bundle>.new` without truncating it: a leftover must go before it runs. */
  private dropPartialBundle(): boolean {
    try {
      if (lstatSync(this.partialBundle).isDirectory()) return false;
      unlinkSync(this.partialBundle);
      return true;
    } catch (e) {
      if (isErrno(e, 'ENOENT')) return false;
      throw e;
    }
  }

  private async run(fresh: boolean, requestId: string | undefined): Promise<TrustRun> {
    const command = this.o.argv(fresh);
    const r = (await this.o.system.handle(
      'exec',
      { argv: command, timeoutMs: this.o.timeoutMs },
      requestId,
    )) as ExecResult;
    return {
      command,
      code: r.code,
      stdout: r.stdout,
      stderr: r.stderr,
      timedOut: r.timedOut,
      durationMs: r.durationMs,
    };
  }
}

type RollBack = { restored: true } | { restored: false; run?: TrustRun; error?: string };

function succeeded(r: TrustRun): boolean {
  return runProblem(r) === undefined;
}

function runProblem(r: TrustRun): string | undefined {
  if (r.timedOut) return 'update-ca-certificates did not finish within its time limit';
  if (r.code !== 0) return `update-ca-certificates failed (exit ${r.code}): ${r.stderr.trim().split('\n')[0] ?? ''}`;
  try {
    parseUpdateCaCertificates(r.stdout, r.stderr);
    return undefined;
  } catch (e) {
    return message(e);
  }
}

function exists(p: string): boolean {
  try {
    lstatSync(p);
    return true;
  } catch (e) {
    if (isErrno(e, 'ENOENT')) return false;
    throw e;
  }
}

function linkTarget(p: string): string | undefined {
  try {
    return resolve(dirname(p), readlinkSync(p));
  } catch (e) {
    if (isErrno(e, 'ENOENT') || isErrno(e, 'EINVAL')) return undefined;
    throw e;
  }
}

function message(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

export function trustOps(store: TrustStore): Record<string, HostOp> {
  return {
    [TRUST_OP]: async (payload, requestId) => {
      const p = payloadOf(trustPayload, TRUST_OP, payload);
      return p.action === 'add' ? store.add(p.name, p.pem, requestId) : store.remove(p.name, requestId);
    },
  };
}
