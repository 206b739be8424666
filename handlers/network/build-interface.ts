/**
 * Assembles the spec's network interface object from what the parsers read:
 * `ip -j -d link` + `ip -j addr` + `ethtool` + `ethtool -i` + the ifupdown stanza. Pure.
 *
 * ipv4 (spec: type dhcp / static / inet):
 *  - the address shown is the first IPv4 address of scope global (else the first IPv4 one);
 *  - `dhcp`   when it is a lease (iproute2 `dynamic`: it has a finite lifetime); `dynamic` then
 *             holds the name iproute2 prints after "dynamic" in its text output, the label;
 *  - `static` when it is permanent and the ifupdown stanza is `inet static` with that address;
 *  - `inet`   for any other IPv4 address (set by hand or by another tool, or config differs).
 *
 * status (spec: GOOD or WARNING), see `interfaceHealth`: WARNING when any of
 *  - configured (static/dhcp stanza) but administratively down;
 *  - administratively up but no carrier (NO-CARRIER, operstate DOWN/LOWERLAYERDOWN, or
 *    ethtool "Link detected: no");
 *  - static stanza whose address is not on the interface;
 *  - dhcp stanza, interface up, but no leased IPv4 address;
 *  - a bond port whose MII status is not UP, or an 802.3ad bond whose active aggregator has
 *    fewer ports than the stanza lists slaves;
 * otherwise GOOD. An unconfigured port that is down is GOOD: an unused port is not a fault.
 */
import type { EthtoolDriverInfo, EthtoolSettings } from './parse/ethtool';
import type { IfupdownIface } from './parse/ifupdown';
import type {
  InterfaceConfig,
  InterfaceIpv4,
  InterfacePhys,
  InterfaceSettings,
  InterfaceStatus,
  NetworkInterface,
} from './responses';
import type { IpAddrRecord, IpAddress } from './parse/ip-addr';
import type { IpLinkRecord } from '../tools/ip-link';

export interface BuildInput {
  link: IpLinkRecord;
  /** the `ip -j addr` record of the same interface; null = no addresses known */
  addr: IpAddrRecord | null;
  ethtool: EthtoolSettings | null;
  driver: EthtoolDriverInfo | null;
  /** the inet stanza for this interface (parse/ifupdown.ts findInetIface), or null */
  iface: IfupdownIface | null;
}

// Legacy SUPPORTED_xxx / ADVERTISED_xxx bits (include/uapi/linux/ethtool.h); the link modes
// beyond bit 31 have no legacy bit, exactly as ETHTOOL_GSET drops them.
const LEGACY_BITS: Record<string, number> = {
  '10baseT/Half': 0,
  '10baseT/Full': 1,
  '100baseT/Half': 2,
  '100baseT/Full': 3,
  '1000baseT/Half': 4,
  '1000baseT/Full': 5,
  Autoneg: 6,
  TP: 7,
  AUI: 8,
  MII: 9,
  FIBRE: 10,
  BNC: 11,
  '10000baseT/Full': 12,
  Pause: 13,
  Asym_Pause: 14,
  '2500baseX/Full': 15,
  Backplane: 16,
  '1000baseKX/Full': 17,
  '10000baseKX4/Full': 18,
  '10000baseKR/Full': 19,
  '10000baseR_FEC': 20,
  '20000baseMLD2/Full': 21,
  '20000baseKR2/Full': 22,
  '40000baseKR4/Full': 23,
  '40000baseCR4/Full': 24,
  '40000baseSR4/Full': 25,
  '40000baseLR4/Full': 26,
  '56000baseKR4/Full': 27,
  '56000baseCR4/Full': 28,
  '56000baseSR4/Full': 29,
  '56000baseLR4/Full': 30,
  '25000baseCR/Full': 31,
};

function legacyMask(names: string[]): number {
  let mask = 0;
  for (const n of names) {
    const bit = LEGACY_BITS[n];
    if (bit !== undefined) mask |= 1 << bit;
  }
  return mask >>> 0; // bit 31 must not turn the number negative
}

