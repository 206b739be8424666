/**
 * POST /fs/make_filesystem `options` (spec: "options (array, optional)"): a whitelist per
 * filesystem type, so the array can only tune the new filesystem and never point the tool at
 * other files or devices, or switch off its own safety checks.
 *
 * FORMAT (decided here, documented for clients): the array is the argv pieces, one token per
 * element, exactly as they would appear on the command line. An option that takes a value is
 * followed by its value as the next element:
 *
 *     ["-L", "data", "-m", "1", "-O", "^has_journal"]        (ext4)
 *     ["-L", "scratch", "-m", "crc=1,reflink=1"]             (xfs)
 *     ["-n", "USBKEY", "-F", "32"]                           (vfat)
 *
 * Not accepted: joined forms (`-Ldata`, `-L data` in one element, `--label=data`), bundled
 * flags (`-qv`), an option given twice, values starting with `-`, more than MAX_OPTIONS
 * elements. Joined/bundled forms are refused rather than split because splitting is a guess
 * about the tool's getopt string, and a wrong guess shifts the device argument.
 *
 * The validated pieces are returned unchanged; the route runs
 * `[/usr/sbin/mkfs.<type>, ...pieces, <device>]` (mke2fs, mkfs.xfs and mkfs.fat all take
 * the device after the options).
 *
 * Refused on purpose, for every type:
 *   force flags (`-F` for mke2fs, `-f` for xfs/btrfs, `-I` for fat): they override the tools'
 *     own "existing filesystem / partitions present / mounted" checks; make_filesystem already
 *     refuses such devices (device-free.ts), so forcing has no legitimate use here;
 *   options that read or write other files or devices: mke2fs `-d` `-l` `-z` `-J device=`
 *     `-E offset=`, xfs `-p` `-c` `-l logdev=` `-r rtdev=` `-d file,name=`, fat `-C` `-l`,
 *     btrfs `-r`;
 *   dry-run / superblock-only / bad-block scans (`-n`, `-N`, `-S`, `-c`): they do not create
 *     the filesystem the route reports, or take unbounded time.
 *
 * Types without a table (exfat, ntfs, f2fs, jfs, nilfs2, reiserfs, minix, bfs) accept only an
 * empty array. btrfs is not installed on the reference box: its table follows mkfs.btrfs(8)
 * of btrfs-progs 6.2 (Debian 12) and is not exercised by the system tests.
 */
import * as z from 'zod';

export const MAX_OPTIONS = 32;
export const MAX_OPTION_LENGTH = 256;

/** body schema for `options`; type-specific checking follows in checkMkfsOptions */
export const mkfsOptions = z.array(z.string().max(MAX_OPTION_LENGTH)).max(MAX_OPTIONS);

interface ValueSpec {
  /** what a valid value looks like, for the error message */
  describe: string;
  test: (v: string) => boolean;
  /** a valid value, used by the system test that runs every option against the real tool */
  example: string;
}

export interface OptionSpec {
  flag: string;
  /** absent = a flag without a value */
  value?: ValueSpec;
  /** why it is allowed / what it does */
  note: string;
}

const re = (pattern: RegExp, describe: string, example: string): ValueSpec => ({
  describe,
  test: (v) => pattern.test(v),
  example,
});

const intRange = (min: number, max: number, example: string): ValueSpec => ({
  describe: `an integer from ${min} to ${max}`,
  test: (v) => /^(0|[1-9]\d{0,15})$/.test(v) && Number(v) >= min && Number(v) <= max,
  example,
});

const oneOf = (values: readonly string[], example = values[0]): ValueSpec => ({
  describe: `one of ${values.join(', ')}`,
  test: (v) => values.includes(v),
  example,
});

const powersOfTwo = (min: number, max: number): string[] => {
  const out: string[] = [];
  for (let v = min; v <= max; v *= 2) out.push(String(v));
  return out;
};

/** A comma-separated list whose items each match one of `items` (whole-item regexes). */
const itemList = (items: readonly RegExp[], describe: string, example: string): ValueSpec => ({
  describe,
  test: (v) => v.length > 0 && v.split(',').every((item) => items.some((p) => p.test(item))),
  example,
});

