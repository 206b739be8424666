/**
 * `mount -t lustre` listing: `<spec> on <dir> type lustre (<opts>)`. A client's spec is
 * `<mgsnids>:/<fsname>` (`:` between failover MGS nodes, `,` between NIDs of one node); a server's
 * is its device or `<pool>/<dataset>`. Mount points are printed raw (spaces included), so the
 * line is matched from both ends. Tolerated: `clush -a` separators (`-----` lines and the host
 * name between them) — the host is kept on the following entries.
 */
import { ParseError } from '../../core/parse-error';
import { isNid } from '../names';

export interface LustreMount {
  spec: string;
  mountpoint: string;
  options: string[];
  /** Client mounts: the filesystem and the MGS nodes (each a list of NIDs). */
  fsname?: string;
  mgs?: string[][];
  /** The host a clush-style listing named. */
  host?: string;
}

export function parseLustreMounts(text: string): LustreMount[] {
  const out: LustreMount[] = [];
  const lines = text.split('\n');
  let host: string | undefined;
  for (let i = 0; i < lines.length; i++) {
    const l = lines[i].trim();
    if (l === '') continue;
    if (/^-{3,}$/.test(l)) {
      if (
        i + 2 < lines.length &&
        /^-{3,}$/.test(lines[i + 2].trim()) &&
        /^[A-Za-z0-9_.-]+$/.test(lines[i + 1].trim())
      ) {
        host = lines[i + 1].trim();
        i += 2;
      }
      continue;
    }
    const m = /^(\S+) on (.+) type lustre \(([^)]*)\)$/.exec(l);
    if (!m)
      throw new ParseError('mount -t lustre', `not a lustre mount line: ${JSON.stringify(l.slice(0, 60))}`, i + 1);
    const e: LustreMount = { spec: m[1], mountpoint: m[2], options: m[3] === '' ? [] : m[3].split(',') };
    const c = /^(.+):\/([A-Za-z0-9_]{1,8})$/.exec(m[1]);
    if (c) {
      const nodes = c[1].split(':').map((n) => n.split(','));
      if (!nodes.every((n) => n.every(isNid)))
        throw new ParseError('mount -t lustre', `bad MGS NIDs in ${JSON.stringify(m[1])}`, i + 1);
      e.fsname = c[2];
      e.mgs = nodes;
    }
    if (host) e.host = host;
    out.push(e);
  }
  return out;
}