/** ethtool prints Pause+Asym as "Symmetric Receive-only", Pause as "Symmetric", Asym as "Transmit-only" */
function pauseBits(text: string | null): string[] {
  if (!text) return [];
  const bits: string[] = [];
  if (/\bSymmetric\b/.test(text)) bits.push('Pause');
  if (/Receive-only|Transmit-only/.test(text)) bits.push('Asym_Pause');
  return bits;
}

export function buildSettings(e: EthtoolSettings, d: EthtoolDriverInfo | null, link: IpLinkRecord): InterfaceSettings {
  const supported = legacyMask([
    ...e.supported_link_modes,
    ...e.supported_ports,
    ...(e.supports_auto_negotiation ? ['Autoneg'] : []),
    ...pauseBits(e.supported_pause_frame_use),
  ]);
  const advertising = legacyMask([
    ...e.advertised_link_modes,
    ...(e.advertised_auto_negotiation ? ['Autoneg'] : []),
    ...pauseBits(e.advertised_pause_frame_use),
  ]);
  return {
    dev: e.dev,
    speed: typeof e.speed === 'number' ? e.speed : 'UNKNOWN',
    transceiver: e.transceiver === 'internal' ? 0 : e.transceiver === 'external' ? 1 : null,
    supported,
    advertising,
    phy_address: e.phyad,
    autoneg: e.auto_negotiation === null ? null : e.auto_negotiation ? 1 : 0,
    maxtxpkt: 0,
    maxrxpkt: 0,
    port: e.port,
    // "Unknown! (255)" → "Unknown!" as the spec shows it
    duplex: e.duplex === null ? null : e.duplex.replace(/^Unknown!.*$/, 'Unknown!'),
    link_detected: e.link_detected ?? link.flags.includes('LOWER_UP'),
    driver: d ? { name: d.driver, version: d.version, fw_version: d.firmware_version, bus_info: d.bus_info } : null,
  };
}

function firstOption(iface: IfupdownIface, ...names: string[]): string | undefined {
  for (const n of names) {
    const o = iface.options.find((x) => x.name === n);
    if (o) return o.value;
  }
  return undefined;
}

/** The spec's `config` object from the inet stanza; first occurrence of a repeated option wins. */
export function configFromIface(iface: IfupdownIface | null): InterfaceConfig | null {
  if (!iface) return null;
  const cfg: InterfaceConfig = { mode: iface.method ?? 'manual' };
  const address = firstOption(iface, 'address');
  const netmask = firstOption(iface, 'netmask');
  const mtu = firstOption(iface, 'mtu');
  const slaves = firstOption(iface, 'slaves', 'bond-slaves', 'bond_slaves');
  if (address !== undefined) cfg.address = address;
  if (netmask !== undefined) cfg.netmask = netmask;
  if (mtu !== undefined) cfg.mtu = mtu;
  if (slaves !== undefined) cfg.slaves = slaves;
  for (const o of iface.options) {
    if (/^(bond|slave)/.test(o.name) && !(o.name in cfg)) cfg[o.name] = o.value;
  }
  return cfg;
}

function ipOnly(cidrOrIp: string): string {
  return cidrOrIp.split('/')[0] ?? cidrOrIp;
}

function primaryIpv4(addr: IpAddrRecord | null): IpAddress | null {
  const v4 = (addr?.addresses ?? []).filter((a) => a.family === 'inet');
  return v4.find((a) => a.scope === 'global') ?? v4[0] ?? null;
}

export function buildIpv4(
  link: IpLinkRecord,
  addr: IpAddrRecord | null,
  config: InterfaceConfig | null,
): InterfaceIpv4 | null {
  const a = primaryIpv4(addr);
  if (!a) return null;
  const base = { address: `${a.local}/${a.prefixlen}`, brd: a.broadcast, scope: a.scope };
  if (a.dynamic) return { type: 'dhcp', ...base, dynamic: a.label ?? link.ifname };
  if (config?.mode === 'static' && config.address !== undefined && ipOnly(config.address) === a.local) {
    return { type: 'static', ...base };
  }
  return { type: 'inet', ...base };
}