/** Labels: printable ASCII letters/digits plus space _ . + -, not starting with space or `-`. */
const label = (max: number, example: string): ValueSpec =>
  re(
    new RegExp(`^[A-Za-z0-9_.+][A-Za-z0-9 _.+-]{0,${max - 1}}$`),
    `a label of 1-${max} characters (letters, digits, space, _ . + -; not starting with space or -)`,
    example,
  );

const UUID = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;
const N = '(?:0|[1-9]\\d{0,15})';
const SIZE = `${N}[kmgtKMGT]?`;

// ---- ext2 / ext3 / ext4 (mke2fs 1.47.0) --------------------------------------------------------
const EXT: OptionSpec[] = [
  { flag: '-L', value: label(16, 'data'), note: 'volume label (16 bytes max)' },
  { flag: '-b', value: oneOf(powersOfTwo(1024, 65536), '4096'), note: 'block size in bytes' },
  {
    flag: '-m',
    value: re(/^(?:50|[1-4]?\d(?:\.\d{1,2})?)$/, 'a percentage from 0 to 50', '1'),
    note: 'blocks reserved for root, percent',
  },
  { flag: '-i', value: intRange(1024, 67108864, '16384'), note: 'bytes per inode' },
  { flag: '-I', value: oneOf(['128', '256', '512', '1024'], '256'), note: 'inode size' },
  { flag: '-N', value: intRange(1, 4294967295, '4096'), note: 'number of inodes' },
  {
    flag: '-O',
    value: itemList(
      [/^\^?[a-z][a-z0-9_]*$/],
      'a comma list of features, each optionally prefixed with ^',
      '^has_journal',
    ),
    note: 'feature list; mke2fs itself rejects unknown names',
  },
  {
    flag: '-E',
    value: itemList(
      [
        new RegExp(`^stride=${N}$`),
        new RegExp(`^stripe[-_]width=${N}$`),
        new RegExp(`^resize=${N}$`),
        /^lazy_itable_init(?:=[01])?$/,
        /^lazy_journal_init(?:=[01])?$/,
        /^packed_meta_blocks(?:=[01])?$/,
        /^assume_storage_prezeroed(?:=[01])?$/,
        /^num_backup_sb=[012]$/,
        /^(?:no)?discard$/,
        /^root_owner(?:=\d{1,10}:\d{1,10})?$/,
        /^encoding=utf8(?:-12\.1)?$/,
        /^encoding_flags=strict$/,
        /^quotatype=(?:usrquota|grpquota|prjquota)(?::(?:usrquota|grpquota|prjquota)){0,2}$/,
      ],
      'a comma list of stride=, stripe_width=, resize=, lazy_itable_init, lazy_journal_init, packed_meta_blocks, assume_storage_prezeroed, num_backup_sb=, discard, nodiscard, root_owner=uid:gid, encoding=utf8, encoding_flags=strict, quotatype=',
      'lazy_itable_init=0,nodiscard',
    ),
    note: 'extended options, whitelisted (no offset=, no test_fs)',
  },
  {
    flag: '-T',
    value: oneOf(['default', 'floppy', 'small', 'big', 'huge', 'news', 'largefile', 'largefile4'], 'small'),
    note: 'usage type from /etc/mke2fs.conf',
  },
  {
    flag: '-U',
    value: {
      describe: 'a UUID, or clear, random, time',
      test: (v) => UUID.test(v) || ['clear', 'random', 'time'].includes(v),
      example: 'random',
    },
    note: 'filesystem UUID',
  },
  { flag: '-j', note: 'add a journal (ext3 style)' },
  {
    flag: '-J',
    value: re(new RegExp(`^size=${N}$`), 'size=<MiB>', 'size=4'),
    note: 'journal size only (no external journal device)',
  },
  { flag: '-e', value: oneOf(['continue', 'remount-ro', 'panic'], 'remount-ro'), note: 'behaviour on errors' },
  { flag: '-G', value: oneOf(powersOfTwo(1, 1 << 20), '16'), note: 'flex_bg group size' },
  { flag: '-g', value: intRange(256, 65528, '8192'), note: 'blocks per group' },
  { flag: '-r', value: oneOf(['0', '1'], '1'), note: 'filesystem revision' },
  { flag: '-q', note: 'quiet' },
  { flag: '-v', note: 'verbose' },
  { flag: '-D', note: 'direct I/O' },
];

