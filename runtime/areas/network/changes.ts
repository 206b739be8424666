/**
 * Confirmed network changes, host side: the checkpoint taken before a change with a window, the
 * deadline, and the rollback that restores the checkpoint when no confirmation came (timer), when
 * the deadline passed while the host was down (start), or when asked (POST /network/rollback).
 *
 * A rollback, in this order (the journal's, then the snapshot's):
 * 1. the files as they were (bytes and mode; a file the change created is removed);
 * 2. the change's undo commands, newest step first (what its route recorded, as the journal does);
 * 3. traffic: the stored rules it named put back, then tc re-applied from them (the traffic
 *    area's own reconcile);
 * 4. `ip -j` read again and compared with the checkpoint's snapshot: what still differs (a route
 *    the flush dropped, an `up` nobody recorded, a port left enslaved) is corrected
 *    (runtime-state.ts planRestore);
 * 5. read once more: what still differs is reported as `unrestored` (event, audit, log, answer).
 * A failing step is recorded and the next one still runs: the point is getting the box back.
 */
import { SystemClient } from '../../../handlers/core/system';
import type { Env } from '../../../handlers/core/bindings';
import { database } from '../../../handlers/core/bindings';
import type { Vars } from '../../../handlers/core/vars';
import type { ChangeOpenPayload, PendingChange, RollbackReport } from '../../../handlers/network/contract';
import { applyReconcile, listRules, readDevices } from '../../../handlers/traffic/contract';
import { opAudit } from '../../db/audit';
import type { SqliteDb } from '../../db/database';
import type { EventsProducer } from '../../events';
import { CommitWindow } from '../../system/commit-window';
import type { SystemService } from '../../system/service';
import type { ExecResult } from '../../system/types';
import { SystemRefusal } from '../../system/types';
import { CheckpointStore, waitingMessage, type Checkpoint } from './checkpoint-store';
import { captureRuntime, planRestore, type Reader, type RuntimeSnapshot } from './runtime-state';

export type RollbackReason = 'timeout' | 'restart' | 'explicit';

export interface ChangeManagerOptions {
  db: SqliteDb;
  system: SystemService;
  events: EventsProducer;
  env: Env;
  vars: Vars;
  ip: string;
  tc: string;
  log(line: string): void;
}

const errorText = (e: unknown) => (e instanceof Error ? e.message : String(e));

export class ChangeManager {
  readonly store: CheckpointStore;
  private readonly window: CommitWindow;
  private readonly audit;

  constructor(private readonly o: ChangeManagerOptions) {
    this.store = new CheckpointStore(o.db);
    this.window = new CommitWindow(() => this.expire());
    this.audit = opAudit(o.db);
  }

  private reader(requestId: string): Reader {
    return {
      ip: this.o.ip,
      tc: this.o.tc,
      run: async (argv) => (await this.o.system.handle('exec', { argv }, requestId)) as ExecResult,
    };
  }

  /**
   * At start: a checkpoint still `preparing` is dropped (its change never completed; the journal
   * rolls back its intent), a pending one whose deadline passed is restored now (reason
   * `restart`), any other gets its timer back.
   */
  recover(): Promise<void> {
    return this.window.serial(async () => {
      const c = this.store.current();
      if (!c) return;
      if (c.state === 'preparing' || c.deadline === null) {
        this.store.remove(c.id);
        this.o.log(`network: dropped the checkpoint of change ${c.id} (${c.change}): it was never applied`);
        return;
      }
      if (c.deadline <= Date.now()) {
        await this.restore(c, 'restart', undefined);
        return;
      }
      this.o.log(
        `network: change ${c.id} (${c.change}) waits for its confirmation until ${new Date(c.deadline).toISOString()}; the checkpoint comes back if none arrives`,
      );
      this.window.arm(c.deadline);
    });
  }

  stop(): Promise<void> {
    this.window.stop();
    return this.window.idle();
  }

