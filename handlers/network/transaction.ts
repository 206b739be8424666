/**
 * Apply a change: write the configuration files, then run the runtime commands one after the
 * other (each depends on the one before: a port is down before it is enslaved, a bond exists
 * before it gets an address). When a command fails, the change is rolled back: every file is
 * put back as it was (system.restoreFile; a file that did not exist is removed again) and each
 * command that already ran is compensated by its `undo` argv, newest first. The error is a 502
 * naming the failing command, its exit code and stderr, and saying whether the rollback was
 * complete (details.rollback).
 */
import { ApiError } from '../core/errors';
import { commandFailed, commandTimeout, type ExecResult, type SystemClient } from '../core/system';
import type { FileChange } from './config-files';
import { CHANGE_DROP_OP, CHANGE_KEEP_OP } from './contract';

export interface Step {
  argv: string[];
  /** commands that take this step back, run in order during a rollback */
  undo: string[][];
  timeoutMs?: number;
}

export interface RollbackReport {
  files: string[];
  undone: string[][];
  failed: { argv: string[]; error: string }[];
}

async function writeAll(system: SystemClient, files: FileChange[]): Promise<FileChange[]> {
  const written: FileChange[] = [];
  try {
    for (const f of files) {
      if (f.after === null) await system.removeFile(f.path, { backup: true });
      else await system.writeFile(f.path, f.after, { backup: true });
      written.push(f);
    }
  } catch (e) {
    await restoreFiles(system, written, { files: [], undone: [], failed: [] });
    throw e;
  }
  return written;
}

async function restoreFiles(system: SystemClient, files: FileChange[], report: RollbackReport): Promise<void> {
  for (const f of files) {
    try {
      if (f.before === null) await system.removeFile(f.path);
      else {
        const r = await system.restoreFile(f.path);
        // no kept version (should not happen: we wrote with backup): write what we read
        if (!r.restored) await system.writeFile(f.path, f.before);
      }
      report.files.push(f.path);
    } catch (e) {
      report.failed.push({ argv: ['restore', f.path], error: e instanceof Error ? e.message : String(e) });
    }
  }
}

async function undo(system: SystemClient, done: Step[], report: RollbackReport): Promise<void> {
  for (const step of [...done].reverse()) {
    for (const argv of step.undo) {
      try {
        const r = await system.exec(argv);
        if (r.code === 0 && !r.timedOut) report.undone.push(argv);
        else
          report.failed.push({
            argv,
            error: r.timedOut ? 'timed out' : `exit ${r.code}: ${r.stderr.trim().split('\n')[0] ?? ''}`,
          });
      } catch (e) {
        report.failed.push({ argv, error: e instanceof Error ? e.message : String(e) });
      }
    }
  }
}

function failure(step: Step, r: ExecResult | null, cause: unknown, report: RollbackReport, changed: boolean): ApiError {
  const base = r
    ? r.timedOut
      ? commandTimeout(step.argv, r)
      : commandFailed(step.argv, r)
    : cause instanceof ApiError
      ? cause
      : null;
  const outcome = !changed
    ? 'nothing was changed'
    : report.failed.length === 0
      ? 'the previous configuration was restored'
      : `rollback incomplete (${report.failed.length} step(s) failed; see details.rollback)`;
  if (!base)
    return new ApiError('internal', `applying the change failed; ${outcome}`, {
      details: { command: step.argv, rollback: report },
    });
  // `ip link add … type bond` without the bonding module: iproute2 says only "Unknown device type"
  const a = step.argv;
  if (
    r &&
    !r.timedOut &&
    a[1] === 'link' &&
    a[2] === 'add' &&
    a.includes('bond') &&
    a[a.indexOf('type') + 1] === 'bond' &&
    /Unknown device type/.test(r.stderr)
  ) {
    return new ApiError('command_failed', `the bonding kernel module is not available (modprobe bonding); ${outcome}`, {
      details: { ...base.details, command: step.argv, reason: 'bonding-module-missing', rollback: report },
    });
  }
  return new ApiError(base.code, `${base.message}; ${outcome}`, {
    details: { ...base.details, command: step.argv, rollback: report },
  });
}

/**
 * Write `files`, then run `steps`; on the first failure roll everything back and throw. The
 * whole change is an intent in the host's journal (written before the first file, each step's
 * undo recorded before the step runs, closed at the end), so a host killed in the middle rolls
 * it back at its next start.
 *
 * `firstSteps`: how many steps run BEFORE the files are written (bind creates the bond first:
 * without the bonding module that fails with nothing changed, files included). The journal
 * covers them like any other step.
 *
 * `change`: the checkpoint id of a change with a confirmation window (change-window.ts). Once
 * every step ran, the intent is handed over to it (`network/change/keep`: the kept files and
 * undo steps move to the checkpoint in one transaction, the deadline starts); if that fails the
 * change is rolled back here like a failed step. A change that fails frees the checkpoint.
 */
export async function commit(
  system: SystemClient,
  files: FileChange[],
  steps: Step[],
  o: { firstSteps?: number; change?: number | null } = {},
): Promise<void> {
  const change = o.change ?? null;
  try {
    await journaled(system, files, steps, o.firstSteps ?? 0, change);
  } catch (e) {
    if (change !== null)
      await system.op(CHANGE_DROP_OP, { id: change }).catch((d: unknown) => {
        console.error(`network: could not free the checkpoint of change ${change}`, d);
      });
    throw e;
  }
}

async function journaled(
  system: SystemClient,
  files: FileChange[],
  steps: Step[],
  firstSteps: number,
  change: number | null,
): Promise<void> {
  const intent = await system.beginIntent(
    'network',
    files.map((f) => f.path),
  );
  const first = Math.min(firstSteps, steps.length);
  let written: FileChange[] = [];
  const done: Step[] = [];
  try {
    for (let i = 0; i <= steps.length; i++) {
      if (i === first) {
        try {
          written = await writeAll(system, files);
        } catch (e) {
          // writeAll put back what it had written; take back the steps that ran before it
          await undo(system, done, { files: [], undone: [], failed: [] });
          throw e;
        }
      }
      const step = steps[i];
      if (!step) break;
      let r: ExecResult | null = null;
      let cause: unknown = null;
      if (step.undo.length) await system.recordUndo(intent, step.undo);
      try {
        r = await system.exec(step.argv, step.timeoutMs === undefined ? {} : { timeoutMs: step.timeoutMs });
      } catch (e) {
        cause = e;
      }
      if (r && r.code === 0 && !r.timedOut) {
        done.push(step);
        continue;
      }
      const report: RollbackReport = { files: [], undone: [], failed: [] };
      await restoreFiles(system, written, report);
      await undo(system, done, report);
      if (!r && !(cause instanceof ApiError)) console.error('network: command error during apply', cause);
      throw failure(step, r, cause, report, written.length > 0 || done.length > 0);
    }
    if (change !== null) {
      try {
        await system.op(CHANGE_KEEP_OP, { id: change, intent });
      } catch (e) {
        const report: RollbackReport = { files: [], undone: [], failed: [] };
        await restoreFiles(system, written, report);
        await undo(system, done, report);
        throw e;
      }
    }
  } finally {
    // complete (or handed over to the checkpoint), or rolled back above: nothing is left for
    // the next start to do
    await system.endIntent(intent);
  }
}
