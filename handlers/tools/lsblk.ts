/**
 * `lsblk -J` (util-linux 2.38.1, Debian 12), for every area that asks it about block devices: fs
 * runs `lsblk -J -b -o <LSBLK_COLUMNS> [-- <device>]` (the device and what is stacked on it), pod
 * `lsblk -J -d -o PATH,TYPE,FSTYPE,UUID,MOUNTPOINTS -- <device>` (one device). A column not asked
 * for is null; PATH, TYPE and MOUNTPOINTS are always needed.
 *
 * Column choice (all in 2.38's `lsblk --help`; HOLDERS does not exist there): holders and
 * partitions appear as `children` of the device in the default tree output, which is what
 * make_filesystem needs ("is anything stacked on this device?"). MOUNTPOINTS (plural, 2.37+)
 * lists every mountpoint and `[SWAP]` for active swap; the old singular MOUNTPOINT column is
 * accepted too, and output with neither is refused (a missing list is never read as "not
 * mounted"). With `-b` SIZE is a number of bytes; RO is a JSON boolean in 2.38 and "0"/"1" in
 * older releases.
 *
 * Caveat recorded on this box: FSTYPE/LABEL/UUID/PTTYPE come from the udev database, so
 * without udev (containers, this test VM) they stay null even right after mkfs. Signature
 * checks therefore rely on `wipefs -n -J` (handlers/fs/parse/wipefs.ts), and these columns only
 * add to it.
 */
import * as z from 'zod';
import { ParseError } from '../core/parse-error';
import { parseJsonOutput } from './json-output';

const PARSER = 'lsblk';

/** One node of `lsblk -J` output, normalised (columns not asked for are null). */
export const lsblkDevice = z.object({
  /** null when NAME was not asked for */
  name: z.string().nullable(),
  kname: z.string().nullable(),
  path: z.string(),
  majMin: z.string().nullable(),
  /** disk, part, loop, lvm, crypt, raid1, rom, ... */
  type: z.string(),
  /** bytes (lsblk -b) */
  size: z.number().int().nonnegative().nullable(),
  ro: z.boolean().nullable(),
  /** from the udev database: can be null on a box without udev even when a filesystem exists */
  fstype: z.string().nullable(),
  label: z.string().nullable(),
  uuid: z.string().nullable(),
  pttype: z.string().nullable(),
  pkname: z.string().nullable(),
  /** every mountpoint, `[SWAP]` for active swap; lsblk's `[null]` for "none" becomes [] */
  mountpoints: z.array(z.string()),
  /** partitions and holders (dm, md, ...) stacked on this device */
  get children() {
    return z.array(lsblkDevice);
  },
});
export type LsblkDevice = z.infer<typeof lsblkDevice>;

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

/** argv the fs routes run; `--` so a device argument can never be read as an option */
export function lsblkArgv(device?: string): string[] {
  const argv = ['/usr/bin/lsblk', '-J', '-b', '-o', LSBLK_COLUMNS.join(',')];
  return device === undefined ? argv : [...argv, '--', device];
}

interface RawDevice {
  name?: string | null;
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
    name: nstr,
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
  const named = d.name ?? d.path ?? '(unnamed)';
  if (typeof d.path !== 'string' || d.path === '') {
    throw new ParseError(PARSER, `device ${named}: no "path" (run lsblk with the PATH column)`);
  }
  let size: number | null = null;
  if (typeof d.size === 'number') size = d.size;
  else if (typeof d.size === 'string') {
    // only plain digits: "64M" means lsblk ran without -b and we must not guess the unit
    if (!/^\d+$/.test(d.size))
      throw new ParseError(PARSER, `device ${named}: size "${d.size}" is not in bytes (-b missing)`);
    size = Number(d.size);
  }
  const ro = typeof d.ro === 'boolean' ? d.ro : d.ro === '1' ? true : d.ro === '0' ? false : null;
  // asked for and missing (util-linux < 2.37 has no MOUNTPOINTS): not read as "not mounted"
  const listed = d.mountpoints ?? (d.mountpoint !== undefined ? [d.mountpoint] : undefined);
  if (!listed) throw new ParseError(PARSER, `device ${named}: no mountpoints list (run lsblk with MOUNTPOINTS)`);
  return {
    name: d.name ?? null,
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
    mountpoints: listed.filter((m): m is string => typeof m === 'string'),
    children: (d.children ?? []).map(normalise),
  };
}

/** Parse lsblk JSON into the device tree (children kept nested). */
export function parseLsblk(stdout: string): LsblkDevice[] {
  if (stdout.trim() === '') throw new ParseError(PARSER, 'empty output');
  return parseJsonOutput(PARSER, stdout, rawOutput).blockdevices.map(normalise);
}

/** The one device of `lsblk -d … -- <device>` (anything but exactly one is refused). */
export function parseLsblkOne(stdout: string): LsblkDevice {
  const devices = parseLsblk(stdout);
  if (devices.length !== 1) throw new ParseError(PARSER, 'expected one block device');
  return devices[0];
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
