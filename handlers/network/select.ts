/**
 * Which interfaces GET /network/interface lists.
 *
 * Default rule (DEFAULT_SELECT_RULE): the appliance's real ports and the bonds built on them.
 *  - physical: the record comes from `ip -d` output, has no `linkinfo.info_kind` (the kernel
 *    reports a kind only for software devices: veth, bridge, bond, vlan, tun, dummy, ...),
 *    its link type is in `linkTypes` (ether by default) and it is not a loopback;
 *  - kinds: software devices whose kind is listed (`bond` by default);
 *  - left out: loopback, veth pairs, bridges (docker0, br-*), tun/tap, VLANs, dummies, ...
 *  - includeNames / excludeNames: exact names or `*` globs; an exclusion always wins, an
 *    inclusion lists a device whatever its kind.
 * Tests in a network namespace, where the "NICs" are veths, use `{ kinds: ['bond', 'veth'] }`.
 *
 * Without `-d` iproute2 prints no linkinfo at all, so a veth would look physical; the rule
 * refuses such records instead of guessing.
 */
import type { IpLinkRecord } from '../tools/ip-link';

export interface SelectRule {
  physical: boolean;
  linkTypes: string[];
  kinds: string[];
  includeNames: string[];
  excludeNames: string[];
}

export const DEFAULT_SELECT_RULE: Readonly<SelectRule> = Object.freeze({
  physical: true,
  linkTypes: ['ether'],
  kinds: ['bond'],
  includeNames: [],
  excludeNames: [],
});

function globToRegExp(glob: string): RegExp {
  const esc = glob.replace(/[.+?^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '.*');
  return new RegExp(`^${esc}$`);
}

function matchesAny(name: string, globs: string[]): boolean {
  return globs.some((g) => globToRegExp(g).test(name));
}

export function isPhysical(link: IpLinkRecord, linkTypes: string[] = DEFAULT_SELECT_RULE.linkTypes): boolean {
  return link.kind === null && linkTypes.includes(link.link_type) && !link.flags.includes('LOOPBACK');
}

export function isListed(link: IpLinkRecord, rule: Partial<SelectRule> = {}): boolean {
  const r: SelectRule = { ...DEFAULT_SELECT_RULE, ...rule };
  if (!link.details) throw new Error(`select: ${link.ifname} comes from "ip link" without -d; kinds are unknown`);
  if (matchesAny(link.ifname, r.excludeNames)) return false;
  if (matchesAny(link.ifname, r.includeNames)) return true;
  if (link.kind !== null) return r.kinds.includes(link.kind);
  return r.physical && isPhysical(link, r.linkTypes);
}

/**
 * The rule for a device known only by name and kind: a bond the interfaces files define but the
 * kernel does not have (state "not created") is listed when a real bond of that name would be.
 */
export function isNameListed(name: string, kind: string, rule: Partial<SelectRule> = {}): boolean {
  const r: SelectRule = { ...DEFAULT_SELECT_RULE, ...rule };
  if (matchesAny(name, r.excludeNames)) return false;
  if (matchesAny(name, r.includeNames)) return true;
  return r.kinds.includes(kind);
}

/** The listed interfaces, in the order iproute2 gave them (by ifindex). */
export function selectInterfaces(links: IpLinkRecord[], rule: Partial<SelectRule> = {}): IpLinkRecord[] {
  return links.filter((l) => isListed(l, rule));
}
