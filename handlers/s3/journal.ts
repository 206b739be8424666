/**
 * The S3 intent journal (kill -9 safety). A change writes a row in `s3_intents` before its first
 * step and deletes it after its last; a row that is still there belongs to a change that never
 * finished (killed, or its own rollback failed part way), and it is settled:
 *   create  rolled back: stop, disable (both best effort), remove the environment file and the
 *           unit, daemon-reload;
 *   update  rolled back: the previous environment file (`<share>.env.prev`, 0600) is put back
 *           and the service restarted if it runs (`try-restart`);
 *   delete  completed: stop, disable (best effort), remove both files, daemon-reload (delete is
 *           final; its environment file may already be gone).
 * The route that fails part way runs the same steps itself and clears the row when they worked;
 * otherwise the next change of that share settles it first (host op `s3/settle`), and the host
 * at its next start settles every row an earlier host process left.
 */
import type { D1Database } from '../core/bindings';
import { ApiError } from '../core/errors';
import type { SystemClient } from '../core/system';
import { bin, type Vars } from '../core/vars';
import { envPath, envPrevPath, serviceName, unitPath } from './names';

export type IntentOp = 'create' | 'update' | 'delete';
export interface Intent {
  shareName: string;
  op: IntentOp;
  requestId: string | null;
  startedAt: number;
}

/** false when another change of the same share is unfinished (409 for the caller). */
export async function beginIntent(
  db: D1Database,
  shareName: string,
  op: IntentOp,
  requestId: string,
): Promise<boolean> {
  const r = await db
    .prepare('INSERT OR IGNORE INTO s3_intents (share_name, op, request_id, started_at) VALUES (?, ?, ?, ?)')
    .bind(shareName, op, requestId, Date.now())
    .run();
  return r.meta.changes === 1;
}

export async function endIntent(db: D1Database, shareName: string): Promise<void> {
  await db.prepare('DELETE FROM s3_intents WHERE share_name = ?').bind(shareName).run();
}

/** The unfinished change of one share, if any. */
export async function pendingIntent(db: D1Database, shareName: string): Promise<Intent | null> {
  const x = await db
    .prepare('SELECT share_name, op, request_id, started_at FROM s3_intents WHERE share_name = ?')
    .bind(shareName)
    .first<{ share_name: string; op: IntentOp; request_id: string | null; started_at: number }>();
  return x ? { shareName: x.share_name, op: x.op, requestId: x.request_id, startedAt: x.started_at } : null;
}

/**
 * What a rollback (or a delete's completion) that did not finish leaves: every step still to do
 * (the one that failed, and those not run after it) and those done. The whole sequence is
 * re-run by the next try, so "still to do" is exactly what keeps the share unsettled.
 */
export function unfinishedText(steps: Step[]): string {
  const todo = steps.filter((s) => !s.ok).map((s) => `${s.step} (${s.error ?? 'failed'})`);
  const done = steps.filter((s) => s.ok).map((s) => s.step);
  return `still to do: ${todo.join('; ')}${done.length ? `; done: ${done.join('; ')}` : ''}`;
}

/** Who settles an unfinished change: said the same way by every message. */
export const RETRIED_BY = 'the next change of this share, or the next host start, retries it first';

/**
 * A failed change's error, carrying what the rollback did (`details.rollback`,
 * `details.rolledBack`). The message states the share's state: `rolledBack` true says "the share
 * was rolled back: <done>", false "the share was NOT rolled back fully: still to do …" (never both).
 */
export function withRollback(
  e: unknown,
  what: string,
  undo: { steps: Step[]; complete: boolean },
  done: string,
): unknown {
  if (!(e instanceof ApiError)) return e;
  const cmd = e.details?.command;
  const named = Array.isArray(cmd)
    ? ` at \`${cmd.map((a, i) => (i === 0 ? String(a).slice(String(a).lastIndexOf('/') + 1) : String(a))).join(' ')}\``
    : '';
  const stderr =
    typeof e.details?.stderr === 'string' ? e.details.stderr.split('\n').find((l) => l.trim() !== '') : undefined;
  const exit =
    typeof e.details?.exitCode === 'number'
      ? ` (exit ${e.details.exitCode}${stderr ? `: ${stderr}` : ''})`
      : `: ${e.message}`;
  const state = undo.complete
    ? `the share was rolled back: ${done}`
    : `the share was NOT rolled back fully: ${unfinishedText(undo.steps)}; no other change of this share is made until that is done (${RETRIED_BY})`;
  return new ApiError(e.code, `${what} failed${named}${exit}; ${state}`, {
    issues: e.issues,
    details: { ...(e.details ?? {}), rollback: undo.steps, rolledBack: undo.complete },
  });
}

/** One step of a rollback or completion, as reported in a 502's details and the host log. */
export interface Step {
  step: string;
  ok: boolean;
  error?: string;
}

/** Runs one step; a best-effort step that fails is recorded as ok with the error marked ignored. */
async function command(
  sys: SystemClient,
  argv: string[],
  steps: Step[],
  label: string,
  bestEffort = false,
): Promise<boolean> {
  let error: string | undefined;
  try {
    const r = await sys.exec(argv);
    if (r.code !== 0 || r.timedOut)
      error = r.timedOut ? 'timed out' : `exit ${r.code}: ${r.stderr.trim().split('\n')[0] ?? ''}`;
  } catch (e) {
    error = e instanceof Error ? e.message : String(e);
  }
  if (error === undefined) steps.push({ step: label, ok: true });
  else if (bestEffort) steps.push({ step: label, ok: true, error: `ignored: ${error}` });
  else steps.push({ step: label, ok: false, error });
  return error === undefined;
}

