/**
 * Strict input patterns of the dfs area. A name can never be a path, an option or a newline:
 * every pattern starts with a letter or digit and allows no `/`, whitespace, NUL or `..`.
 */
import * as z from 'zod';

/** Lustre fsname: 1-8 of letters, digits, `_` (mkfs.lustre refuses longer; `-` would break target names). */
export const FSNAME_RE = /^[A-Za-z0-9_]{1,8}$/;
export const fsName = z.string().regex(FSNAME_RE, 'must be 1-8 letters, digits or _ (a Lustre filesystem name)');

/**
 * ZFS pool name: starts with a letter, then letters, digits, `_`, `-`, `.`, `:`; not one of the
 * names zpool reserves (mirror, raidz, draid, spare, log, c[0-9]...).
 */
export const POOL_RE = /^[A-Za-z][A-Za-z0-9_.:-]{0,63}$/;
const RESERVED_POOL = /^(mirror|raidz|draid|spare|log|cache|special|dedup)|^c[0-9]/;
export const poolName = z
  .string()
  .regex(POOL_RE, 'must start with a letter and hold 1-64 letters, digits, _ - . : (a ZFS pool name)')
  .refine(
    (s) => !RESERVED_POOL.test(s),
    'is a name zpool reserves (mirror, raidz, draid, spare, log, cache, special, dedup, c<digit>…)',
  )
  .refine((s) => !s.includes('..'), 'must not contain ..');

/** One ZFS dataset component (below the pool): letters, digits, `_ - . :`, no leading dot or dash. */
export const DATASET_COMPONENT_RE = /^[A-Za-z0-9_][A-Za-z0-9_.:-]{0,63}$/;
export const datasetComponent = z
  .string()
  .regex(DATASET_COMPONENT_RE, 'must be 1-64 letters, digits, _ - . : and not start with . or -')
  .refine((s) => !s.includes('..'), 'must not contain ..');

/** LNet network name: an LND and an optional number (`tcp`, `tcp1`, `o2ib`, `o2ib3`); `lo` is not configurable. */
export const LNET_NAME_RE = /^(tcp|o2ib|gni|kfi|ptl|ptl4|mxlnd|ra|elan|efa|bxi3f)(\d{1,4})?$/;
export const lnetName = z
  .string()
  .regex(
    LNET_NAME_RE,
    'must be an LNet network: an LND name (tcp, o2ib, gni, kfi, efa…) and an optional number, e.g. tcp1',
  );

/** A NID address part: dotted IPv4 (each octet 0-255), a bare number (`0@lo`, `6@gni`). */
const IPV4 = /^(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}$/;

/** `tcp10` → { lnd: 'tcp', num: 10 }; `tcp` and `tcp0` are the same network (num 0). */
export function lnetNet(s: string): { lnd: string; num: number } | null {
  const m = LNET_NAME_RE.exec(s);
  return m ? { lnd: m[1], num: m[2] === undefined ? 0 : Number(m[2]) } : null;
}
/** Whether two LNet network names are the same network (`tcp` = `tcp0`, `tcp1` ≠ `tcp10`). */
export function sameLnet(a: string, b: string): boolean {
  if (a === 'lo' || b === 'lo') return a === b;
  const x = lnetNet(a);
  const y = lnetNet(b);
  return x !== null && y !== null && x.lnd === y.lnd && x.num === y.num;
}

/**
 * A NID as Lustre prints it: `10.0.0.1@tcp`, `192.168.1.2@o2ib1`, `0@lo`, `5@gni`. The parsers
 * read tool output with this; requests take host names too (isNidInput).
 */
export function isNid(s: string): boolean {
  const at = s.indexOf('@');
  if (at <= 0 || at !== s.lastIndexOf('@')) return false;
  const addr = s.slice(0, at);
  const net = s.slice(at + 1);
  if (net === 'lo') return addr === '0';
  if (!LNET_NAME_RE.test(net)) return false;
  if (IPV4.test(addr)) return true;
  return /^(0|[1-9]\d{0,9})$/.test(addr) && /^(gni|kfi|ptl|ptl4|ra|elan|bxi3f)/.test(net);
}

