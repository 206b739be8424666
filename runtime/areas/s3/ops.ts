/**
 * The s3 area's host operation:
 *   s3/resolve-path  the real path (symlinks followed) of a directory to share, which must be a
 *                    directory at or under one of settings.s3.shareRoots (themselves resolved).
 * Audited with the path asked and the answer; it never reads or changes the directory.
 */
import { realpathSync } from 'node:fs';
import { realpath, stat } from 'node:fs/promises';
import { sep } from 'node:path';
import { RESOLVE_PATH_OP, resolvePathPayload, type ResolvePathResult, type S3Settings } from '../../../handlers/s3/contract';
import type { SqliteDb } from '../../db/database';
import type { HostOp } from '../../system/service';
import { SystemRefusal } from '../../system/types';

function realRoots(roots: readonly string[]): string[] {
  return roots.map((r) => {
    try {
      return realpathSync(r);
    } catch {
      return r; // a root that does not exist matches nothing below a real path
    }
  });
}

const inside = (p: string, root: string) => p === root || p.startsWith(root.endsWith(sep) ? root : root + sep);

export function s3Ops(o: { settings: S3Settings; db: SqliteDb }): Record<string, HostOp> {
  const audit = o.db.prepare('INSERT INTO audit_log (at, request_id, kind, argv, exit_code, duration_ms, note) VALUES (?, ?, ?, ?, NULL, NULL, ?)');
  return {
    [RESOLVE_PATH_OP]: async (payload, requestId): Promise<ResolvePathResult> => {
      const r = resolvePathPayload.safeParse(payload);
      if (!r.success) throw new SystemRefusal('bad_request', `${RESOLVE_PATH_OP}: ${r.error.issues.map((i) => i.message).join('; ')}`);
      const asked = r.data.path;
      if (!asked.startsWith('/') || asked.includes('\0')) throw new SystemRefusal('bad_request', `${RESOLVE_PATH_OP}: path must be absolute`);
      let result: ResolvePathResult;
      try {
        const real = await realpath(asked);
        const roots = realRoots(o.settings.shareRoots);
        if (!roots.some((root) => inside(real, root))) result = { ok: false, reason: 'outside', path: real };
        else if (!(await stat(real)).isDirectory()) result = { ok: false, reason: 'not-directory', path: real };
        else result = { ok: true, path: real };
      } catch (e) {
        const code = (e as NodeJS.ErrnoException).code;
        if (code !== 'ENOENT' && code !== 'ENOTDIR') throw e;
        result = { ok: false, reason: 'missing' };
      }
      audit.run(Date.now(), requestId ?? null, RESOLVE_PATH_OP, JSON.stringify([asked]), result.ok ? result.path : `refused: ${result.reason}`);
      return result;
    },
  };
}