// ---- xfs (xfsprogs 6.1.0) ----------------------------------------------------------------------
const XFS: OptionSpec[] = [
  { flag: '-L', value: label(12, 'scratch'), note: 'label (12 characters max)' },
  {
    flag: '-b',
    value: re(
      new RegExp(`^size=(?:${powersOfTwo(512, 65536).join('|')})$`),
      'size=<512..65536, a power of two>',
      'size=4096',
    ),
    note: 'block size',
  },
  {
    flag: '-m',
    value: itemList(
      [/^(?:crc|finobt|rmapbt|reflink|inobtcount|bigtime)=[01]$/, new RegExp(`^uuid=${UUID.source.slice(1, -1)}$`)],
      'a comma list of crc=, finobt=, rmapbt=, reflink=, inobtcount=, bigtime= (0|1), uuid=',
      'crc=1,reflink=1',
    ),
    note: 'metadata options',
  },
  {
    flag: '-i',
    value: itemList(
      [/^size=(?:256|512|1024|2048)$/, /^maxpct=(?:100|[1-9]?\d)$/, /^(?:align|sparse|nrext64)=[01]$/],
      'a comma list of size=, maxpct=, align=, sparse=, nrext64=',
      'size=512',
    ),
    note: 'inode options',
  },
  {
    flag: '-n',
    value: itemList(
      [new RegExp(`^size=(?:${powersOfTwo(512, 65536).join('|')})$`), /^ftype=[01]$/, /^version=(?:2|ci)$/],
      'a comma list of size=, ftype=, version=2|ci',
      'ftype=1',
    ),
    note: 'directory (naming) options',
  },
  { flag: '-s', value: oneOf(['size=512', 'size=4096'], 'size=4096'), note: 'sector size' },
  {
    flag: '-d',
    value: itemList(
      [new RegExp(`^(?:agcount|sunit|swidth|sw)=${N}$`), new RegExp(`^(?:agsize|su|size)=${SIZE}$`)],
      'a comma list of agcount=, agsize=, su=, sw=, sunit=, swidth=, size= (no file, no name=)',
      'agcount=4',
    ),
    note: 'data section geometry',
  },
  {
    flag: '-l',
    value: itemList(
      [new RegExp(`^(?:size|su)=${SIZE}$`), /^version=[12]$/, /^lazy-count=[01]$/, new RegExp(`^sunit=${N}$`)],
      'a comma list of size=, su=, sunit=, version=, lazy-count= (no logdev=)',
      'size=64m',
    ),
    note: 'internal log only',
  },
  { flag: '-K', note: 'do not discard blocks' },
  { flag: '-q', note: 'quiet' },
];

// ---- vfat / msdos (dosfstools 4.2 mkfs.fat) ----------------------------------------------------
const FAT: OptionSpec[] = [
  {
    flag: '-n',
    value: re(
      /^[A-Za-z0-9_][A-Za-z0-9 _-]{0,10}$/,
      'a volume name of 1-11 characters (letters, digits, space, _ -)',
      'USBKEY',
    ),
    note: 'volume name',
  },
  { flag: '-F', value: oneOf(['12', '16', '32'], '32'), note: 'FAT size' },
  { flag: '-S', value: oneOf(powersOfTwo(512, 32768), '512'), note: 'logical sector size' },
  { flag: '-s', value: oneOf(powersOfTwo(1, 128), '8'), note: 'sectors per cluster' },
  { flag: '-i', value: re(/^[0-9a-fA-F]{8}$/, '8 hex digits', '1234abcd'), note: 'volume id' },
  { flag: '-f', value: oneOf(['1', '2'], '2'), note: 'number of FATs' },
  { flag: '-r', value: intRange(16, 65536, '512'), note: 'root directory entries (FAT12/16)' },
  { flag: '-R', value: intRange(1, 65535, '32'), note: 'reserved sectors' },
  { flag: '-a', note: 'no alignment of data structures' },
  { flag: '-v', note: 'verbose' },
];

