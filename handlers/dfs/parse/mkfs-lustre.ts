/**
 * `mkfs.lustre` (and `tunefs.lustre`) output: the "Permanent disk data" block, then backend
 * details. Tolerated: the heading's indentation lost in pastes, the Flags continuation indented by
 * any amount, an empty / trailing-space / leading-comma `Persistent mount opts`, `lustre:` property
 * lines with any indentation, two `mkfs_cmd =` lines (2.8 created the pool too) and a
 * `mkfs_cmd =` glued to the previous `options` line (a paste artefact).
 */
import { ParseError } from '../../core/parse-error';

export interface MkfsLustre {
  target: string;
  /** Number, or null for `unassigned`. */
  index: number | null;
  fsname: string;
  mountType: string;
  flags: number;
  flagNames: string[];
  mountOpts: string;
  parameters: { key: string; value: string }[];
  mkfsCmds: string[];
  /** ZFS: the dataset `Writing <ds> properties` names. */
  dataset?: string;
  /** ZFS: `lustre:<k>=<v>` properties written on the dataset. */
  properties: Record<string, string>;
  /** ldiskfs: the device formatted. */
  device?: string;
  /** ldiskfs: `Writing CONFIGS/mountdata` was printed. */
  wroteMountdata: boolean;
}

function field(lines: string[], label: string): { value: string; at: number } {
  const at = lines.findIndex((l) => l.startsWith(`${label}:`));
  if (at < 0) throw new ParseError('mkfs.lustre', `no "${label}:" line`);
  return { value: lines[at].slice(label.length + 1).trim(), at };
}

export function parseMkfsLustre(text: string): MkfsLustre {
  const lines = text.split('\n').map((l) => l.replace(/\s+$/, ''));
  const head = lines.findIndex((l) => l.trim() === 'Permanent disk data:');
  if (head < 0) throw new ParseError('mkfs.lustre', 'no "Permanent disk data:" block');
  const body = lines.slice(head + 1).map((l) => l.trimStart());
  const target = field(body, 'Target').value;
  if (!/^(MGS|[A-Za-z0-9_]{1,8}[:-](MDT|OST)[0-9a-fA-F]{4})$/.test(target))
    throw new ParseError('mkfs.lustre', `unexpected target ${JSON.stringify(target)}`);
  const idx = field(body, 'Index').value;
  if (!/^(\d+|unassigned)$/.test(idx)) throw new ParseError('mkfs.lustre', `index ${JSON.stringify(idx)}`);
  const flags = field(body, 'Flags');
  const fm = /^0x([0-9a-fA-F]+)$/.exec(flags.value);
  if (!fm) throw new ParseError('mkfs.lustre', `flags ${JSON.stringify(flags.value)} are not hex`);
  const names = /^\((.*)\)$/.exec((body[flags.at + 1] ?? '').trim());
  if (!names) throw new ParseError('mkfs.lustre', 'no "(flag names )" line after Flags');
  const params = field(body, 'Parameters').value;
  const out: MkfsLustre = {
    target,
    index: idx === 'unassigned' ? null : Number(idx),
    fsname: field(body, 'Lustre FS').value,
    mountType: field(body, 'Mount type').value,
    flags: parseInt(fm[1], 16),
    flagNames: names[1].trim().split(/\s+/).filter(Boolean),
    mountOpts: field(body, 'Persistent mount opts').value,
    parameters:
      params === ''
        ? []
        : params.split(/\s+/).map((kv) => {
            const eq = kv.indexOf('=');
            if (eq <= 0) throw new ParseError('mkfs.lustre', `parameter ${JSON.stringify(kv)} is not key=value`);
            return { key: kv.slice(0, eq), value: kv.slice(eq + 1) };
          }),
    mkfsCmds: [],
    properties: {},
    wroteMountdata: false,
  };
  for (const l of body) {
    const c = l.indexOf('mkfs_cmd = ');
    if (c >= 0)
      out.mkfsCmds.push(
        l
          .slice(c + 'mkfs_cmd = '.length)
          .replace(/\s+/g, ' ')
          .trim(),
      );
    const w = /^Writing (\S+) properties$/.exec(l);
    if (w) out.dataset = w[1];
    const p = /^lustre:([A-Za-z0-9_.]+)=(.*)$/.exec(l);
    if (p) out.properties[p[1]] = p[2];
    const d = /^formatting backing filesystem \S+ on (\S+)$/.exec(l);
    if (d) out.device = d[1];
    if (l === 'Writing CONFIGS/mountdata') out.wroteMountdata = true;
  }
  return out;
}
