/**
 * Bond parameters of POST /network/interface/bind: what a client may send (numbers or names,
 * numbers as strings), the spec's defaults, and the two forms we write them in:
 *  - the ifupdown stanza, in the appliance's own spelling that the spec's `config` object shows
 *    (`bond_mode 4`, `bond_lacp_rate 1`, `bond_miimon 100`, `bond_xmit_hash_policy layer3+4`,
 *    `bond-downdelay 200`, `bond-updelay 200`); ifupdown exports `bond_mode` and `bond-mode`
 *    alike as IF_BOND_MODE and ifenslave writes the value to sysfs, which takes numbers too;
 *  - `ip link add ... type bond` keywords, by name (iproute2 prints names back).
 * Tables are the kernel's (include/uapi/linux/if_bonding.h, bond_options.c).
 */
import * as z from 'zod';

export const BOND_MODES = [
  'balance-rr',
  'active-backup',
  'balance-xor',
  'broadcast',
  '802.3ad',
  'balance-tlb',
  'balance-alb',
] as const;
export const XMIT_HASH_POLICIES = ['layer2', 'layer3+4', 'layer2+3', 'encap2+3', 'encap3+4', 'vlan+srcmac'] as const;
export const LACP_RATES = ['slow', 'fast'] as const;
export const MODE_8023AD = 4;

/** A value given as its index (4, "4") or its name ("802.3ad") → the index. */
function tableIndex(table: readonly string[], what: string) {
  return z.union([z.number(), z.string()]).transform((v, ctx) => {
    const s = String(v).trim();
    const byNumber = /^\d+$/.test(s) ? Number(s) : -1;
    const i = byNumber >= 0 ? byNumber : table.indexOf(s);
    if (i >= 0 && i < table.length) return i;
    ctx.addIssue({ code: 'custom', message: `${what} must be 0-${table.length - 1} or one of ${table.join(', ')}` });
    return z.NEVER;
  });
}

/** Milliseconds as a number or a numeric string. */
const millis = z
  .union([z.number(), z.string().regex(/^\s*\d+\s*$/, 'must be a number')])
  .transform(Number)
  .pipe(z.number().int('must be a whole number').min(0).max(600_000));

/** The bond fields of the bind body, each with the spec's default. */
export const bondFields = {
  bond_mode: tableIndex(BOND_MODES, 'bond_mode').default(MODE_8023AD),
  bond_lacp_rate: tableIndex(LACP_RATES, 'bond_lacp_rate').default(1),
  bond_miimon: millis.default(100),
  bond_updelay: millis.default(200),
  bond_downdelay: millis.default(200),
  bond_xmit_hash_policy: tableIndex(XMIT_HASH_POLICIES, 'bond_xmit_hash_policy').default(1),
};
export type BondFieldsOutput = z.output<ReturnType<typeof z.object<typeof bondFields>>>;

/** The kernel silently rounds the delays down to a multiple of miimon; say so instead. */
export function checkBondDelays(b: BondFieldsOutput, ctx: z.RefinementCtx): void {
  for (const k of ['bond_updelay', 'bond_downdelay'] as const) {
    if (b.bond_miimon !== 0 && b[k] % b.bond_miimon !== 0)
      ctx.addIssue({ code: 'custom', path: [k], message: 'must be a multiple of bond_miimon' });
  }
}

export interface BondParams {
  mode: number;
  lacpRate: number;
  miimon: number;
  updelay: number;
  downdelay: number;
  xmitHashPolicy: number;
}

export function bondParams(b: BondFieldsOutput): BondParams {
  return {
    mode: b.bond_mode,
    lacpRate: b.bond_lacp_rate,
    miimon: b.bond_miimon,
    updelay: b.bond_updelay,
    downdelay: b.bond_downdelay,
    xmitHashPolicy: b.bond_xmit_hash_policy,
  };
}

/**
 * `ip link add` keywords. lacp_rate only in 802.3ad mode: the kernel refuses it in any other
 * (BOND_OPT_LACP_RATE unsuppmodes), and ifenslave would fail writing it to sysfs the same way.
 */
export function bondIpArgs(p: BondParams): string[] {
  const args = [
    'mode',
    BOND_MODES[p.mode] ?? '',
    'miimon',
    String(p.miimon),
    'updelay',
    String(p.updelay),
    'downdelay',
    String(p.downdelay),
  ];
  if (p.mode === MODE_8023AD) args.push('lacp_rate', LACP_RATES[p.lacpRate] ?? '');
  args.push('xmit_hash_policy', XMIT_HASH_POLICIES[p.xmitHashPolicy] ?? '');
  return args;
}

/** Stanza options after `slaves`, in the order and spelling of the spec's config object. */
export function bondStanzaOptions(p: BondParams): { name: string; value: string }[] {
  const out = [{ name: 'bond_mode', value: String(p.mode) }];
  if (p.mode === MODE_8023AD) out.push({ name: 'bond_lacp_rate', value: String(p.lacpRate) });
  out.push(
    { name: 'bond_miimon', value: String(p.miimon) },
    { name: 'bond_xmit_hash_policy', value: XMIT_HASH_POLICIES[p.xmitHashPolicy] ?? '' },
    { name: 'bond-downdelay', value: String(p.downdelay) },
    { name: 'bond-updelay', value: String(p.updelay) },
  );
  return out;
}

/** The names ifupdown treats as one option (it maps `-` to `_` for IF_<NAME>). */
export function sameOption(a: string, b: string): boolean {
  return a.replace(/-/g, '_') === b.replace(/-/g, '_');
}

/** Options naming a bond's ports on its own stanza (ifenslave reads IF_BOND_SLAVES, and the
 *  appliance's older `slaves`). */
export const SLAVES_OPTIONS = ['slaves', 'bond-slaves', 'bond_slaves'];
export const MASTER_OPTIONS = ['bond-master', 'bond_master'];

/** Split a slaves list: comma separated in requests, space separated in the stanza. */
export function splitNames(list: string): string[] {
  return list
    .split(/[\s,]+/)
    .map((s) => s.trim())
    .filter((s) => s !== '' && s !== 'none');
}

/** The first `bondN` that is neither a device nor a configured name. */
export function nextBondName(taken: (name: string) => boolean): string {
  for (let n = 0; ; n++) if (!taken(`bond${n}`)) return `bond${n}`;
}
