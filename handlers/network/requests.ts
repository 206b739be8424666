/**
 * Request shapes of the network routes. Each body schema validates and normalizes in one go:
 * handlers get prefix lengths (never netmask strings), MTUs as numbers, name lists as arrays,
 * and pass-through stanza options already checked against ifupdown injection.
 */
import * as z from 'zod';
import { interfaceName, queryBoolean } from '../core/schemas';
import { addressInput, isNetworkOrBroadcast, mtuInput, netmaskInput } from './ipv4';
import { bondFields, checkBondDelays, SLAVES_OPTIONS, splitNames } from './bond';
import { ifupdownOptionName, ifupdownToken } from './render/ifupdown';
import { MAX_CONFIRM_S, MIN_CONFIRM_S } from './contract';

/** `true`/`false`, also as the strings a form might send. */
const flag = queryBoolean;
const force = flag.default(false);

/** '' and null mean "not given": UIs send empty form fields. */
function optional<T extends z.ZodType>(schema: T) {
  return z.preprocess((v) => (v === '' || v === null ? undefined : v), schema.optional());
}

/**
 * Seconds the change waits for POST /network/confirm before the host restores the checkpoint
 * taken before it (README "Changing the management interface safely"); a number or a numeric string.
 */
const confirmWithin = optional(
  z.preprocess(
    (v) => (typeof v === 'string' && /^\s*[0-9]+\s*$/.test(v) ? Number(v) : v),
    z.number().int().min(MIN_CONFIRM_S).max(MAX_CONFIRM_S),
  ),
).describe(
  `seconds (${MIN_CONFIRM_S}-${MAX_CONFIRM_S}) to confirm the change with POST /network/confirm before it is rolled back on its own`,
);

export const deviceParams = z.object({ device_name: interfaceName });

export interface Addressing {
  method: 'static' | 'dhcp';
  /** static only */
  ip?: string;
  prefix?: number;
  mtu?: number;
}

interface AddressingFields {
  isdhcp: boolean;
  address?: { ip: string; prefix?: number };
  netmask?: number;
  mtu?: number;
}

/**
 * address/netmask/mtu rules shared by configure and bind. With isdhcp the address fields are
 * ignored (clients send the old values along); static needs an address and a prefix, from the
 * CIDR address or the netmask, and the two must agree when both are given.
 */
function addressing(b: AddressingFields, ctx: z.RefinementCtx): Addressing {
  const mtu = b.mtu === undefined ? {} : { mtu: b.mtu };
  if (b.isdhcp) return { method: 'dhcp', ...mtu };
  if (!b.address) {
    ctx.addIssue({ code: 'custom', path: ['address'], message: 'required when isdhcp is false' });
    return { method: 'static' };
  }
  const { ip, prefix: cidrPrefix } = b.address;
  if (cidrPrefix !== undefined && b.netmask !== undefined && cidrPrefix !== b.netmask) {
    ctx.addIssue({
      code: 'custom',
      path: ['netmask'],
      message: `does not match the prefix length /${cidrPrefix} of address`,
    });
  }
  const prefix = cidrPrefix ?? b.netmask;
  if (prefix === undefined) {
    ctx.addIssue({ code: 'custom', path: ['netmask'], message: 'required when address has no prefix length' });
    return { method: 'static', ip };
  }
  if (isNetworkOrBroadcast(ip, prefix)) {
    ctx.addIssue({
      code: 'custom',
      path: ['address'],
      message: `is the network or broadcast address of ${ip}/${prefix}`,
    });
  }
  return { method: 'static', ip, prefix, ...mtu };
}

/** A pass-through stanza option: `bond*` / `slave*` name, value a safe token (or a name list). */
export interface StanzaOption {
  name: string;
  value: string | string[];
}

const KNOWN_CONFIGURE_KEYS = new Set(['device', 'isdhcp', 'address', 'netmask', 'mtu', 'force', 'confirmWithin']);

