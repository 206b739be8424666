/**
 * `lsblk -J -b -o <LSBLK_COLUMNS> [-- <device>]` (util-linux 2.38.1, Debian 12).
 *
 * Column choice (all in 2.38's `lsblk --help`; HOLDERS does not exist there): holders and
 * partitions appear as `children` of the device in the default tree output, which is what
 * make_filesystem needs ("is anything stacked on this device?"). MOUNTPOINTS (plural, 2.37+)
 * lists every mountpoint and `[SWAP]` for active swap; the old singular MOUNTPOINT column is
 * accepted too. With `-b` SIZE is a number of bytes; RO is a JSON boolean in 2.38 and "0"/"1"
 * in older releases.
 *
 * Caveat recorded on this box: FSTYPE/LABEL/UUID/PTTYPE come from the udev database, so
 * without udev (containers, this test VM) they stay null even right after mkfs. Signature
 * checks therefore rely on `wipefs -n -J` (parse/wipefs.ts), and these columns only add to it.
 */
import * as z from 'zod';
import { ParseError } from '../../core/parse-error';
import type { LsblkDevice } from '../schemas';
import { parseJsonOutput } from './json';

const PARSER = 'lsblk';

export const LSBLK_COLUMNS = [
  'NAME',
  'KNAME',
  'PATH',
  'MAJ:MIN',
  'TYPE',
  'SIZE',
  'RO',
  'FSTYPE',
  'LABEL',
  'UUID',
  'PTTYPE',
  'PKNAME',
  'MOUNTPOINTS',
] as const;

/** argv the routes run; `--` so a device argument can never be read as an option */
export function lsblkArgv(device?: string): string[] {
  const argv = ['/usr/bin/lsblk', '-J', '-b', '-o', LSBLK_COLUMNS.join(',')];
  return device === undefined ? argv : [...argv, '--', device];
}

interface RawDevice {
  name: string;
  kname?: string | null;
  path?: string | null;
  'maj:min'?: string | null;
  type: string;
  size?: number | string | null;
  ro?: boolean | string | null;
  fstype?: string | null;
  label?: string | null;
  uuid?: string | null;
  pttype?: string | null;
  pkname?: string | null;
  mountpoints?: (string | null)[] | null;
  mountpoint?: string | null;
  children?: RawDevice[];
}

const nstr = z.string().nullish();
const rawDevice: z.ZodType<RawDevice> = z.lazy(() =>
  z.object({
    name: z.string(),
    kname: nstr,
    path: nstr,
    'maj:min': nstr,
    type: z.string(),
    size: z.union([z.number(), z.string()]).nullish(),
    ro: z.union([z.boolean(), z.string()]).nullish(),
    fstype: nstr,
    label: nstr,
    uuid: nstr,
    pttype: nstr,
    pkname: nstr,
    mountpoints: z.array(z.string().nullable()).nullish(),
    mountpoint: nstr,
    children: z.array(rawDevice).optional(),
  }),
);
const rawOutput = z.object({ blockdevices: z.array(rawDevice) });

function normalise(d: RawDevice): LsblkDevice {
  if (typeof d.path !== 'string' || d.path === '') {
    throw new ParseError(PARSER, `device ${d.name}: no "path" (run lsblk with the PATH column)`);
  }
  let size: number | null = null;
  if (typeof d.size === 'number') size = d.size;
  else if (typeof d.size === 'string') {
    // only plain digits: "64M" means lsblk ran without -b and we must not guess the unit
    if (!/^\d+$/.test(d.size))
      throw new ParseError(PARSER, `device ${d.name}: size "${d.size}" is not in bytes (-b missing)`);
    size = Number(d.size);
  }
  const ro = typeof d.ro === 'boolean' ? d.ro : d.ro === '1' ? true : d.ro === '0' ? false : null;
  const mountpoints = (d.mountpoints ?? (d.mountpoint !== undefined ? [d.mountpoint] : [])).filter(
    (m): m is string => typeof m === 'string',
  );
  return {
    name: d.name,
    kname: d.kname ?? null,
    path: d.path,
    majMin: d['maj:min'] ?? null,
    type: d.type,
    size,
    ro,
    fstype: d.fstype ?? null,
    label: d.label ?? null,
    uuid: d.uuid ?? null,
    pttype: d.pttype ?? null,
    pkname: d.pkname ?? null,
    mountpoints,
    children: (d.children ?? []).map(normalise),
  };
}

/** Parse lsblk JSON into the device tree (children kept nested). */
export function parseLsblk(stdout: string): LsblkDevice[] {
  if (stdout.trim() === '') throw new ParseError(PARSER, 'empty output');
  return parseJsonOutput(PARSER, stdout, rawOutput).blockdevices.map(normalise);
}

/** Every node of the tree, parents before their children. */
export function flattenLsblk(devices: readonly LsblkDevice[]): LsblkDevice[] {
  const out: LsblkDevice[] = [];
  const walk = (d: LsblkDevice) => {
    out.push(d);
    d.children.forEach(walk);
  };
  devices.forEach(walk);
  return out;
}
