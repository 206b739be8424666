/**
 * The fs area's host operations (registered through runtime/areas/fs.ts):
 *   fs/explore    bounded, read-only tree walk (fs-explore.ts)
 *   fs/read-text  one regular file's text, for xxhash_verify's checksum file
 * Both read only below `settings.fs.readRoots`, checked on the real path (symlinks resolved),
 * never another area's or the host's paths (explore: nor a tree holding one), and are audited (path, entry count or size; never file content). A requested path is seen from
 * `settings.fs.pathRoot` (`/`, or the demo's root), and answers name it as requested.
 */
import { join, normalize } from 'node:path';
import { constants } from 'node:fs';
import { lstat, open, realpath } from 'node:fs/promises';
import {
  EXPLORE_OP,
  exploreOpPayload,
  collectExplore,
  isExploreStream,
  type ExploreStream,
  type ExploreTrailer,
  type FsSettings,
} from '../../../handlers/fs/contract';
import { READ_TEXT_MAX_BYTES, READ_TEXT_OP, readTextPayload, type ReadTextResult } from '../../../handlers/fs/contract';
import type { SqliteDb } from '../../db/database';
import { freshResult, type HostOp } from '../../system/service';
import { SystemRefusal } from '../../system/types';
import { payloadOf } from '../../system/host-op';
import { exploreWalk } from './explore';
import { isUnder, realRoots } from '../../system/confine';
import { opAudit } from '../../db/audit';

/** the binding protocol carries the collected tree */
const collectIfStream = (v: unknown) => (isExploreStream(v) ? collectExplore(v) : v);

export interface FsOpsOptions {
  settings: FsSettings;
  db: SqliteDb;
  /** refuses a real path (`recursive`: a tree) another area or the host manages (AreaHost.checkOwner, kind fs.read) */
  checkOwner?: (real: string, o?: { recursive?: boolean }) => void;
}

export function fsOps(o: FsOpsOptions): Record<string, HostOp> {
  const s = o.settings;
  const roots = realRoots(s.readRoots);
  // the requested path as seen from pathRoot; refusals name the path as the client gave it
  const under = !s.pathRoot || s.pathRoot === '/' ? undefined : s.pathRoot.replace(/\/+$/, '');
  // normalize first: an absolute path cannot climb above its own / (so never above pathRoot)
  const seen = (p: string) => (under === undefined ? p : join(under, normalize(p)));
  const unseen = (p: string) => (under !== undefined && isUnder(p, under) ? p.slice(under.length) || '/' : p);
  const asRequested = <T>(run: () => Promise<T>): Promise<T> =>
    under === undefined
      ? run()
      : run().catch((e: unknown) => {
          if (e instanceof SystemRefusal) throw new SystemRefusal(e.code, e.message.split(`${under}/`).join('/'));
          throw e;
        });
  const audit = opAudit(o.db);

  return {
    // the tree (or stream) is built for this call and dropped: the direct binding need not copy it
    [EXPLORE_OP]: freshResult(async (payload, requestId) => {
      const req = payloadOf(exploreOpPayload, EXPLORE_OP, payload);
      const started = performance.now();
      const audited = (t: ExploreTrailer, ended = true) => {
        const note = `${t.total} entries${t.truncated ? `, truncated by ${t.truncatedBy.join('+')}` : ''}${ended ? '' : ', not read to the end'}`;
        audit({
          kind: EXPLORE_OP,
          requestId,
          argv: [req.path],
          durationMs: Math.round(performance.now() - started),
          note,
        });
      };
      const result = await asRequested(() =>
        exploreWalk(
          { ...req, path: seen(req.path) },
          {
            roots,
            maxEntriesCeiling: s.exploreMaxEntries,
            showAs: under === undefined ? undefined : unseen,
            checkOwner: o.checkOwner && ((real) => o.checkOwner?.(real, { recursive: true })),
          },
        ),
      );
      if (isExploreStream(result)) {
        // the audit row is written when the walk's records have been read (or left)
        return {
          ...result,
          async *records() {
            let ended = false;
            try {
              yield* result.records();
              ended = true;
            } finally {
              audited(result.trailer(), ended);
            }
          },
        } satisfies ExploreStream;
      }
      audited(result);
      return result;
    }, collectIfStream),

    [READ_TEXT_OP]: (payload, requestId) => asRequested(() => readText(payload, requestId)),
  };

  async function readText(payload: unknown, requestId: string | undefined): Promise<ReadTextResult> {
    const req0 = payloadOf(readTextPayload, READ_TEXT_OP, payload);
    const req = { ...req0, path: seen(req0.path) };
    const max = req.maxBytes ?? READ_TEXT_MAX_BYTES;
    let real: string;
    try {
      real = await realpath(req.path);
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if (code === 'ENOENT' || code === 'ENOTDIR') throw new SystemRefusal('not_found', `${req.path} does not exist`);
      throw e;
    }
    if (!roots.some((r) => isUnder(real, r))) {
      throw new SystemRefusal(
        'forbidden',
        `${req.path} is outside the directories this host may read (settings.fs.readRoots)`,
      );
    }
    o.checkOwner?.(real);
    // a FIFO, device or socket would block a thread-pool thread forever: refuse it before
    // opening, open without blocking or following a last-moment link, and check the inode
    const before = await lstat(real);
    if (!before.isFile()) throw new SystemRefusal('bad_request', `${req.path} is not a regular file`);
    const fh = await open(real, constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOFOLLOW);
    try {
      const st = await fh.stat();
      if (!st.isFile() || st.ino !== before.ino || st.dev !== before.dev)
        throw new SystemRefusal('conflict', `${req.path} changed while it was being read`);
      if (st.size > max) throw new SystemRefusal('payload_too_large', `${req.path} is larger than ${max} bytes`);
      // one byte more than allowed, to notice a file that grew past the limit after the stat
      const buf = Buffer.alloc(Math.min(st.size, max) + 1);
      let bytesRead = 0;
      for (;;) {
        const r = await fh.read(buf, bytesRead, buf.length - bytesRead, bytesRead);
        if (r.bytesRead === 0) break;
        bytesRead += r.bytesRead;
        if (bytesRead === buf.length) break;
      }
      if (bytesRead > max) throw new SystemRefusal('payload_too_large', `${req.path} is larger than ${max} bytes`);
      audit({ kind: READ_TEXT_OP, requestId, argv: [req.path], note: `${bytesRead} bytes` });
      return { content: buf.subarray(0, bytesRead).toString('utf8') };
    } finally {
      await fh.close();
    }
  }
}
