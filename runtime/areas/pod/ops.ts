/**
 * The pod area's host operations (registered through runtime/areas/pod.ts):
 *   pod/validate  compose file validation (compose-check.ts); reads only the pod's own current
 *                 compose file and /proc/net
 *   pod/resolve   realpath of a path's longest existing prefix (where an fstab mount would land)
 *   pod/remove    removes a pod's directories `<paths.podData>/<project>` and `<paths.podFiles>/<project>`
 *                 (never a symlink, never anything but a direct child of those locations)
 * Both are audited (project, outcome; never file contents).
 */
import { lstat, realpath, rm } from 'node:fs/promises';
import { join } from 'node:path';
import {
  REMOVE_OP,
  removePayload,
  RESOLVE_OP,
  resolvePayload,
  VALIDATE_OP,
  validatePayload,
  type PodSettings,
  type RemoveResult,
  type ResolveResult,
} from '../../../handlers/pod/contract';
import type { SqliteDb } from '../../db/database';
import type { HostOp } from '../../system/service';
import { SystemRefusal } from '../../system/types';
import { payloadOf } from '../../system/host-op';
import { checkCompose, hostListeners, type CheckContext } from './compose-check';
import { resolveExisting } from '../../system/files';
import { engineRunner, type EngineExecResult } from './admission/engine';
import { applyOp, type ApplyDeps } from './apply';
import { opAudit } from '../../db/audit';

export interface PodOpsOptions {
  settings: PodSettings;
  db: SqliteDb;
  podData: string;
  podFiles: string;
  podUnitDir: string;
  systemctl: string | undefined;
  /** the SYSTEM binding's operations (exec, file/*, journal/*: confined, audited) */
  handle: ApplyDeps['handle'];
  /** tests: a fixed set of `port/proto` the host "listens" on */
  listeners?: () => Promise<Set<string>>;
}

export function podOps(o: PodOpsOptions): Record<string, HostOp> {
  const audit = opAudit(o.db);
  const prefix = `${o.settings.prefix}-pod-`;
  const check = (requestId: string | undefined): CheckContext => ({
    settings: o.settings,
    podData: o.podData,
    podFiles: o.podFiles,
    listeners: o.listeners ?? (() => hostListeners()),
    engine: o.settings.engineCheck
      ? engineRunner(
          o.settings,
          async (argv, opts) => (await o.handle('exec', { argv, ...opts }, requestId)) as EngineExecResult,
        )
      : null,
  });
  return {
    ...applyOp({
      check,
      podFiles: o.podFiles,
      podUnitDir: o.podUnitDir,
      systemctl: o.systemctl,
      composeTimeoutMs: o.settings.composeTimeoutMs,
      handle: o.handle,
    }),
    [VALIDATE_OP]: async (payload, requestId) => {
      const req = payloadOf(validatePayload, VALIDATE_OP, payload);
      const started = performance.now();
      const r = await checkCompose(req, check(requestId));
      audit({
        kind: VALIDATE_OP,
        requestId,
        argv: [req.project],
        durationMs: Math.round(performance.now() - started),
        note: r.ok ? 'valid' : `refused: ${r.issues.length} issue(s)`,
      });
      return r;
    },

    [RESOLVE_OP]: async (payload): Promise<ResolveResult> => {
      const req = payloadOf(resolvePayload, RESOLVE_OP, payload);
      return { real: resolveExisting(req.path) };
    },

    [REMOVE_OP]: async (payload, requestId): Promise<RemoveResult> => {
      const req = payloadOf(removePayload, REMOVE_OP, payload);
      if (!req.project.startsWith(prefix))
        throw new SystemRefusal('forbidden', `${req.project} is not a pod of this host (prefix ${prefix})`);
      // the data directory and the directory of its compose file: each a direct child of its root
      let removed = false;
      for (const base of [o.podData, o.podFiles]) {
        let root: string;
        try {
          root = await realpath(base);
        } catch {
          continue;
        }
        const dir = join(root, req.project);
        let st;
        try {
          st = await lstat(dir);
        } catch {
          audit({ kind: REMOVE_OP, requestId, argv: [dir], note: 'absent' });
          continue;
        }
        if (!st.isDirectory())
          throw new SystemRefusal('conflict', `${dir} is not a directory (a symlink or file is never removed)`);
        await rm(dir, { recursive: true, force: true });
        audit({ kind: REMOVE_OP, requestId, argv: [dir], note: 'removed' });
        removed = true;
      }
      if (!removed) return { removed: false };
      return { removed: true };
    },
  };
}