export interface Health {
  status: InterfaceStatus;
  /** why it is not GOOD (empty when GOOD); for logs and tests, not part of the spec object */
  reasons: string[];
}

export function interfaceHealth(
  input: BuildInput,
  config: InterfaceConfig | null = configFromIface(input.iface),
): Health {
  const { link, addr, ethtool } = input;
  const reasons: string[] = [];
  const adminUp = link.flags.includes('UP');
  const configured = config !== null && (config.mode === 'static' || config.mode === 'dhcp');
  if (configured && !adminUp) reasons.push('configured but administratively down');
  if (adminUp) {
    const noCarrier =
      link.flags.includes('NO-CARRIER') ||
      link.operstate === 'DOWN' ||
      link.operstate === 'LOWERLAYERDOWN' ||
      ethtool?.link_detected === false;
    if (noCarrier) reasons.push('no carrier');
  }
  const v4 = (addr?.addresses ?? []).filter((a) => a.family === 'inet');
  if (
    config?.mode === 'static' &&
    config.address !== undefined &&
    !v4.some((a) => a.local === ipOnly(config.address ?? ''))
  ) {
    reasons.push('configured address missing');
  }
  if (config?.mode === 'dhcp' && adminUp && !v4.some((a) => a.dynamic)) reasons.push('no DHCP lease');
  if (link.bond_slave?.mii_status !== undefined && link.bond_slave.mii_status !== 'UP')
    reasons.push('bond port link down');
  const ports = link.bond?.ad_info?.num_ports;
  const wanted = config?.slaves?.split(/\s+/).filter((s) => s !== '' && s !== 'none').length ?? 0;
  if (ports !== undefined && wanted > 0 && ports < wanted)
    reasons.push(`bond aggregator has ${ports} of ${wanted} ports`);
  return { status: reasons.length ? 'WARNING' : 'GOOD', reasons };
}

/** The object of a kernel device (its `phys` is never null). */
export function buildInterface(input: BuildInput): NetworkInterface & { phys: InterfacePhys } {
  const { link, addr, ethtool, driver, iface } = input;
  const config = configFromIface(iface);
  return {
    link: link.ifname,
    class: 'phys',
    mtu: String(link.mtu),
    state: link.flags.includes('UP') ? 'up' : 'down',
    phys: {
      index: String(link.ifindex),
      deleted: false,
      name: link.ifname,
      flags: link.flags,
      type: link.link_type,
      mac: link.address,
      brd: link.broadcast,
      mtu: String(link.mtu),
      qdisc: link.qdisc,
      state: link.operstate,
      mode: link.linkmode,
      group: link.group,
      qlen: link.txqlen === null ? null : String(link.txqlen),
    },
    settings: ethtool ? buildSettings(ethtool, driver, link) : null,
    config,
    ipv4: buildIpv4(link, addr, config),
    status: interfaceHealth(input, config).status,
  };
}

/**
 * A bond the interfaces files define but the kernel does not have (never brought up, or deleted
 * by hand): listed so that it is not invisible while `bind` skips its name. The spec's fields
 * are all there: `state` "not created", `mtu` the stanza's (else 1500, what the bonding driver
 * starts with), `phys`/`settings`/`ipv4` null (there is no device), `config` its stanza, status
 * WARNING (configured, not running).
 */
export function buildNotCreated(iface: IfupdownIface): NetworkInterface {
  const config = configFromIface(iface);
  return {
    link: iface.name,
    class: 'phys',
    mtu: config?.mtu ?? '1500',
    state: 'not created',
    phys: null,
    settings: null,
    config,
    ipv4: null,
    status: 'WARNING',
  };
}
