/**
 * Replayed command output for the network route tests, taken from the recorded fixtures in
 * fixtures/ip and fixtures/ethtool. Where a test needs a state nobody recorded (the box before
 * a bond existed, an interface after an address was added), it is derived from a recording by
 * an edit of its parsed JSON that is spelled out here, then printed the way iproute2 prints
 * it (compact JSON on one line), so the parsers see the same text shape as from the tool.
 */
import { join } from 'node:path';
import { readFixture, type Fixture } from '../../runtime/system/fixture-file';
import { repo } from '../helpers/host';

export const IP = '/usr/sbin/ip';
export const ETHTOOL = '/usr/sbin/ethtool';

export type Json = Record<string, unknown>;
export type IpRecord = Json & { ifname: string };

export function recorded(rel: string): Fixture {
  return readFixture(join(repo, 'fixtures', rel));
}

export function records(rel: string): IpRecord[] {
  return JSON.parse(recorded(rel).stdout) as IpRecord[];
}

const clone = <T>(v: T): T => structuredClone(v);

export function fx(argv: string[], stdout: string, o: Partial<Fixture> = {}): Fixture {
  return { source: 'derived in test/routes/network-helpers.ts', argv, code: 0, stdout, stderr: '', ...o };
}

/** A command that succeeds silently (ip link set, ip addr add, ...). */
export const ok = (argv: string[]) => fx(argv, '');
export const fails = (argv: string[], stderr: string, code = 2) => fx(argv, '', { code, stderr });

const print = (recs: Json[]) => `${JSON.stringify(recs)}\n`;

/**
 * Everything the routes read for one state of the box: the full `ip -j -d link show` and
 * `ip -j addr show`, and the `dev X` form of both for every interface (what iproute2 prints
 * for `dev X` is the same record alone in the array).
 */
export function ipState(links: IpRecord[], addrs: IpRecord[]): Fixture[] {
  const out = [fx([IP, '-j', '-d', 'link', 'show'], print(links)), fx([IP, '-j', 'addr', 'show'], print(addrs))];
  for (const l of links) out.push(fx([IP, '-j', '-d', 'link', 'show', 'dev', l.ifname], print([l])));
  for (const a of addrs) out.push(fx([IP, '-j', 'addr', 'show', 'dev', a.ifname], print([a])));
  return out;
}

/** `ethtool X` / `ethtool -i X` answered with another device's recorded output, renamed. */
export function ethtoolAs(dev: string, settings: string, driver: string): Fixture[] {
  const s = recorded(settings);
  const d = recorded(driver);
  return [
    { ...s, argv: [ETHTOOL, dev], stdout: s.stdout.replace(/^Settings for \S+:/, `Settings for ${dev}:`) },
    { ...d, argv: [ETHTOOL, '-i', dev] },
  ];
}

export function edit(recs: IpRecord[], name: string, fn: (r: IpRecord) => void): IpRecord[] {
  const out = clone(recs);
  const r = out.find((x) => x.ifname === name);
  if (!r) throw new Error(`no ${name} in the records`);
  fn(r);
  return out;
}

export const without = (recs: IpRecord[], ...names: string[]) => clone(recs).filter((r) => !names.includes(r.ifname));

/** An IPv4 address as `ip -j addr` prints a permanent one. */
export function inet(local: string, prefixlen: number, broadcast: string, label: string): Json {
  return {
    family: 'inet',
    local,
    prefixlen,
    broadcast,
    scope: 'global',
    label,
    valid_life_time: 4294967295,
    preferred_life_time: 4294967295,
  };
}

/**
 * A bond port as it is once released (or before it was ever enslaved): no SLAVE flag, no
 * master, no slave linkinfo, its own (permanent) MAC back, MTU 1500. Works on link and addr
 * records alike.
 */
export function released(r: IpRecord): void {
  r.flags = (r.flags as string[]).filter((f) => f !== 'SLAVE');
  delete r.master;
  const info = r.linkinfo as { info_slave_data?: { perm_hwaddr?: string } } | undefined;
  if (info?.info_slave_data?.perm_hwaddr) r.address = info.info_slave_data.perm_hwaddr;
  delete r.linkinfo;
  r.mtu = 1500;
}

/** Calls that change something (everything but the reads of ip -j and ethtool). */
export function changes(calls: { argv: string[] }[]): string[][] {
  return calls.map((c) => c.argv).filter((a) => !(a[0] === ETHTOOL || (a[0] === IP && a[1] === '-j')));
}