async function remove(sys: SystemClient, path: string, steps: Step[]): Promise<boolean> {
  try {
    const r = await sys.removeFile(path);
    steps.push({ step: `remove ${path}${r.removed ? '' : ' (absent)'}`, ok: true });
    return true;
  } catch (e) {
    steps.push({ step: `remove ${path}`, ok: false, error: e instanceof ApiError ? e.message : String(e) });
    return false;
  }
}

export interface CreateProgress {
  /** the environment file was written by this create (never remove one it did not write) */
  envWritten: boolean;
  /** `systemctl enable` succeeded */
  enabled: boolean;
  /** `systemctl start` succeeded */
  started: boolean;
  /** a unit file was written (daemon-reload needed after removing it) */
  unitWritten: boolean;
}

/**
 * Undo a create. `progress` undefined (host start: unknown) runs every step, stop and disable
 * best effort. Returns the steps and whether the share is gone (files removed, daemon reloaded).
 */
export async function undoCreate(
  sys: SystemClient,
  vars: Vars,
  share: string,
  progress?: CreateProgress,
): Promise<{ steps: Step[]; complete: boolean }> {
  const systemctl = bin(vars, 'systemctl');
  const unit = serviceName(share);
  const steps: Step[] = [];
  if (!progress || progress.started)
    await command(sys, [systemctl, 'stop', '--', unit], steps, `systemctl stop ${unit}`, true);
  let ok = true;
  if (!progress || progress.enabled) {
    const disabled = await command(
      sys,
      [systemctl, 'disable', '--', unit],
      steps,
      `systemctl disable ${unit}`,
      !progress,
    );
    if (progress) ok = disabled;
  }
  if (!progress || progress.envWritten) ok = (await remove(sys, envPath(vars, share), steps)) && ok;
  if (!progress || progress.unitWritten) ok = (await remove(sys, unitPath(vars, share), steps)) && ok;
  if (!progress || progress.unitWritten)
    ok = (await command(sys, [systemctl, 'daemon-reload'], steps, 'systemctl daemon-reload')) && ok;
  return { steps, complete: ok };
}

/** Undo an update: put the previous environment file back (0600) and restart the service if it runs. */
export async function undoUpdate(
  sys: SystemClient,
  vars: Vars,
  share: string,
): Promise<{ steps: Step[]; complete: boolean }> {
  const steps: Step[] = [];
  const prevPath = envPrevPath(vars, share);
  let ok = true;
  try {
    const prev = await sys.readFile(prevPath);
    if (prev !== null) {
      await sys.writeFile(envPath(vars, share), prev, { mode: 0o600 });
      steps.push({ step: `restore ${envPath(vars, share)}`, ok: true });
    } else {
      steps.push({
        step: `restore ${envPath(vars, share)} (no previous version kept: the update had not written it)`,
        ok: true,
      });
    }
  } catch (e) {
    steps.push({
      step: `restore ${envPath(vars, share)}`,
      ok: false,
      error: e instanceof Error ? e.message : String(e),
    });
    steps.push(
      { step: `systemctl try-restart ${serviceName(share)}`, ok: false, error: 'not run' },
      { step: `remove ${prevPath}`, ok: false, error: 'not run: the previous version is kept for the retry' },
    );
    return { steps, complete: false };
  }
  const unit = serviceName(share);
  ok =
    (await command(sys, [bin(vars, 'systemctl'), 'try-restart', '--', unit], steps, `systemctl try-restart ${unit}`)) &&
    ok;
  if (ok) ok = await remove(sys, prevPath, steps);
  else
    steps.push({ step: `remove ${prevPath}`, ok: false, error: 'not run: the previous version is kept for the retry' });
  return { steps, complete: ok };
}

/** Finish a delete whose request did not: stop, disable (best effort), remove both files, daemon-reload. */
export async function finishDelete(
  sys: SystemClient,
  vars: Vars,
  share: string,
): Promise<{ steps: Step[]; complete: boolean }> {
  const systemctl = bin(vars, 'systemctl');
  const unit = serviceName(share);
  const steps: Step[] = [];
  await command(sys, [systemctl, 'stop', '--', unit], steps, `systemctl stop ${unit}`, true);
  await command(sys, [systemctl, 'disable', '--', unit], steps, `systemctl disable ${unit}`, true);
  let ok = await remove(sys, envPath(vars, share), steps);
  ok = (await remove(sys, envPrevPath(vars, share), steps)) && ok;
  ok = (await remove(sys, unitPath(vars, share), steps)) && ok;
  ok = (await command(sys, [systemctl, 'daemon-reload'], steps, 'systemctl daemon-reload')) && ok;
  return { steps, complete: ok };
}

/** Settle one unfinished intent (host start); the row is cleared only when every needed step worked. */
export async function settleIntent(
  sys: SystemClient,
  vars: Vars,
  db: D1Database,
  intent: Intent,
): Promise<{ outcome: 'rolled back' | 'completed'; steps: Step[]; complete: boolean }> {
  const r =
    intent.op === 'create'
      ? { outcome: 'rolled back' as const, ...(await undoCreate(sys, vars, intent.shareName)) }
      : intent.op === 'update'
        ? { outcome: 'rolled back' as const, ...(await undoUpdate(sys, vars, intent.shareName)) }
        : { outcome: 'completed' as const, ...(await finishDelete(sys, vars, intent.shareName)) };
  if (r.complete) await endIntent(db, intent.shareName);
  return r;
}