  open(p: ChangeOpenPayload, requestId: string | undefined): Promise<{ id: number | null }> {
    return this.window.serial(async () => {
      const c = this.store.current();
      if (c) throw new SystemRefusal('conflict', waitingMessage(c));
      if (p.window === undefined) return { id: null };
      const runtime = await captureRuntime(
        this.reader(requestId ?? 'network-checkpoint'),
        p.devices,
        p.area === 'traffic' ? p.devices : [],
      );
      const id = this.store.open({
        area: p.area,
        change: p.change,
        devices: p.devices,
        requestId,
        window: p.window,
        runtime,
        ruleNames: p.rules ?? [],
      });
      return { id };
    });
  }

  keep(
    id: number,
    from: { intent?: number; undo?: string[][][] },
    requestId: string | undefined,
  ): Promise<{ id: number; deadline: string; window: number }> {
    return this.window.serial(async () => {
      const before = this.store.current();
      if (!before || before.id !== id) throw new SystemRefusal('conflict', `network change ${id} is not being applied`);
      const deadline = Date.now() + before.window * 1000;
      const c = this.store.keep(id, deadline, from);
      this.window.arm(deadline);
      this.audit({
        kind: 'network/change/pending',
        requestId,
        argv: c.files.map((f) => f.path),
        note: `change ${id} (${c.change}): confirm within ${c.window} s`,
      });
      await this.o.events.send({
        kind: 'network.change.pending',
        requestId,
        data: { ...eventData(c), window: c.window, deadline: new Date(deadline).toISOString() },
      });
      return { id, deadline: new Date(deadline).toISOString(), window: c.window };
    });
  }

  drop(id: number): Promise<{ dropped: boolean }> {
    return this.window.serial(() => {
      const c = this.store.current();
      return { dropped: c?.id === id && c.state === 'preparing' ? this.store.remove(id) : false };
    });
  }

  pending(): { pending: PendingChange | null } {
    const c = this.store.current();
    return { pending: c && c.state === 'pending' ? describe(c) : null };
  }

  confirm(id: number, requestId: string | undefined): Promise<PendingChange> {
    return this.window.serial(async () => {
      const c = this.waiting(id);
      if (c.deadline !== null && c.deadline <= Date.now()) {
        // the timer has not run yet (it waits behind this): the window is over all the same
        await this.restore(c, 'timeout', requestId);
        throw new SystemRefusal(
          'conflict',
          `the confirmation window of network change ${id} closed at ${new Date(c.deadline).toISOString()}; the checkpoint was restored`,
        );
      }
      this.window.stop();
      this.store.remove(c.id);
      this.audit({
        kind: 'network/change/confirmed',
        requestId,
        argv: c.files.map((f) => f.path),
        note: `change ${id} (${c.change}) kept`,
      });
      await this.o.events.send({ kind: 'network.change.confirmed', requestId, data: eventData(c) });
      return describe(c);
    });
  }

  rollback(
    id: number | undefined,
    requestId: string | undefined,
  ): Promise<{ change: PendingChange; report: RollbackReport }> {
    return this.window.serial(async () => {
      const c = this.waiting(id);
      return { change: describe(c), report: await this.restore(c, 'explicit', requestId) };
    });
  }

  /** The pending change `id` (or the one pending), else a 409 that says what there is. */
  private waiting(id: number | undefined): Checkpoint {
    const c = this.store.current();
    if (c && c.state === 'pending' && (id === undefined || c.id === id)) return c;
    const none =
      id === undefined
        ? 'no network change is waiting for its confirmation'
        : `network change ${id} is not waiting for its confirmation (confirmed, rolled back, or never made)`;
    throw new SystemRefusal('conflict', c ? `${none}; ${waitingMessage(c)}` : none);
  }

  private async expire(): Promise<void> {
    const c = this.store.current();
    if (!c || c.state !== 'pending' || c.deadline === null) return;
    if (c.deadline > Date.now()) return this.window.arm(c.deadline);
    try {
      await this.restore(c, 'timeout', undefined);
    } catch (e) {
      this.o.log(`network: rollback of change ${c.id} failed: ${errorText(e)}`);
    }
  }

