/**
 * pod/apply (handlers/pod/contract.ts): admit, write, reload and restart in one host crossing,
 * under the intent journal (runtime/system/journal.ts) so that a kill -9 part way is rolled back
 * at the next start: the compose file and the unit are put back (removed after a create), then
 * systemd reloads and a pod that was restarted is restarted on its old file.
 */
import { join } from 'node:path';
import { APPLY_OP, applyPayload, COMPOSE_FILE_NAME, type ApplyResult } from '../../../handlers/pod/contract';
import type { HostOp } from '../../system/service';
import { payloadOf } from '../../system/host-op';
import { SystemRefusal } from '../../system/types';
import { checkCompose, type CheckContext } from './compose-check';

interface ExecResult {
  code: number | null;
  stderr: string;
  timedOut?: boolean;
  durationMs?: number;
}

export interface ApplyDeps {
  check: (requestId: string | undefined) => CheckContext;
  podFiles: string;
  podUnitDir: string;
  /** absent when system.binaries has none: pod/apply then refuses (nothing can reload systemd) */
  systemctl: string | undefined;
  composeTimeoutMs: number;
  /** the SYSTEM binding's own operations (confined, audited), as a route would call them */
  handle: (op: string, payload: Record<string, unknown>, requestId: string | undefined) => Promise<unknown>;
}

export function applyOp(d: ApplyDeps): Record<string, HostOp> {
  return {
    [APPLY_OP]: async (payload, requestId): Promise<ApplyResult> => {
      const req = payloadOf(applyPayload, APPLY_OP, payload);
      const systemctl = d.systemctl;
      if (!systemctl)
        throw new SystemRefusal('not_implemented', 'this host has no systemctl (system.binaries.systemctl)');
      const composeFile = join(d.podFiles, req.project, COMPOSE_FILE_NAME);
      const unitFile = join(d.podUnitDir, `${req.project}.service`);
      const unit = `${req.project}.service`;
      const create = req.mode === 'create';
      const stat = async (p: string) =>
        ((await d.handle('file/stat', { path: p }, requestId)) as { stat: unknown }).stat;
      if (create && ((await stat(composeFile)) || (await stat(unitFile))))
        return { ok: false, status: 409, message: `pod ${req.project} already exists`, issues: [] };

      const progress = (phase: string, message: string) => d.handle('job/progress', { phase, message }, requestId);
      await progress('check', 'the compose file, as the engine resolves it, against the appliance limits');
      const verdict = await checkCompose({ ...req, ignoreOwnPorts: !create, probeHostPorts: true }, d.check(requestId));
      if (!verdict.ok) return verdict;
      await progress('write', `writing ${COMPOSE_FILE_NAME} and ${unit}`);

      const run = async (argv: string[], timeoutMs?: number) =>
        (await d.handle('exec', { argv, ...(timeoutMs ? { timeoutMs } : {}) }, requestId)) as ExecResult;
      const reload = [systemctl, 'daemon-reload'];
      const restart = [systemctl, 'restart', '--', unit];
      const { id } = (await d.handle('journal/begin', { area: 'pod', files: [composeFile, unitFile] }, requestId)) as {
        id: number;
      };
      // recorded before the step runs: recovery reloads systemd and restarts a pod restarted here
      await d.handle(
        'journal/step',
        { id, undo: req.restart ? [reload, [systemctl, 'try-restart', '--', unit]] : [reload] },
        requestId,
      );
      let written = false;
      try {
        const write = { backup: !create, exclusive: create };
        await d.handle(
          'file/write',
          { path: composeFile, content: `${JSON.stringify(verdict.data, null, 2)}\n`, mode: 0o640, ...write },
          requestId,
        );
        written = true;
        await d.handle('file/write', { path: unitFile, content: req.unitText, mode: 0o644, ...write }, requestId);
        if (req.restart) await progress('restart', `restarting ${unit}`);
        for (const [argv, timeoutMs] of [[reload], ...(req.restart ? [[restart, d.composeTimeoutMs]] : [])] as [
          string[],
          number?,
        ][]) {
          const r = await run(argv, timeoutMs);
          if (r.timedOut || r.code !== 0) {
            const rolledBack = await rollBack();
            return {
              ok: false,
              status: r.timedOut ? 504 : 502,
              command: argv,
              exitCode: r.code,
              stderr: r.stderr,
              durationMs: r.durationMs ?? 0,
              rolledBack,
            };
          }
        }
      } catch (e) {
        await rollBack();
        // a create that found the file made meanwhile is the same conflict as above
        if (create && !written && e instanceof SystemRefusal && e.status === 409)
          return { ok: false, status: 409, message: `pod ${req.project} already exists`, issues: [] };
        throw e;
      }
      await d.handle('journal/end', { id }, requestId);
      return verdict;

      /** Both files as they were, systemd reloaded, a restarted pod restarted on its old file; then the intent closes. */
      async function rollBack(): Promise<boolean> {
        let ok = true;
        for (const path of [composeFile, unitFile]) {
          try {
            if (create) await d.handle('file/remove', { path }, requestId);
            else await d.handle('file/restore', { path }, requestId);
          } catch {
            ok = false;
          }
        }
        for (const argv of req.restart ? [reload, restart] : [reload]) {
          const r = await run(argv, d.composeTimeoutMs).catch(() => ({ code: 1, stderr: '' }));
          if (r.code !== 0) ok = false;
        }
        // a rollback that did not complete stays in the journal: the next start tries it again
        if (ok) await d.handle('journal/end', { id }, requestId);
        return ok;
      }
    },
  };
}
