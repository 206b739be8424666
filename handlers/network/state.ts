/**
 * Reading the box: runtime state from iproute2 and ethtool, persistent state from ifupdown,
 * assembled into the spec's interface objects (build-interface.ts).
 *
 * Independent reads run concurrently: `ip link`, `ip addr` and the config files together, then
 * `ethtool X` / `ethtool -i X` for all listed interfaces through a small pool (settings
 * network.concurrency, default 4), so a box with many NICs is read in a few round trips
 * without filling the host's command queue on its own.
 */
import { ApiError, conflict, notFound } from '../core/errors';
import { commandFailed, commandTimeout, type SystemClient } from '../core/system';
import { areaSettings } from '../core/settings';
import { bin, type Vars } from '../core/vars';
import { parseIpLink, type IpLinkRecord } from '../tools/ip-link';
import { readArgv, type Bins } from './argv';
import { buildInterface, buildNotCreated } from './build-interface';
import { inetStanza, readNetworkConfig, type NetworkConfig } from './config-files';
import { networkSettings, type NetworkSettings } from './contract';
import { parseEthtool, parseEthtoolDriver } from './parse/ethtool';
import type { IfupdownIface } from './parse/ifupdown';
import { parseIpAddr, type IpAddrRecord } from './parse/ip-addr';
import type { NetworkInterface } from './responses';
import { isListed, isNameListed, selectInterfaces } from './select';
import { definesBond } from './stanzas';

export interface NetworkContext {
  system: SystemClient;
  vars: Vars;
  bins: Bins;
  settings: NetworkSettings;
}

export function networkContext(system: SystemClient, vars: Vars): NetworkContext {
  const dhclient = vars.bin.dhclient;
  return {
    system,
    vars,
    bins: { ip: bin(vars, 'ip'), ethtool: bin(vars, 'ethtool'), ...(dhclient ? { dhclient } : {}) },
    settings: areaSettings(vars, 'network', networkSettings),
  };
}

/** Everything a change is decided on: all links, all addresses, the configuration. */
export interface Snapshot {
  links: IpLinkRecord[];
  addrs: IpAddrRecord[];
  config: NetworkConfig;
}

export async function readSnapshot(c: NetworkContext): Promise<Snapshot> {
  const [l, a, config] = await Promise.all([
    c.system.run(readArgv.links(c.bins)),
    c.system.run(readArgv.addrs(c.bins)),
    readNetworkConfig(c.system, c.vars),
  ]);
  return { links: parseIpLink(l.stdout), addrs: parseIpAddr(a.stdout), config };
}

export function linkOf(s: Snapshot, name: string): IpLinkRecord | null {
  return s.links.find((l) => l.ifname === name) ?? null;
}

export function addrOf(s: Snapshot, name: string): IpAddrRecord | null {
  return s.addrs.find((a) => a.ifname === name) ?? null;
}

/**
 * The stanza of `name` when it is a bond the interfaces files define and the kernel does not
 * have (`links`: every device), and the listing rule shows bonds; else null.
 */
export function notCreatedBond(
  c: NetworkContext,
  links: IpLinkRecord[] | null,
  config: NetworkConfig,
  name: string,
): IfupdownIface | null {
  if (links?.some((l) => l.ifname === name)) return null;
  const iface = inetStanza(config, name);
  return iface && definesBond(iface) && isNameListed(name, 'bond', c.settings.list) ? iface : null;
}

/** Every bond defined only in the files, in the order the files name them. */
export function notCreatedBonds(c: NetworkContext, s: Snapshot): IfupdownIface[] {
  const names = [...new Set(s.config.merged.ifaces.map((i) => i.name))];
  return names.map((n) => notCreatedBond(c, s.links, s.config, n)).filter((i): i is IfupdownIface => i !== null);
}

/** A change aimed at a bond that exists only in the files: 409 saying so and what to do. */
export function notCreated(name: string): ApiError {
  return conflict(
    `${name} is a bond defined in the interfaces files but not created (no kernel device); unconfigure it to remove its definition, or create a bond with /network/interface/bind`,
    { device: name, state: 'not created' },
  );
}

