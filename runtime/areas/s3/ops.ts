/**
 * The s3 area's host operation:
 *   s3/resolve-path  the real path (symlinks followed) of a directory to share, which must be a
 *                    directory at or under one of settings.s3.shareRoots (themselves resolved),
 *                    all seen from settings.s3.pathRoot (`/`; the demo's root in the demo).
 *                    The share's server runs as root over the whole tree: a directory that is,
 *                    or holds, another area's or the host's managed path is refused (403 naming
 *                    the owner, runtime/system/owners.ts).
 * Audited with the path asked and the answer; it never reads or changes the directory.
 */
import { realpath, stat } from 'node:fs/promises';
import { join, relative } from 'node:path';
import {
  RESOLVE_PATH_OP,
  resolvePathPayload,
  type ResolvePathResult,
  type S3Settings,
} from '../../../handlers/s3/contract';
import { isUnder } from '../../../handlers/core/paths';
import type { SqliteDb } from '../../db/database';
import { resolveExisting } from '../../system/files';
import { payloadOf } from '../../system/host-op';
import type { HostOp } from '../../system/service';
import { SystemRefusal } from '../../system/types';
import { opAudit } from '../../db/audit';

export function s3Ops(o: {
  settings: S3Settings;
  db: SqliteDb;
  /** refuses a share of a tree that is or holds another owner's path (AreaHost.checkOwner, kind s3.share) */
  checkOwner?: (real: string, o: { recursive: boolean; show: (p: string) => string }) => void;
}): Record<string, HostOp> {
  const audit = opAudit(o.db);
  return {
    [RESOLVE_PATH_OP]: async (payload, requestId): Promise<ResolvePathResult> => {
      const asked = payloadOf(resolvePathPayload, RESOLVE_PATH_OP, payload).path;
      if (!asked.startsWith('/') || asked.includes('\0'))
        throw new SystemRefusal('bad_request', `${RESOLVE_PATH_OP}: path must be absolute`);
      let result: ResolvePathResult;
      // share paths are seen from settings.s3.pathRoot (`/` on a real box, the demo's root there)
      // (a root that does not exist yet resolves to where it would be, and nothing real is below it)
      const base = resolveExisting(o.settings.pathRoot);
      const show = (real: string) => (base === '/' ? real : isUnder(real, base) ? `/${relative(base, real)}` : real);
      try {
        const real = await realpath(join(base, asked));
        const roots = o.settings.shareRoots.map((root) => resolveExisting(join(base, root)));
        const shown = show(real);
        if (!roots.some((root) => isUnder(real, root))) result = { ok: false, reason: 'outside', path: shown };
        else if (!(await stat(real)).isDirectory()) result = { ok: false, reason: 'not-directory', path: shown };
        else {
          try {
            o.checkOwner?.(real, { recursive: true, show });
          } catch (e) {
            audit({ kind: RESOLVE_PATH_OP, requestId, argv: [asked], note: `refused: ${(e as Error).message}` });
            throw e;
          }
          result = { ok: true, path: shown };
        }
      } catch (e) {
        const code = (e as NodeJS.ErrnoException).code;
        if (code !== 'ENOENT' && code !== 'ENOTDIR') throw e;
        result = { ok: false, reason: 'missing' };
      }
      audit({
        kind: RESOLVE_PATH_OP,
        requestId,
        argv: [asked],
        note: result.ok ? result.path : `refused: ${result.reason}`,
      });
      return result;
    },
  };
}
