/**
 * The runtime half of each change as a list of steps (argv + how to take it back), computed
 * from the state read before the change. Pure: the route tier asserts these argv exactly, and
 * the system tier runs them against a real kernel.
 *
 * How configuration is applied: directly with iproute2 (and the DHCP client), not with
 * ifup/ifdown, so it behaves the same in a network namespace and on the box, never runs hook
 * scripts the API did not write, and every step can be undone; the stanza written alongside
 * makes the same configuration come back at boot.
 */
import { ApiError } from '../core/errors';
import {
  addAddrArgv,
  bondAddArgv,
  delAddrArgv,
  dhclientArgv,
  flushArgv,
  linkDelArgv,
  linkSetArgv,
  masterArgv,
  nomasterArgv,
  readdAddrArgv,
  type Bins,
} from './argv';
import { BOND_MODES, bondIpArgs, LACP_RATES, XMIT_HASH_POLICIES, type BondParams } from './bond';
import type { Addressing } from './requests';
import type { IpAddrRecord } from './parse/ip-addr';
import type { IpLinkRecord } from '../tools/ip-link';
import type { Step } from './transaction';

/** What a device looked like before the change: enough to put it back. */
export interface DeviceBefore {
  link: IpLinkRecord;
  addr: IpAddrRecord | null;
}

const wasUp = (d: DeviceBefore) => d.link.flags.includes('UP');

/** Permanent IPv4 addresses: the ones a rollback can put back (a lease belongs to its client). */
function permanentV4(d: DeviceBefore) {
  return (d.addr?.addresses ?? []).filter((a) => a.family === 'inet' && !a.dynamic);
}

function flushStep(b: Bins, d: DeviceBefore): Step {
  const dev = d.link.ifname;
  return { argv: flushArgv(b, dev), undo: permanentV4(d).map((a) => readdAddrArgv(b, dev, a)) };
}

/** Undo for anything that changed a device's MTU or admin state. */
function restoreLinkArgv(b: Bins, d: DeviceBefore): string[] {
  return linkSetArgv(b, d.link.ifname, { mtu: d.link.mtu, state: wasUp(d) ? 'up' : 'down' });
}

function dhcpSteps(b: Bins, dev: string, timeoutMs: number): Step[] {
  // checked while planning, before any file is written or command run
  if (!b.dhclient)
    throw new ApiError(
      'not_implemented',
      `cannot configure ${dev} for DHCP: this host has no DHCP client configured (system.binaries.dhclient)`,
    );
  return [
    {
      argv: dhclientArgv(b.dhclient, dev, 'start'),
      undo: [dhclientArgv(b.dhclient, dev, 'stop'), flushArgv(b, dev)],
      timeoutMs,
    },
  ];
}

/** Stop the DHCP client the previous dhcp configuration started (nothing to do without one). */
function stopDhcpSteps(b: Bins, dev: string, wasDhcp: boolean): Step[] {
  return wasDhcp && b.dhclient ? [{ argv: dhclientArgv(b.dhclient, dev, 'stop'), undo: [] }] : [];
}

export interface AddressingOptions {
  /** the stanza being replaced was `inet dhcp` */
  wasDhcp: boolean;
  dhcpTimeoutMs: number;
}

/**
 * Give a device its new addressing: drop its IPv4 addresses, then static: add the address,
 * set the MTU (if given) and bring it up; dhcp: set the MTU, bring it up, run the client.
 */
export function planAddressing(b: Bins, d: DeviceBefore, want: Addressing, o: AddressingOptions): Step[] {
  const dev = d.link.ifname;
  const steps: Step[] = [...stopDhcpSteps(b, dev, o.wasDhcp), flushStep(b, d)];
  if (want.method === 'static') {
    const cidr = `${want.ip}/${want.prefix}`;
    steps.push({ argv: addAddrArgv(b, dev, cidr), undo: [delAddrArgv(b, dev, cidr)] });
  }
  steps.push({ argv: linkSetArgv(b, dev, { mtu: want.mtu, state: 'up' }), undo: [restoreLinkArgv(b, d)] });
  if (want.method === 'dhcp') steps.push(...dhcpSteps(b, dev, o.dhcpTimeoutMs));
  return steps;
}

/** Enslave a port: down, without IPv4 addresses, then into the bond (which brings it up). */
function enslaveSteps(b: Bins, port: DeviceBefore, bond: string): Step[] {
  const dev = port.link.ifname;
  return [
    { argv: linkSetArgv(b, dev, { state: 'down' }), undo: [restoreLinkArgv(b, port)] },
    flushStep(b, port),
    { argv: masterArgv(b, dev, bond), undo: [nomasterArgv(b, dev)] },
  ];
}

/** Release a port: out of the bond and left down, as an unconfigured port is. */
function releaseSteps(b: Bins, dev: string, bond: string): Step[] {
  return [
    { argv: nomasterArgv(b, dev), undo: [masterArgv(b, dev, bond)] },
    { argv: linkSetArgv(b, dev, { state: 'down' }), undo: [] },
  ];
}

export interface BindPlan {
  bond: string;
  params: BondParams;
  ports: DeviceBefore[];
  addressing: Addressing;
  dhcpTimeoutMs: number;
}

