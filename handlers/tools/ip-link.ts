/**
 * `ip -j [-d] link show [dev X]` (iproute2 JSON) → IpLinkRecord[]: the network area's interface
 * listing (with `-d`), and the traffic area's device list (linkNames, without `-d`).
 *
 * The raw shape is validated loosely (iproute2 adds keys between versions: altnames in 5.5,
 * ad_lacp_active in 5.15, ...), then narrowed to the keys the product uses. Bond master and
 * bond port data are read tolerantly: each key optional, only `mode` required on a master.
 * Parsed forms keep iproute2's own key names, so a fixture reads next to its expected JSON.
 */
import * as z from 'zod';
import { parseJsonArrayOutput, recordError } from './json-output';

const PARSER = 'ip-link';

/** Bond master data (`linkinfo.info_data` when `info_kind` is `bond`). Every key optional:
 *  iproute2 prints a key only when the kernel sent the attribute, and keys drift by version. */
export const bondInfo = z.object({
  mode: z.string(),
  active_slave: z.string().optional(),
  miimon: z.number().optional(),
  updelay: z.number().optional(),
  downdelay: z.number().optional(),
  peer_notify_delay: z.number().optional(),
  use_carrier: z.number().optional(),
  arp_interval: z.number().optional(),
  arp_missed_max: z.number().optional(),
  arp_ip_target: z.array(z.string()).optional(),
  /** iproute2 prints JSON null for "none" */
  arp_validate: z.string().nullable().optional(),
  arp_all_targets: z.string().optional(),
  primary: z.string().optional(),
  primary_reselect: z.string().optional(),
  fail_over_mac: z.string().optional(),
  xmit_hash_policy: z.string().optional(),
  resend_igmp: z.number().optional(),
  num_peer_notif: z.number().optional(),
  all_slaves_active: z.number().optional(),
  min_links: z.number().optional(),
  lp_interval: z.number().optional(),
  packets_per_slave: z.number().optional(),
  ad_lacp_active: z.string().optional(),
  ad_lacp_rate: z.string().optional(),
  ad_select: z.string().optional(),
  ad_info: z
    .object({
      aggregator: z.number().optional(),
      num_ports: z.number().optional(),
      actor_key: z.number().optional(),
      partner_key: z.number().optional(),
      partner_mac: z.string().optional(),
    })
    .optional(),
  ad_actor_sys_prio: z.number().optional(),
  ad_user_port_key: z.number().optional(),
  ad_actor_system: z.string().optional(),
  tlb_dynamic_lb: z.number().optional(),
});
export type BondInfo = z.infer<typeof bondInfo>;

/** Bond port data (`linkinfo.info_slave_data` when `info_slave_kind` is `bond`). */
export const bondSlaveInfo = z.object({
  state: z.string().optional(),
  mii_status: z.string().optional(),
  link_failure_count: z.number().optional(),
  perm_hwaddr: z.string().optional(),
  queue_id: z.number().optional(),
  prio: z.number().optional(),
  ad_aggregator_id: z.number().optional(),
  ad_actor_oper_port_state: z.number().optional(),
  ad_actor_oper_port_state_str: z.array(z.string()).optional(),
  ad_partner_oper_port_state: z.number().optional(),
  ad_partner_oper_port_state_str: z.array(z.string()).optional(),
});
export type BondSlaveInfo = z.infer<typeof bondSlaveInfo>;

