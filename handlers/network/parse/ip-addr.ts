/**
 * `ip -j addr show [dev X]` (iproute2 JSON) → IpAddrRecord[].
 *
 * Also accepts `ip -4 -j addr show` / `-6`, which omit link_type/address/broadcast. Lifetimes
 * are numbers with 4294967295 meaning forever; address flags (dynamic, tentative, nodad,
 * noprefixroute, ...) are printed only when true.
 */
import * as z from 'zod';
import { parseJsonArrayOutput, recordError } from '../../tools/json-output';

/** iproute2 prints lifetimes as numbers; 4294967295 (INFINITY_LIFE_TIME) means forever. */
export const lifetime = z.union([z.number().int().nonnegative(), z.literal('forever')]);

export const ipAddress = z.object({
  family: z.enum(['inet', 'inet6']),
  local: z.string(),
  prefixlen: z.number().int(),
  broadcast: z.string().nullable(),
  scope: z.string(),
  /** a lease (DHCP, SLAAC, or any address added with a finite lifetime) */
  dynamic: z.boolean(),
  /** IPv4 only; may differ from the interface name (`eth0:mgmt`) */
  label: z.string().nullable(),
  valid_life_time: lifetime,
  preferred_life_time: lifetime,
  /** other address flags iproute2 printed as true (tentative, nodad, noprefixroute, ...) */
  flags: z.array(z.string()),
});
export type IpAddress = z.infer<typeof ipAddress>;

export const ipAddrRecord = z.object({
  ifindex: z.number().int(),
  ifname: z.string(),
  operstate: z.string().nullable(),
  addresses: z.array(ipAddress),
});
export type IpAddrRecord = z.infer<typeof ipAddrRecord>;

const PARSER = 'ip-addr';

/** INFINITY_LIFE_TIME in the kernel and iproute2 */
export const FOREVER = 4294967295;

const rawAddr = z.looseObject({
  family: z.string(),
  local: z.string(),
  prefixlen: z.number().int(),
  broadcast: z.string().optional(),
  scope: z.string(),
  label: z.string().optional(),
  valid_life_time: z.number().int().nonnegative().optional(),
  preferred_life_time: z.number().int().nonnegative().optional(),
});

const rawIface = z.looseObject({
  ifindex: z.number().int(),
  ifname: z.string().min(1),
  operstate: z.string().optional(),
  addr_info: z.array(z.unknown()),
});

/** keys that are data, not boolean flags */
const NOT_FLAGS = new Set([
  'family',
  'local',
  'address',
  'prefixlen',
  'broadcast',
  'scope',
  'label',
  'valid_life_time',
  'preferred_life_time',
  'dynamic',
  'anycast',
  'metric',
]);

function life(n: number | undefined): IpAddress['valid_life_time'] {
  // absent only on very old iproute2; the kernel reports permanent addresses as forever
  return n === undefined || n === FOREVER ? 'forever' : n;
}

export function parseIpAddr(stdout: string): IpAddrRecord[] {
  const doc = parseJsonArrayOutput(PARSER, stdout);
  return doc.map((raw, i) => {
    const r = rawIface.safeParse(raw);
    if (!r.success) throw recordError(PARSER, i, raw, r.error);
    const addresses: IpAddress[] = [];
    r.data.addr_info.forEach((rawA, j) => {
      const a = rawAddr.safeParse(rawA);
      if (!a.success) throw recordError(PARSER, i, raw, a.error, `addr_info.${j}`);
      const d = a.data;
      // other families (mpls, ...) are not addresses the product shows
      if (d.family !== 'inet' && d.family !== 'inet6') return;
      const flags = Object.entries(d)
        .filter(([k, v]) => v === true && !NOT_FLAGS.has(k))
        .map(([k]) => k);
      addresses.push({
        family: d.family,
        local: d.local,
        prefixlen: d.prefixlen,
        broadcast: d.broadcast ?? null,
        scope: d.scope,
        dynamic: (d as Record<string, unknown>).dynamic === true,
        label: d.label ?? null,
        valid_life_time: life(d.valid_life_time),
        preferred_life_time: life(d.preferred_life_time),
        flags,
      });
    });
    return { ifindex: r.data.ifindex, ifname: r.data.ifname, operstate: r.data.operstate ?? null, addresses };
  });
}