export function planBind(b: Bins, p: BindPlan): Step[] {
  // Deleting the bond (the undo of its creation, run last) releases every port and drops its
  // addresses, so the steps on the bond itself need no undo of their own.
  const steps: Step[] = [{ argv: bondAddArgv(b, p.bond, bondIpArgs(p.params)), undo: [linkDelArgv(b, p.bond)] }];
  for (const port of p.ports) steps.push(...enslaveSteps(b, port, p.bond));
  if (p.addressing.method === 'static') {
    steps.push({ argv: addAddrArgv(b, p.bond, `${p.addressing.ip}/${p.addressing.prefix}`), undo: [] });
  }
  steps.push({ argv: linkSetArgv(b, p.bond, { mtu: p.addressing.mtu, state: 'up' }), undo: [] });
  if (p.addressing.method === 'dhcp') steps.push(...dhcpSteps(b, p.bond, p.dhcpTimeoutMs));
  return steps;
}

/** Removed ports first, so a port moved between bonds is free before it is needed. */
export function planSlaves(b: Bins, bond: string, added: DeviceBefore[], removed: string[]): Step[] {
  return [
    ...removed.flatMap((dev) => releaseSteps(b, dev, bond)),
    ...added.flatMap((port) => enslaveSteps(b, port, bond)),
  ];
}

export interface UnconfigurePlan {
  device: DeviceBefore;
  /** the bond this device is a port of, if any */
  master: string | null;
  wasDhcp: boolean;
}

/** A NIC (or a bond port): out of its bond, DHCP client stopped, IPv4 flushed, down. */
export function planUnconfigure(b: Bins, p: UnconfigurePlan): Step[] {
  const dev = p.device.link.ifname;
  const steps: Step[] = [];
  if (p.master) steps.push({ argv: nomasterArgv(b, dev), undo: [masterArgv(b, dev, p.master)] });
  steps.push(...stopDhcpSteps(b, dev, p.wasDhcp), flushStep(b, p.device));
  // the runtime MTU goes back to Ethernet's default too: a stanza-less interface must not keep
  // the 9000 its removed configuration set (a later configure without mtu would report it)
  const mtu = p.device.link.mtu;
  const resetMtu = p.device.link.link_type === 'ether' && mtu !== DEFAULT_ETHER_MTU;
  steps.push({
    argv: linkSetArgv(b, dev, { ...(resetMtu ? { mtu: DEFAULT_ETHER_MTU } : {}), state: 'down' }),
    undo: [
      ...(resetMtu ? [linkSetArgv(b, dev, { mtu })] : []),
      ...(wasUp(p.device) ? [linkSetArgv(b, dev, { state: 'up' })] : []),
    ],
  });
  return steps;
}

/** The MTU an Ethernet interface has without configuration. */
export const DEFAULT_ETHER_MTU = 1500;

/** A table entry's index by the name iproute2 prints (or `fallback` when absent or unknown). */
function indexOf(table: readonly string[], name: string | undefined, fallback: number): number {
  const i = name === undefined ? -1 : table.indexOf(name);
  return i >= 0 ? i : fallback;
}

/**
 * How to bring a deleted bond back as it was before the delete: the same kernel parameters
 * (as `ip -d link` printed them), its MTU and its permanent IPv4 addresses. Empty when the
 * record carries no bond data to recreate it from.
 */
export function recreateBondArgv(b: Bins, bond: DeviceBefore): string[][] {
  const info = bond.link.bond;
  const mode = info ? (BOND_MODES as readonly string[]).indexOf(info.mode) : -1;
  if (!info || mode < 0) return [];
  const dev = bond.link.ifname;
  const params: BondParams = {
    mode,
    lacpRate: indexOf(LACP_RATES, info.ad_lacp_rate, 0),
    miimon: info.miimon ?? 0,
    updelay: info.updelay ?? 0,
    downdelay: info.downdelay ?? 0,
    xmitHashPolicy: indexOf(XMIT_HASH_POLICIES, info.xmit_hash_policy, 0),
  };
  return [
    bondAddArgv(b, dev, bondIpArgs(params)),
    linkSetArgv(b, dev, { mtu: bond.link.mtu }),
    ...permanentV4(bond).map((a) => readdAddrArgv(b, dev, a)),
  ];
}

/**
 * A bond: down, each port released and left down, then the bond deleted. Deleting is last
 * because it is the one step a route's own rollback never has to take back (nothing runs after
 * it). Its undo, used only by the start-up recovery of a host killed between the delete and the
 * end of the change, recreates the bond (recreateBondArgv); the ports' undo then re-enslaves
 * them and the first step's brings the bond up again.
 */
export function planUnconfigureBond(b: Bins, bond: DeviceBefore, ports: string[], wasDhcp: boolean): Step[] {
  const dev = bond.link.ifname;
  return [
    ...stopDhcpSteps(b, dev, wasDhcp),
    { argv: linkSetArgv(b, dev, { state: 'down' }), undo: wasUp(bond) ? [linkSetArgv(b, dev, { state: 'up' })] : [] },
    ...ports.flatMap((p) => releaseSteps(b, p, dev)),
    { argv: linkDelArgv(b, dev), undo: recreateBondArgv(b, bond) },
  ];
}