// ---- btrfs (btrfs-progs 6.2, from the man page; not installed on the reference box) -------------
const BTRFS_PROFILES = ['single', 'dup', 'raid0', 'raid1', 'raid1c3', 'raid1c4', 'raid10', 'raid5', 'raid6'];
const BTRFS: OptionSpec[] = [
  { flag: '-L', value: label(255, 'data'), note: 'label' },
  { flag: '-d', value: oneOf(BTRFS_PROFILES, 'single'), note: 'data profile' },
  { flag: '-m', value: oneOf(BTRFS_PROFILES, 'dup'), note: 'metadata profile' },
  { flag: '-n', value: oneOf(powersOfTwo(4096, 65536), '16384'), note: 'node size' },
  { flag: '-s', value: oneOf(['4096', '65536'], '4096'), note: 'sector size' },
  {
    flag: '-O',
    value: itemList([/^\^?[a-z][a-z0-9_-]*$/], 'a comma list of features, each optionally prefixed with ^', 'no-holes'),
    note: 'features',
  },
  { flag: '-K', note: 'do not discard' },
  { flag: '-q', note: 'quiet' },
];

/** The whitelist, by filesystem type (the names of available-fs.ts). */
export const MKFS_OPTIONS: Readonly<Record<string, readonly OptionSpec[]>> = {
  ext2: EXT,
  ext3: EXT,
  ext4: EXT,
  xfs: XFS,
  vfat: FAT,
  msdos: FAT,
  btrfs: BTRFS,
};

export type MkfsOptionsCheck = { ok: true; argv: string[] } | { ok: false; message: string };

/** Validate the options array for `type`; the message names the offending option. */
export function checkMkfsOptions(type: string, options: readonly unknown[] | undefined): MkfsOptionsCheck {
  const fail = (message: string): MkfsOptionsCheck => ({ ok: false, message });
  const list = options ?? [];
  if (list.length > MAX_OPTIONS) return fail(`at most ${MAX_OPTIONS} option elements are accepted`);
  const specs = Object.prototype.hasOwnProperty.call(MKFS_OPTIONS, type) ? MKFS_OPTIONS[type] : undefined;
  if (!specs) {
    return list.length === 0
      ? { ok: true, argv: [] }
      : fail(`filesystem type ${JSON.stringify(type)} accepts no options`);
  }
  const argv: string[] = [];
  const seen = new Set<string>();
  for (let i = 0; i < list.length; i++) {
    const el = list[i];
    if (typeof el !== 'string') return fail(`options[${i}] must be a string`);
    const shown = JSON.stringify(el);
    const spec = specs.find((s) => s.flag === el);
    if (!spec) {
      // tell the two common mistakes apart from a simply unknown option
      const joined = specs.find((s) => s.value && el.startsWith(s.flag) && el.length > s.flag.length);
      if (joined) {
        return fail(
          `option ${shown}: give the option and its value as two elements, e.g. ["${joined.flag}", "${joined.value?.example}"]`,
        );
      }
      return fail(`option ${shown} is not allowed for ${type} (allowed: ${specs.map((s) => s.flag).join(' ')})`);
    }
    if (seen.has(spec.flag)) return fail(`option ${shown} is given twice`);
    seen.add(spec.flag);
    argv.push(el);
    if (spec.value) {
      const value = list[i + 1];
      if (typeof value !== 'string') return fail(`option ${shown} needs a value: ${spec.value.describe}`);
      if (value.startsWith('-') || !spec.value.test(value)) {
        return fail(`option ${shown}: value ${JSON.stringify(value)} is not valid: expected ${spec.value.describe}`);
      }
      argv.push(value);
      i++;
    }
  }
  return { ok: true, argv };
}