/** One interface from `ip -j -d link show` (also accepts `ip -j link show`, minus details). */
export const ipLinkRecord = z.object({
  ifindex: z.number().int(),
  ifname: z.string(),
  flags: z.array(z.string()),
  mtu: z.number().int(),
  qdisc: z.string().nullable(),
  /** upper case as iproute2 prints it: UP, DOWN, UNKNOWN, LOWERLAYERDOWN, DORMANT, ... */
  operstate: z.string(),
  linkmode: z.string().nullable(),
  group: z.string().nullable(),
  txqlen: z.number().int().nullable(),
  link_type: z.string(),
  address: z.string().nullable(),
  broadcast: z.string().nullable(),
  /** the upper device (bridge or bond) this one is enslaved to */
  master: z.string().nullable(),
  /** veth peer / VLAN parent name when iproute2 could resolve it */
  link: z.string().nullable(),
  altnames: z.array(z.string()),
  /** `linkinfo.info_kind` (bond, veth, bridge, vlan, tun, ...); null for physical NICs */
  kind: z.string().nullable(),
  /** `linkinfo.info_slave_kind` (bond, bridge, ...) when enslaved */
  slave_kind: z.string().nullable(),
  bond: bondInfo.nullable(),
  bond_slave: bondSlaveInfo.nullable(),
  /** true when the record came from `-d` output (it carries promiscuity/min_mtu/...): only then
   *  is a missing `kind` evidence of a physical device */
  details: z.boolean(),
});
export type IpLinkRecord = z.infer<typeof ipLinkRecord>;

const rawLink = z.looseObject({
  ifindex: z.number().int(),
  ifname: z.string().min(1),
  flags: z.array(z.string()),
  mtu: z.number().int(),
  qdisc: z.string().optional(),
  operstate: z.string(),
  linkmode: z.string().optional(),
  group: z.string().optional(),
  txqlen: z.number().int().optional(),
  link_type: z.string(),
  address: z.string().optional(),
  broadcast: z.string().optional(),
  master: z.string().optional(),
  // iproute2 prints the peer's name when it can resolve it, else `link_index`/`link_netnsid`;
  // `"link": null` occurs for a peer in another namespace on some versions
  link: z.string().nullable().optional(),
  altnames: z.array(z.string()).optional(),
  promiscuity: z.number().optional(),
  linkinfo: z
    .looseObject({
      info_kind: z.string().optional(),
      info_data: z.unknown().optional(),
      info_slave_kind: z.string().optional(),
      info_slave_data: z.unknown().optional(),
    })
    .optional(),
});

export function parseIpLink(stdout: string): IpLinkRecord[] {
  const doc = parseJsonArrayOutput(PARSER, stdout);
  return doc.map((raw, i) => {
    const r = rawLink.safeParse(raw);
    if (!r.success) throw recordError(PARSER, i, raw, r.error);
    const l = r.data;
    const info = l.linkinfo;
    const kind = info?.info_kind ?? null;
    const slaveKind = info?.info_slave_kind ?? null;

    let bond: IpLinkRecord['bond'] = null;
    if (kind === 'bond') {
      const b = bondInfo.safeParse(info?.info_data ?? {});
      if (!b.success) throw recordError(PARSER, i, raw, b.error, 'linkinfo.info_data');
      bond = b.data;
    }
    let bondSlave: IpLinkRecord['bond_slave'] = null;
    if (slaveKind === 'bond') {
      const s = bondSlaveInfo.safeParse(info?.info_slave_data ?? {});
      if (!s.success) throw recordError(PARSER, i, raw, s.error, 'linkinfo.info_slave_data');
      bondSlave = s.data;
    }

    return {
      ifindex: l.ifindex,
      ifname: l.ifname,
      flags: l.flags,
      mtu: l.mtu,
      qdisc: l.qdisc ?? null,
      operstate: l.operstate,
      linkmode: l.linkmode ?? null,
      group: l.group ?? null,
      txqlen: l.txqlen ?? null,
      link_type: l.link_type,
      address: l.address ?? null,
      broadcast: l.broadcast ?? null,
      master: l.master ?? null,
      link: l.link ?? null,
      altnames: l.altnames ?? [],
      kind,
      slave_kind: slaveKind,
      bond,
      bond_slave: bondSlave,
      // `-d` always prints promiscuity; without it, linkinfo is never printed either
      details: l.promiscuity !== undefined,
    };
  });
}

export interface LinkName {
  name: string;
  loopback: boolean;
}

/** The interface names, in the kernel's (ifindex) order, each marked when it is a loopback device. */
export function linkNames(links: readonly IpLinkRecord[]): LinkName[] {
  return links.map((l) => ({
    name: l.ifname,
    // link_type is "loopback" for lo; the LOOPBACK flag covers a renamed one.
    loopback: l.link_type === 'loopback' || l.flags.includes('LOOPBACK'),
  }));
}