  private async restore(c: Checkpoint, reason: RollbackReason, requestId: string | undefined): Promise<RollbackReport> {
    this.window.stop();
    const rid = requestId ?? `network-rollback-${c.id}`;
    const report: RollbackReport = { files: [], commands: [], failed: [], unrestored: [] };
    const run = async (argv: string[], expectFailure = false) => {
      try {
        const r = (await this.o.system.handle('exec', { argv }, rid)) as ExecResult;
        if (r.code === 0 && !r.timedOut) report.commands.push(argv);
        // undoing a step that never ran, or that step 4 would have fixed anyway, fails harmlessly
        else if (!expectFailure)
          report.failed.push({
            step: argv.join(' '),
            error: r.timedOut ? 'timed out' : (r.stderr.trim().split('\n')[0] ?? `exit ${r.code}`),
          });
      } catch (e) {
        report.failed.push({ step: argv.join(' '), error: errorText(e) });
      }
    };
    for (const f of c.files) {
      try {
        if (f.content === null) await this.o.system.handle('file/remove', { path: f.path }, rid);
        else
          await this.o.system.handle(
            'file/write',
            { path: f.path, content: f.content, ...(f.mode === undefined ? {} : { mode: f.mode }) },
            rid,
          );
        report.files.push(f.path);
      } catch (e) {
        report.failed.push({ step: `restore ${f.path}`, error: errorText(e) });
      }
    }
    for (const step of [...c.undo].reverse()) for (const argv of step) await run(argv, true);
    if (c.area === 'traffic') await this.restoreTraffic(c, rid, report);
    const reader = this.reader(rid);
    const tcDevices = c.runtime.tc.map((t) => t.dev);
    try {
      const now = await captureRuntime(reader, c.runtime.scope, tcDevices);
      for (const s of planRestore(this.o.ip, c.runtime, now).steps) await run(s.argv);
      const after: RuntimeSnapshot = await captureRuntime(reader, c.runtime.scope, tcDevices);
      const left = planRestore(this.o.ip, c.runtime, after);
      report.unrestored.push(...left.steps.map((s) => s.what), ...left.notes);
    } catch (e) {
      report.unrestored.push(`the runtime state could not be read back: ${errorText(e)}`);
    }
    this.store.remove(c.id);
    const summary = `files ${report.files.join(', ') || '-'}; ${report.commands.length} command(s)${report.unrestored.length ? `; still differs: ${report.unrestored.join('; ')}` : '; all back'}`;
    this.audit({
      kind: 'network/change/rolled_back',
      requestId: rid,
      argv: report.files,
      note: `change ${c.id} (${c.change}), ${reason}: ${summary}`,
    });
    this.o.log(`network: rolled back change ${c.id} (${c.change}; ${reason}): ${summary}`);
    await this.o.events.send({
      kind: 'network.change.rolled_back',
      requestId,
      data: {
        ...eventData(c),
        reason,
        files: report.files,
        commands: report.commands.length,
        unrestored: report.unrestored,
      },
    });
    return report;
  }

  /** The rules as stored before, then tc brought to them (adds what is missing; the undo removed the rest). */
  private async restoreTraffic(c: Checkpoint, rid: string, report: RollbackReport): Promise<void> {
    try {
      this.store.restoreRules(c);
      const t = { system: new SystemClient(this.o.env.SYSTEM, rid), vars: this.o.vars };
      const rules = (await listRules(database(this.o.env))).filter((r) => c.devices.includes(r.device));
      const r = await applyReconcile(t, rules, await readDevices(t, c.devices));
      report.commands.push(...r.applied);
      for (const f of r.failed) report.failed.push({ step: f.argv.join(' '), error: f.error });
    } catch (e) {
      report.failed.push({ step: 'restore the traffic rules', error: errorText(e) });
    }
  }
}

function describe(c: Checkpoint): PendingChange {
  const deadline = c.deadline ?? c.createdAt + c.window * 1000;
  return {
    id: c.id,
    area: c.area,
    change: c.change,
    devices: c.devices,
    window: c.window,
    created: new Date(c.createdAt).toISOString(),
    deadline: new Date(deadline).toISOString(),
    remaining: Math.max(0, Math.ceil((deadline - Date.now()) / 1000)),
  };
}

const eventData = (c: Checkpoint) => ({ id: c.id, area: c.area, change: c.change, devices: c.devices });
