/** Filesystem results (the spec's raw/warnings/parsed) from `lfs df --lazy <mount>`: fsResultOf (pure) and fsResults (runs it per mount). */
import { ApiError } from '../core/errors';
import { ParseError } from '../core/parse-error';
import type { ExecResult, SystemClient } from '../core/system';
import { areaSettings } from '../core/settings';
import { bin, type Vars } from '../core/vars';
import { dfsSettings } from './contract';
import { timedOut } from './commands';
import type { DlLine } from './parse/lctl-dl';
import { parseLfsDf } from './parse/lfs-df';
import type { LustreMount } from './parse/mount';
import type * as z from 'zod';
import type { fsResult, fsRow } from './responses';

type FsResult = z.input<typeof fsResult>;
type FsRow = z.input<typeof fsRow>;

const FLAG_NAMES: Record<string, string> = {
  D: 'degraded',
  R: 'read-only',
  N: 'no-create',
  S: 'out of space',
  I: 'out of inodes',
  f: 'flash',
};

export const mgsOf = (m: LustreMount) => (m.mgs ?? []).map((n) => n.join(',')).join(':');

/** One client mount's result from `lfs df` in 1K blocks (`lctl dl -t` gives the server NIDs). */
export function fsResultOf(
  mount: LustreMount,
  r: Pick<ExecResult, 'stdout' | 'stderr' | 'code'>,
  dl: DlLine[],
): FsResult {
  const warnings: string[] = [];
  const parsed: FsRow[] = [];
  const blocks = parseLfsDf(r.stdout);
  const fs = mount.fsname ?? '';
  const mgs = mgsOf(mount);
  for (const b of blocks) {
    if (b.mode !== 'blocks') throw new ParseError('lfs df', `expected 1K-blocks columns, got ${b.mode}`);
    for (const row of b.rows) {
      if (row.error !== undefined) {
        warnings.push(`${row.uuid}: ${row.error}`);
        continue;
      }
      const name = row.uuid.replace(/_UUID$/, '');
      const out: FsRow = {
        uuid: row.uuid,
        '1kblocks': Number(row.total),
        used: Number(row.used),
        available: Number(row.available),
        use: row.usePercent ?? 0,
        mounted: row.mount ?? mount.mountpoint,
        filesystem: fs,
        name,
        mgs,
      };
      if (row.targetType) {
        out.type = row.targetType;
        out.index = row.targetIndex;
        const dev = dl.find(
          (d) => (d.type === 'osc' || d.type === 'mdc') && d.name.startsWith(`${name}-${d.type}-`) && d.nid,
        );
        if (dev?.nid) out.nid = dev.nid;
      }
      if (row.flags)
        warnings.push(
          `${row.uuid}: ${row.flags
            .split('')
            .map((f) => FLAG_NAMES[f] ?? f)
            .join(', ')}`,
        );
      parsed.push(out);
    }
    if (b.summary) {
      parsed.push({
        uuid: b.summary.uuid,
        '1kblocks': Number(b.summary.total),
        used: Number(b.summary.used),
        available: Number(b.summary.available),
        use: b.summary.usePercent ?? 0,
        mounted: b.summary.mount ?? mount.mountpoint,
        filesystem: fs,
        name: 'filesystem_summary',
        mgs,
      });
    } else warnings.push('no filesystem summary: lfs df stopped before the end');
  }
  if (r.code !== 0) warnings.push(`lfs df exited ${r.code}`);
  if (r.stderr.trim()) warnings.push(r.stderr.trim());
  return { raw: r.stdout, warnings: warnings.join('\n'), parsed };
}

/**
 * `lfs df --lazy <mount>` for each client mount, each bounded by `timeouts.lfsDfMs` (an OSS that
 * is down hangs lfs df even with --lazy on old releases). A time-out answers 504; its details
 * carry the partial output (`warnings`) and the filesystems done so far (`collected`).
 */
export async function fsResults(
  system: SystemClient,
  vars: Vars,
  mounts: LustreMount[],
  dl: DlLine[],
): Promise<FsResult[]> {
  const limit = areaSettings(vars, 'dfs', dfsSettings).timeouts.lfsDfMs;
  const out: FsResult[] = [];
  for (const m of mounts) {
    const argv = [bin(vars, 'lfs'), 'df', '--lazy', m.mountpoint];
    const r = await system.exec(argv, { timeoutMs: limit });
    if (r.timedOut) {
      throw timedOut(argv, r, limit, { filesystem: m.fsname, collected: out });
    }
    if (r.code !== 0 && r.stdout.trim() === '') {
      throw new ApiError(
        'command_failed',
        `lfs df on ${m.mountpoint} failed (exit ${r.code})${r.stderr.trim() ? `: ${r.stderr.trim().split('\n')[0]}` : ''}`,
        {
          details: { command: argv, exitCode: r.code, stderr: r.stderr.trim().slice(0, 2000) },
        },
      );
    }
    out.push(fsResultOf(m, r, dl));
  }
  return out;
}
