/** `lsblk -J -d -o PATH,TYPE,FSTYPE,UUID,MOUNTPOINTS -- DEV` and `findmnt -J -o TARGET,SOURCE,FSTYPE --mountpoint P`. */
import { ParseError } from '../../core/parse-error';

export interface BlockInfo {
  path: string;
  type: string;
  fstype: string | null;
  uuid: string | null;
  /** where it is mounted now (`[SWAP]` for active swap); [] when nowhere */
  mountpoints: string[];
}
export interface MountInfo {
  target: string;
  source: string;
  fstype: string;
}

function json(tool: string, text: string): Record<string, unknown> {
  try {
    const v = JSON.parse(text) as unknown;
    if (v && typeof v === 'object' && !Array.isArray(v)) return v as Record<string, unknown>;
  } catch {
    // below
  }
  throw new ParseError(tool, 'expected a JSON object');
}

const s = (v: unknown) => (typeof v === 'string' ? v : null);

export function parseLsblkOne(text: string): BlockInfo {
  const d = json('lsblk', text).blockdevices;
  if (!Array.isArray(d) || d.length !== 1 || !d[0] || typeof d[0] !== 'object')
    throw new ParseError('lsblk', 'expected one block device');
  const b = d[0] as Record<string, unknown>;
  if (!s(b.path) || !s(b.type)) throw new ParseError('lsblk', 'device without path or type');
  // asked for: a missing list cannot be read as "not mounted" (util-linux < 2.37 has no MOUNTPOINTS)
  const mps = b.mountpoints;
  if (!Array.isArray(mps) || mps.some((m) => m !== null && typeof m !== 'string'))
    throw new ParseError('lsblk', 'device without a mountpoints list');
  return {
    path: s(b.path) as string,
    type: s(b.type) as string,
    fstype: s(b.fstype),
    uuid: s(b.uuid),
    mountpoints: (mps as (string | null)[]).filter((m): m is string => m !== null && m !== ''),
  };
}

export function parseFindmntOne(text: string): MountInfo {
  const f = json('findmnt', text).filesystems;
  if (!Array.isArray(f) || f.length < 1 || !f[0] || typeof f[0] !== 'object')
    throw new ParseError('findmnt', 'expected a filesystem');
  // several filesystems mounted on one place: the last one is the one seen there
  const m = f[f.length - 1] as Record<string, unknown>;
  if (!s(m.target) || !s(m.source) || !s(m.fstype))
    throw new ParseError('findmnt', 'filesystem without target, source or fstype');
  return { target: s(m.target) as string, source: s(m.source) as string, fstype: s(m.fstype) as string };
}

/** `blkid -p -o export -- DEV`: KEY=value lines (DEVNAME, UUID, TYPE, USAGE…); rc 2 = nothing found. */
export function parseBlkidExport(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  text.split('\n').forEach((l, i) => {
    if (l.trim() === '') return;
    const eq = l.indexOf('=');
    if (eq <= 0 || !/^[A-Z_]+$/.test(l.slice(0, eq))) throw new ParseError('blkid', 'not a KEY=value line', i + 1);
    out[l.slice(0, eq)] = l.slice(eq + 1);
  });
  return out;
}