/**
 * A host name in a NID (`io1@tcp0`): lctl, mount.lustre and mkfs.lustre resolve it on the IP
 * networks (socklnd `tcp`, o2iblnd `o2ib`), and only when it starts with a letter (libcfs reads
 * anything else as an address). DNS labels (letters, digits, inner `-`, each 1-63) joined by
 * `.`, at most 253 characters: no shell, option or path character can pass.
 */
export const HOST_NAME_MAX = 253;
const HOST_NAME_RE = /^[A-Za-z](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$/;
export function isHostNid(s: string): boolean {
  const at = s.indexOf('@');
  if (at <= 0 || at !== s.lastIndexOf('@')) return false;
  const host = s.slice(0, at);
  const net = lnetNet(s.slice(at + 1));
  return (
    net !== null && (net.lnd === 'tcp' || net.lnd === 'o2ib') && host.length <= HOST_NAME_MAX && HOST_NAME_RE.test(host)
  );
}

/** What a request may name a node by: a NID, or a host name on an IP network (`io1@tcp0`). */
export const isNidInput = (s: string): boolean => isNid(s) || isHostNid(s);

/** `<host name>@<net>` at its longest: the name, `@` and the longest network name (`bxi3f9999`). */
export const NID_MAX = HOST_NAME_MAX + 1 + 9;
export const NID_MESSAGE =
  'must be a NID: <IPv4>@<net> (10.0.0.1@tcp, 192.168.1.2@o2ib1), 0@lo, or <host name>@tcp|o2ib (io1@tcp0)';
export const nid = z.string().max(NID_MAX).refine(isNidInput, NID_MESSAGE);

/**
 * The MGS of a mount or a target: one NID, `,` between NIDs of one node, `:` between failover
 * nodes (`10.0.0.1@tcp:10.0.0.2@tcp`). At most 8 NIDs.
 */
export function isMgsSpec(s: string): boolean {
  const nids = s.split(/[:,]/);
  return nids.length >= 1 && nids.length <= 8 && nids.every(isNidInput);
}
export const mgsNids = z
  .string()
  .max(8 * (NID_MAX + 1))
  .refine(
    isMgsSpec,
    'must be the MGS NID(s): 10.0.0.1@tcp or mgs1@tcp, or failover nodes separated by : (10.0.0.1@tcp:10.0.0.2@tcp)',
  );

/** A target index as the spec sends it: a decimal string 0-65535 (`"0"`, `"12"`). */
export const targetIndex = z
  .string()
  .regex(/^(0|[1-9]\d{0,4})$/, 'must be a decimal index 0-65535 without leading zeros, as a string')
  .refine((s) => Number(s) <= 65535, 'must be at most 65535');

/** Lustre device names as lctl dl prints them (`demofs-MDT0000`, `MGS`, `demofs-OST0001-osc-MDT0000`). */
export const DEVICE_RE = /^[A-Za-z0-9_][A-Za-z0-9_.@:-]{0,127}$/;
export const deviceName = z
  .string()
  .regex(DEVICE_RE, 'must be a Lustre device name (letters, digits, _ - . @ :), e.g. demofs-MDT0000')
  .refine((s) => !s.includes('..'), 'must not contain ..');

/** `demofs-OST000a` → { fs: 'demofs', kind: 'OST', index: 10 }. */
export const TARGET_RE = /^([A-Za-z0-9_]{1,8})-(MDT|OST)([0-9a-fA-F]{4})$/;
export function targetLabel(fs: string, kind: 'MDT' | 'OST', index: number): string {
  return `${fs}-${kind}${index.toString(16).padStart(4, '0')}`;
}