/** The interface `name` if it exists and the listing rule shows it; else 404 (409 for a bond not created). */
export function managedLink(c: NetworkContext, s: Snapshot, name: string): IpLinkRecord {
  const link = linkOf(s, name);
  if (!link && notCreatedBond(c, s.links, s.config, name)) throw notCreated(name);
  if (!link) throw notFound(`no network interface ${name}`);
  if (!isListed(link, c.settings.list)) throw notListed(link);
  return link;
}

/** A device that exists but settings.network.list hides: say so, not "no network interface". */
export function notListed(link: IpLinkRecord): ApiError {
  const what = link.kind ?? (link.link_type !== 'ether' ? link.link_type : 'device of a kind not listed');
  const article = /^[aeiou]/i.test(what) ? 'an' : 'a';
  return new ApiError('not_found', `${link.ifname} is ${article} ${what}, not listed (see settings.network.list)`, {
    details: { device: link.ifname, kind: link.kind },
  });
}

export async function mapLimit<T, R>(items: T[], limit: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const out = new Array<R>(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await fn(items[i] as T);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return out;
}

/**
 * ethtool for one device. A failing ethtool (a device without ethtool support, or one that
 * vanished since `ip link`) gives null, which the object shows as `settings: null`; output we
 * cannot parse is still an error (502), never silently dropped.
 */
async function ethtoolOf(c: NetworkContext, dev: string) {
  const [s, d] = await Promise.all([
    c.system.exec(readArgv.ethtool(c.bins, dev)),
    c.system.exec(readArgv.ethtoolDriver(c.bins, dev)),
  ]);
  return {
    ethtool: s.code === 0 && !s.timedOut ? parseEthtool(s.stdout) : null,
    driver: d.code === 0 && !d.timedOut ? parseEthtoolDriver(d.stdout) : null,
  };
}

async function build(
  c: NetworkContext,
  link: IpLinkRecord,
  addr: IpAddrRecord | null,
  config: NetworkConfig,
): Promise<NetworkInterface> {
  const { ethtool, driver } = await ethtoolOf(c, link.ifname);
  return buildInterface({ link, addr, ethtool, driver, iface: inetStanza(config, link.ifname) });
}

/** GET /network/interface: the listed interfaces in ifindex order, then the bonds not created (file order). */
export async function listInterfaces(c: NetworkContext): Promise<NetworkInterface[]> {
  const s = await readSnapshot(c);
  const listed = selectInterfaces(s.links, c.settings.list);
  // one pool over all ethtool calls (two per interface)
  const built = await mapLimit(listed, Math.max(1, Math.floor(c.settings.concurrency / 2)), (l) =>
    build(c, l, addrOf(s, l.ifname), s.config),
  );
  // then the bonds the files define and the kernel does not have (state "not created")
  return [...built, ...notCreatedBonds(c, s).map(buildNotCreated)];
}

/** One interface by name (details, and the answer of every change); 404 when not listed. */
export async function describeInterface(c: NetworkContext, name: string): Promise<NetworkInterface> {
  const argv = readArgv.link(c.bins, name);
  const r = await c.system.exec(argv);
  if (r.timedOut) throw commandTimeout(argv, r);
  if (r.code !== 0 && /does not exist/.test(r.stderr)) {
    const bond = notCreatedBond(c, null, await readNetworkConfig(c.system, c.vars), name);
    if (bond) return buildNotCreated(bond);
    throw notFound(`no network interface ${name}`);
  }
  if (r.code !== 0) throw commandFailed(argv, r);
  const link = parseIpLink(r.stdout)[0];
  if (!link || link.ifname !== name) throw new ApiError('bad_gateway', `ip printed no record for ${name}`);
  if (!isListed(link, c.settings.list)) throw notListed(link);
  const [a, config] = await Promise.all([
    c.system.run(readArgv.addr(c.bins, name)),
    readNetworkConfig(c.system, c.vars),
  ]);
  return build(c, link, parseIpAddr(a.stdout)[0] ?? null, config);
}
