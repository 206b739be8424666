/**
 * Network area schemas: the spec's network interface object (the response shape of
 * GET /network/interface and friends) and the intermediate forms the pure parsers return.
 *
 * Parsed forms keep the tools' own vocabulary (iproute2 key names, ethtool labels) so a reader
 * can hold a fixture next to its expected JSON; the spec object is assembled from them in
 * build-interface.ts, which is the one place that knows the spec's odd names and types.
 */
import * as z from 'zod';

// ---------------------------------------------------------------------------------------------
// Shared tokens
// ---------------------------------------------------------------------------------------------

/**
 * A Linux interface name as ifupdown sees it: IFNAMSIZ is 16 incl. NUL; `:` is allowed because
 * ifupdown logical names may be aliases (`eth0:1`). No whitespace, `/`, `#` or leading dash.
 */
export const ifaceName = z
  .string()
  .regex(/^[A-Za-z0-9_][A-Za-z0-9_.:-]{0,14}$/, 'not a valid interface name')
  .refine((s) => s !== '.' && s !== '..', 'not a valid interface name');

// ---------------------------------------------------------------------------------------------
// `ip -j -d link show`
// ---------------------------------------------------------------------------------------------

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

// ---------------------------------------------------------------------------------------------
// `ip -j addr show`
// ---------------------------------------------------------------------------------------------

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

// ---------------------------------------------------------------------------------------------
// ethtool
// ---------------------------------------------------------------------------------------------

/** `ethtool <dev>` (text; Debian 12's ethtool 6.1 has no JSON for this command). */
export const ethtoolSettings = z.object({
  dev: z.string(),
  supported_ports: z.array(z.string()),
  /** empty when ethtool printed "Not reported" */
  supported_link_modes: z.array(z.string()),
  supported_pause_frame_use: z.string().nullable(),
  supports_auto_negotiation: z.boolean().nullable(),
  advertised_link_modes: z.array(z.string()),
  advertised_pause_frame_use: z.string().nullable(),
  advertised_auto_negotiation: z.boolean().nullable(),
  link_partner_advertised_link_modes: z.array(z.string()).nullable(),
  /** Mb/s; 'unknown' for `Speed: Unknown!`; null when the line is absent (e.g. `lo`) */
  speed: z.union([z.number(), z.literal('unknown')]).nullable(),
  /** as printed: Full, Half, or `Unknown! (255)` */
  duplex: z.string().nullable(),
  port: z.string().nullable(),
  phyad: z.number().int().nullable(),
  transceiver: z.string().nullable(),
  auto_negotiation: z.boolean().nullable(),
  mdi_x: z.string().nullable(),
  supports_wake_on: z.string().nullable(),
  wake_on: z.string().nullable(),
  /** `Current message level: 0x00000007 (7)` → 7; the names on the following line are dropped */
  message_level: z.number().int().nullable(),
  link_detected: z.boolean().nullable(),
  /** every other `Key: value` line, verbatim, so nothing the driver printed is lost */
  other: z.record(z.string(), z.string()),
});
export type EthtoolSettings = z.infer<typeof ethtoolSettings>;

/** `ethtool -i <dev>`; values are verbatim (may be empty, or `N/A` for virtual devices). */
export const ethtoolDriverInfo = z.object({
  driver: z.string(),
  version: z.string().nullable(),
  firmware_version: z.string().nullable(),
  expansion_rom_version: z.string().nullable(),
  bus_info: z.string().nullable(),
  supports_statistics: z.boolean().nullable(),
  supports_test: z.boolean().nullable(),
  supports_eeprom_access: z.boolean().nullable(),
  supports_register_dump: z.boolean().nullable(),
  supports_priv_flags: z.boolean().nullable(),
});
export type EthtoolDriverInfo = z.infer<typeof ethtoolDriverInfo>;

// ---------------------------------------------------------------------------------------------
// ifupdown (/etc/network/interfaces)
// ---------------------------------------------------------------------------------------------

export const ifupdownOption = z.object({
  /** as written (bond-mode and bond_mode both occur; ifupdown maps both to IF_BOND_MODE) */
  name: z.string(),
  value: z.string(),
  /** 1-based physical line where the option starts */
  line: z.number().int(),
});
export type IfupdownOption = z.infer<typeof ifupdownOption>;

export const ifupdownIface = z.object({
  name: z.string(),
  /** inet, inet6, ... ; null only for `iface X inherits Y` without a family */
  family: z.string().nullable(),
  method: z.string().nullable(),
  inherits: z.string().nullable(),
  options: z.array(ifupdownOption),
  line: z.number().int(),
});
export type IfupdownIface = z.infer<typeof ifupdownIface>;

export const ifupdownFile = z.object({
  /** names from `auto` and `allow-auto` lines, in file order, without duplicates */
  auto: z.array(z.string()),
  /** `allow-CLASS` lines other than allow-auto, keyed by CLASS (hotplug, ...) */
  allow: z.record(z.string(), z.array(z.string())),
  ifaces: z.array(ifupdownIface),
  mappings: z.array(
    z.object({
      match: z.array(z.string()),
      script: z.string().nullable(),
      map: z.array(z.string()),
      line: z.number().int(),
    }),
  ),
  /** `source` / `source-directory` directives, returned as data: the caller decides whether to
   *  read them (and must confine the paths); this parser never touches the filesystem */
  sources: z.array(
    z.object({ kind: z.enum(['source', 'source-directory']), path: z.string(), line: z.number().int() }),
  ),
  /** rename, no-auto-down, no-scripts: kept so nothing is silently lost */
  other: z.array(z.object({ keyword: z.string(), args: z.array(z.string()), line: z.number().int() })),
});
export type IfupdownFile = z.infer<typeof ifupdownFile>;

