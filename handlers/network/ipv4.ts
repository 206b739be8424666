/**
 * IPv4 request inputs: addresses (plain or CIDR), netmasks (dotted or prefix length), MTU.
 * Pure; each zod type turns what a client may send into one normalized value, so handlers
 * never see a string where a number belongs.
 */
import * as z from 'zod';
import { ipv4 } from '../core/schemas';

export function ipToInt(ip: string): number {
  return ip.split('.').reduce((n, o) => n * 256 + Number(o), 0);
}

export function intToIp(n: number): string {
  return [24, 16, 8, 0].map((s) => (n >>> s) & 255).join('.');
}

export function netmaskFromPrefix(prefix: number): string {
  return intToIp(prefix === 0 ? 0 : (0xffffffff << (32 - prefix)) >>> 0);
}

/** Prefix length of a dotted netmask, or null when its one-bits are not contiguous. */
export function prefixFromNetmask(mask: string): number | null {
  const n = ipToInt(mask);
  for (let p = 0; p <= 32; p++) if (ipToInt(netmaskFromPrefix(p)) === n) return p;
  return null;
}

const prefixRange = (p: number) => Number.isInteger(p) && p >= 1 && p <= 32;

/** `255.255.255.0`, `24`, `/24` or the number 24 → 24 (1-32). */
export const netmaskInput = z.union([z.number(), z.string()]).transform((v, ctx) => {
  const s = typeof v === 'number' ? String(v) : v.trim();
  const m = /^\/?(\d{1,2})$/.exec(s);
  if (m && prefixRange(Number(m[1]))) return Number(m[1]);
  if (ipv4.safeParse(s).success) {
    const p = prefixFromNetmask(s);
    if (p !== null && prefixRange(p)) return p;
  }
  ctx.addIssue({
    code: 'custom',
    message: 'must be a dotted netmask with contiguous bits (255.255.255.0) or a prefix length 1-32 (24 or /24)',
  });
  return z.NEVER;
});

/** `192.0.2.10` or `192.0.2.10/24`. */
export const addressInput = z.string().transform((v, ctx) => {
  const [ip = '', len, ...rest] = v.trim().split('/');
  if (rest.length === 0 && ipv4.safeParse(ip).success) {
    if (len === undefined) return { ip, prefix: undefined as number | undefined };
    if (/^\d{1,2}$/.test(len) && prefixRange(Number(len))) return { ip, prefix: Number(len) as number | undefined };
  }
  ctx.addIssue({
    code: 'custom',
    message: 'must be an IPv4 address, optionally with a prefix length (192.0.2.10 or 192.0.2.10/24)',
  });
  return z.NEVER;
});

export const MTU_MIN = 68;
export const MTU_MAX = 9216;

/** 9000 or "9000": the spec's usage example sends both. */
export const mtuInput = z
  .union([z.number(), z.string().regex(/^\s*\d+\s*$/, 'must be a number')])
  .transform(Number)
  .pipe(
    z
      .number()
      .int('must be a whole number')
      .min(MTU_MIN, `must be at least ${MTU_MIN}`)
      .max(MTU_MAX, `must be at most ${MTU_MAX}`),
  );

/**
 * An address that cannot be a host's own: the network or broadcast address of its subnet
 * (only meaningful for prefixes up to /30; /31 and /32 have no such addresses).
 */
export function isNetworkOrBroadcast(ip: string, prefix: number): boolean {
  if (prefix > 30) return false;
  const host = ipToInt(ip) & (~ipToInt(netmaskFromPrefix(prefix)) >>> 0);
  const all = ~ipToInt(netmaskFromPrefix(prefix)) >>> 0;
  return host === 0 || host === all;
}

/** The local address of a connection as the host reports it (`::ffff:10.0.0.5`, `fe80::1%eth0`). */
export function normalizeAddress(address: string | undefined): string | null {
  if (!address) return null;
  let a = address.trim().toLowerCase();
  const zone = a.indexOf('%');
  if (zone >= 0) a = a.slice(0, zone);
  if (a.startsWith('::ffff:') && ipv4.safeParse(a.slice(7)).success) a = a.slice(7);
  return a === '' ? null : a;
}
