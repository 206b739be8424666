/**
 * What the network routes answer: the spec's network interface object (GET /network/interface
 * and friends).
 *
 * The parsers' forms (beside them in parse/ and handlers/tools/ip-link.ts) keep the tools' own
 * vocabulary (iproute2 key names, ethtool labels) so a reader can hold a fixture next to its
 * expected JSON; the spec object is assembled from them in build-interface.ts, which is the one
 * place that knows the spec's odd names and types.
 */
import * as z from 'zod';
import { pendingChange, rollbackReport } from './contract';

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

/** GET /network/pending: the change waiting for its confirmation, and how to confirm it. */
export const pendingAnswer = z.object({
  pending: pendingChange.nullable().describe('null: no change is waiting'),
  confirm: z
    .object({ method: z.literal('POST'), path: z.string(), body: z.object({ id: z.number() }) })
    .nullable()
    .describe('the request that keeps the change (null when none is waiting)'),
});

/** POST /network/confirm */
export const confirmAnswer = z.object({ message: z.string(), change: pendingChange });

/** POST /network/rollback */
export const rollbackAnswer = z.object({ message: z.string(), change: pendingChange, report: rollbackReport });