function passThrough(key: string, raw: unknown, ctx: z.RefinementCtx): StanzaOption | null {
  const issue = (message: string) => {
    ctx.addIssue({ code: 'custom', path: [key], message });
    return null;
  };
  if (!/^(bond|slave)/.test(key))
    return issue(
      'unknown parameter (configure takes device, isdhcp, address, netmask, mtu, force, confirmWithin and options starting with bond or slave)',
    );
  const name = ifupdownOptionName.safeParse(key);
  if (!name.success) {
    // the name's own issues, at the option's path (the pipeline formats them with issuesOf)
    for (const i of name.error.issues) ctx.addIssue({ code: 'custom', path: [key, ...i.path], message: i.message });
    return null;
  }
  if (typeof raw !== 'string' && typeof raw !== 'number') return issue('must be a string or a number');
  const text = String(raw).trim();
  if (SLAVES_OPTIONS.includes(key)) {
    // a port list: comma or space separated in, space separated in the stanza; `none` is ifenslave's empty list
    const names = splitNames(text);
    if (names.length === 0) return { name: key, value: 'none' };
    for (const n of names)
      if (!interfaceName.safeParse(n).success) return issue(`"${n}" is not a valid interface name`);
    return { name: key, value: names };
  }
  if (!ifupdownToken.safeParse(text).success)
    return issue('must be a single token of A-Z a-z 0-9 . _ : / + , = @ % - (no spaces, #, quotes or line breaks)');
  return { name: key, value: text };
}

export interface ConfigureBody {
  device: string;
  addressing: Addressing;
  options: StanzaOption[];
  force: boolean;
  confirmWithin?: number;
}

export const configureBody = z
  .object({
    device: interfaceName,
    isdhcp: flag,
    address: optional(addressInput),
    netmask: optional(netmaskInput),
    mtu: optional(mtuInput),
    force,
    confirmWithin,
  })
  .catchall(z.unknown())
  .transform((b, ctx): ConfigureBody => {
    const options: StanzaOption[] = [];
    for (const [k, v] of Object.entries(b)) {
      if (KNOWN_CONFIGURE_KEYS.has(k)) continue;
      const o = passThrough(k, v, ctx);
      if (o) options.push(o);
    }
    return {
      device: b.device,
      addressing: addressing(b, ctx),
      options,
      force: b.force,
      ...(b.confirmWithin === undefined ? {} : { confirmWithin: b.confirmWithin }),
    };
  });

export const updateBody = z.object({ state: z.enum(['up', 'down']), force, confirmWithin }).strict();

export const unconfigureBody = z.object({ force, confirmWithin }).strict();

/** `eth0,eth1` (spaces tolerated) → unique, valid names. */
const nameList = z.string().transform((s, ctx) => {
  const names = splitNames(s);
  if (names.length === 0)
    ctx.addIssue({ code: 'custom', message: 'must name at least one interface (comma separated)' });
  for (const n of names) {
    if (!interfaceName.safeParse(n).success)
      ctx.addIssue({ code: 'custom', message: `"${n}" is not a valid interface name` });
  }
  if (new Set(names).size !== names.length) ctx.addIssue({ code: 'custom', message: 'names an interface twice' });
  return names;
});

export const bindBody = z
  .object({
    isdhcp: flag,
    address: optional(addressInput),
    netmask: optional(netmaskInput),
    mtu: optional(mtuInput),
    slaves: nameList,
    ...bondFields,
    force,
    confirmWithin,
  })
  .strict()
  .transform((b, ctx) => {
    checkBondDelays(b, ctx);
    return { ...b, addressing: addressing(b, ctx) };
  });
export type BindBody = z.output<typeof bindBody>;

/** The spec names the bond `device`; its usage example sends `dev`. Either, not both differing. */
export const slavesBody = z
  .object({ device: interfaceName.optional(), dev: interfaceName.optional(), slaves: nameList, force, confirmWithin })
  .strict()
  .transform((b, ctx) => {
    const device = b.device ?? b.dev;
    if (device === undefined)
      ctx.addIssue({ code: 'custom', path: ['device'], message: 'required (the bond; `dev` is accepted too)' });
    else if (b.device !== undefined && b.dev !== undefined && b.device !== b.dev)
      ctx.addIssue({ code: 'custom', path: ['dev'], message: 'differs from device' });
    return {
      device: device ?? '',
      slaves: b.slaves,
      force: b.force,
      ...(b.confirmWithin === undefined ? {} : { confirmWithin: b.confirmWithin }),
    };
  });

/** POST /network/confirm: the id GET /network/pending shows (the change the client means to keep). */
export const confirmBody = z.strictObject({
  id: z.number().int().min(1).describe('the pending change, as GET /network/pending shows it'),
});

/** POST /network/rollback: `id` optional (the one pending change); when given, it must be that one. */
export const rollbackBody = z.strictObject({
  id: z.number().int().min(1).optional().describe('the pending change; default: whichever is pending'),
});