// ---------------------------------------------------------------------------------------------
// The spec's network interface object
// ---------------------------------------------------------------------------------------------

export const interfacePhys = z.object({
  index: z.string(),
  /** only `ip monitor` ever prints "Deleted"; a listing is always false */
  deleted: z.boolean(),
  name: z.string(),
  flags: z.array(z.string()),
  type: z.string(),
  mac: z.string().nullable(),
  brd: z.string().nullable(),
  mtu: z.string(),
  qdisc: z.string().nullable(),
  /** operstate as iproute2 prints it (UP, DOWN; also UNKNOWN/LOWERLAYERDOWN on some devices) */
  state: z.string(),
  mode: z.string().nullable(),
  group: z.string().nullable(),
  qlen: z.string().nullable(),
});
export type InterfacePhys = z.infer<typeof interfacePhys>;

export const interfaceDriver = z.object({
  name: z.string(),
  version: z.string().nullable(),
  fw_version: z.string().nullable(),
  bus_info: z.string().nullable(),
});

/**
 * The names are those of the kernel's legacy `struct ethtool_cmd` (ETHTOOL_GSET), which is what
 * the spec's field list mirrors; the values are derived from ethtool's text output:
 * supported/advertising are the legacy 32-bit SUPPORTED_xxx / ADVERTISED_xxx masks, transceiver
 * is XCVR_INTERNAL (0) / XCVR_EXTERNAL (1), autoneg 0/1, maxtxpkt/maxrxpkt are always 0 (the
 * kernel stopped filling them long ago).
 */
export const interfaceSettings = z.object({
  dev: z.string(),
  speed: z.union([z.number(), z.literal('UNKNOWN')]),
  transceiver: z.number().int().nullable(),
  supported: z.number().int(),
  advertising: z.number().int(),
  phy_address: z.number().int().nullable(),
  autoneg: z.number().int().nullable(),
  maxtxpkt: z.number().int(),
  maxrxpkt: z.number().int(),
  port: z.string().nullable(),
  /** Full, Half, or `Unknown!` (ethtool's ` (255)` suffix is dropped, as in the spec) */
  duplex: z.string().nullable(),
  link_detected: z.boolean(),
  driver: interfaceDriver.nullable(),
});
export type InterfaceSettings = z.infer<typeof interfaceSettings>;

/**
 * The interface's ifupdown configuration, as the spec shows it: mode plus address/netmask/mtu,
 * `slaves`, and every option whose name starts with `bond` or `slave`, under the name it has in
 * the file (so both `bond_mode` and `bond-downdelay` appear as written). Values are strings.
 */
export const interfaceConfig = z
  .object({
    mode: z.string(),
    address: z.string().optional(),
    netmask: z.string().optional(),
    mtu: z.string().optional(),
    slaves: z.string().optional(),
    bond_mode: z.string().optional(),
    bond_lacp_rate: z.string().optional(),
    bond_miimon: z.string().optional(),
    bond_xmit_hash_policy: z.string().optional(),
    'bond-downdelay': z.string().optional(),
    'bond-updelay': z.string().optional(),
  })
  .catchall(z.string());
export type InterfaceConfig = z.infer<typeof interfaceConfig>;

export const interfaceIpv4 = z.object({
  type: z.enum(['dhcp', 'static', 'inet']),
  /** CIDR text */
  address: z.string(),
  brd: z.string().nullable(),
  scope: z.string(),
  /** present for DHCP: the name iproute2 prints after `dynamic` (the address label) */
  dynamic: z.string().optional(),
});
export type InterfaceIpv4 = z.infer<typeof interfaceIpv4>;

export const interfaceStatus = z.enum(['GOOD', 'WARNING']);
export type InterfaceStatus = z.infer<typeof interfaceStatus>;

export const networkInterface = z.object({
  link: z.string(),
  class: z.literal('phys'),
  mtu: z.string(),
  /** administrative state: `up` when the UP flag is set */
  state: z
    .enum(['up', 'down', 'not created'])
    .describe(
      'administrative state: up or down; "not created" for a bond the interfaces files define but the kernel does not have (no device: phys, settings and ipv4 are null, config is its stanza, status WARNING)',
    ),
  phys: interfacePhys
    .nullable()
    .describe('the kernel device (ip link); null only when state is "not created" (a bond defined only in the files)'),
  /** null when ethtool gave nothing for this device */
  settings: interfaceSettings
    .nullable()
    .describe(
      'ethtool settings; null (not an object) when ethtool gave nothing for this device (veths, bonds without ports)',
    ),
  /** null when /etc/network/interfaces has no inet stanza for it */
  config: interfaceConfig
    .nullable()
    .describe(
      'the inet stanza of the interfaces files; null (not an object) when there is none. mode is the stanza method: static, dhcp, or manual (a bond port: its stanza only names its bond with bond-master, so its mode is manual, not one of the spec modes)',
    ),
  /** null when the interface has no IPv4 address */
  ipv4: interfaceIpv4.nullable().describe('the first IPv4 address; null (not an object) when the interface has none'),
  status: interfaceStatus,
});
export type NetworkInterface = z.infer<typeof networkInterface>;
