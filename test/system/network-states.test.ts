/**
 * Issue 12 items 9-11 against the real kernel, in a private network namespace (system tier):
 * the routes through the HTTP contract (makeTestHost → route → SYSTEM → live back end, every
 * command prefixed with `ip netns exec <ns>`), files under each test host's private root.
 *
 *  - item 9: a veth the default listing rule hides answers "eth1 is a veth, not listed (see
 *    settings.network.list)"; a bond defined only in interfaces.d (no kernel device) is listed
 *    with state "not created", bind refuses its ports and unconfigure removes its file;
 *  - item 10: unconfigure of a bond that exists nowhere writes nothing (directory listing and
 *    bytes compared); an interface already unconfigured answers 200 with no event and no
 *    change; unconfigure puts the runtime MTU back to 1500 (seen with `ip link`);
 *  - item 11: bind on this kernel, which has no bonding module (`ip link add x type bond` says
 *    "Unknown device type"): 502 naming the module, and the files and `ip` state as before.
 *    On a kernel that has the module, the host's `ip` is a wrapper script that answers
 *    `type bond` as iproute2 does without it (the test name says which of the two ran).
 *
 * Namespace (names prefixed `net`): veths eth1 (up, unconfigured, peer 10.9.5.1/24) and eth2
 * (admin down, no address, unconfigured). Requires root, ip and ethtool; never skips.
 */
import { chmodSync, existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backendFor } from '../../runtime/host';
import { defaultConfig, mergeConfig } from '../../runtime/config';
import list from '../../handlers/network/routes/interface-list';
import details from '../../handlers/network/routes/interface-details';
import configure from '../../handlers/network/routes/interface-configure';
import update from '../../handlers/network/routes/interface-update';
import bind from '../../handlers/network/routes/interface-bind';
import unconfigure from '../../handlers/network/routes/interface-unconfigure';
import type { NetworkInterface } from '../../handlers/network/responses';
import { makeTestHost, type TestHost } from '../helpers/host';
import { errorOf } from '../helpers/answers';
import { privateDir } from '../helpers/tmp';
import { createNetns, ETHTOOL, IP, requireTool, type Netns } from './helpers/netns';

let ns: Netns;
/** listing rule showing veths and bonds (the namespace's "NICs" are veths) */
let t: TestHost;
/** the default listing rule: veths are hidden */
let plain: TestHost;
/** the kernel has the bonding module (then item 11 runs through the wrapper script) */
let kernelHasBonding = false;

const SEED_MAIN =
  '# seeded by the system test\nsource /etc/network/interfaces.d/*\n\nauto lo\niface lo inet loopback\n';
const BOND0 =
  'auto bond0\niface bond0 inet static\n    address 10.9.50.10\n    netmask 255.255.255.0\n    mtu 9000\n    slaves eth1 eth2\n    bond_mode 4\n';
const PORT1 = 'auto eth1\niface eth1 inet manual\n    bond-master bond0\n';

const dirOf = () => t.config.paths.networkInterfacesD;
const mainOf = () => t.config.paths.networkInterfaces;

/** Every file of the configuration (main + interfaces.d, hidden ones too) with its bytes. */
function configFiles(): Record<string, string> {
  const out: Record<string, string> = { [mainOf()]: readFileSync(mainOf(), 'utf8') };
  for (const n of readdirSync(dirOf()).sort()) out[join(dirOf(), n)] = readFileSync(join(dirOf(), n), 'utf8');
  return out;
}

const networkEvents = () =>
  (
    t.host.db.prepare("SELECT kind, data FROM events WHERE kind LIKE 'network.%' ORDER BY seq").all() as {
      kind: string;
      data: string;
    }[]
  ).map((e) => ({ kind: e.kind, data: JSON.parse(e.data) as unknown }));

interface RealLink {
  ifname: string;
  flags: string[];
  mtu: number;
  master?: string;
  addr_info: { family: string; local: string; prefixlen: number }[];
}
/**
 * The namespace's links and addresses as `ip -j addr` prints them, less the kernel's own timing:
 * a new link-local address is `tentative` until duplicate address detection ends (about a second),
 * so two reads around a change that did nothing may still differ there.
 */
async function realLinks(): Promise<RealLink[]> {
  const links = JSON.parse((await ns.run([IP, '-j', 'addr', 'show'])).stdout) as RealLink[];
  for (const l of links) for (const a of l.addr_info) delete (a as { tentative?: boolean }).tentative;
  return links;
}
async function real(dev: string): Promise<RealLink> {
  const r = (await realLinks()).find((l) => l.ifname === dev);
  if (!r) throw new Error(`no ${dev} in the namespace`);
  return r;
}
const v4 = (l: RealLink) => l.addr_info.filter((a) => a.family === 'inet').map((a) => `${a.local}/${a.prefixlen}`);

beforeAll(async () => {
  requireTool(IP, 'iproute2');
  requireTool(ETHTOOL, 'ethtool');
  expect(process.getuid?.(), 'system tests run as root').toBe(0);
  ns = await createNetns({
    name: 'net-states',
    veths: [
      { name: 'eth1', peer: 'peer1', peerAddress: '10.9.5.1/24' },
      { name: 'eth2', peer: 'peer2', up: false },
    ],
  });
  // item 11 needs a kernel without the bonding module; this machine's has none. Probe it.
  const probe = await ns.exec([IP, 'link', 'add', 'name', 'netprobe0', 'type', 'bond']);
  kernelHasBonding = probe.code === 0;
  if (kernelHasBonding) await ns.run([IP, 'link', 'del', 'dev', 'netprobe0']);
  else expect(probe.stderr).toContain('Unknown device type');
  const binaries: Record<string, string> = {};
  if (kernelHasBonding) {
    // iproute2's own answer on a kernel without the module, for `type bond` only
    const dir = privateDir('net-states-bin');
    const wrapper = join(dir, 'ip');
    writeFileSync(
      wrapper,
      `#!/bin/sh\nprev=\nfor a in "$@"; do\n  if [ "$prev" = type ] && [ "$a" = bond ]; then echo 'Error: Unknown device type.' >&2; exit 2; fi\n  prev=$a\ndone\nexec ${IP} "$@"\n`,
    );
    chmodSync(wrapper, 0o755);
    binaries.ip = wrapper;
  }
  const base = defaultConfig();
  // the production construction path: a live back end whose every command is prefixed
  const system = {
    ...base.system,
    mode: 'live' as const,
    wrapper: [IP, 'netns', 'exec', ns.name],
    binaries: { ...base.system.binaries, ...binaries },
  };
  const live = () => backendFor(mergeConfig(base, { system }));
  t = await makeTestHost({
    routes: [list, details, configure, update, bind, unconfigure],
    backend: live(),
    config: { system, settings: { network: { list: { kinds: ['bond', 'veth'] } } } },
  });
  plain = await makeTestHost({ routes: [list, details, configure, update, unconfigure], backend: live() });
  for (const h of [t, plain]) writeFileSync(h.config.paths.networkInterfaces, SEED_MAIN);
});

afterAll(async () => {
  await t?.close();
  await plain?.close();
  await ns?.cleanup();
});

describe('item 9: hidden devices and bonds defined only in the files', () => {
  it('default listing rule: a veth is not listed; details, configure, update and unconfigure say why (404)', async () => {
    const l = await plain.call<NetworkInterface[]>('GET', '/api/v2/network/interface');
    expect(l.status, l.text).toBe(200);
    expect(l.json).toEqual([]);
    const why = 'eth1 is a veth, not listed (see settings.network.list)';
    const d = await plain.call('GET', '/api/v2/network/interface/eth1/details');
    expect([d.status, errorOf(d).message, errorOf(d).details]).toEqual([404, why, { device: 'eth1', kind: 'veth' }]);
    const c = await plain.call('POST', '/api/v2/network/interface/configure', {
      body: { device: 'eth1', isdhcp: false, address: '10.9.5.9/24' },
    });
    expect([c.status, errorOf(c).message]).toEqual([404, why]);
    const u = await plain.call('POST', '/api/v2/network/interface/eth1/update', { body: { state: 'down' } });
    expect([u.status, errorOf(u).message]).toEqual([404, why]);
    const x = await plain.call('POST', '/api/v2/network/interface/eth1/unconfigure', { body: {} });
    expect([x.status, errorOf(x).message]).toEqual([404, why]);
    // a device that does not exist at all keeps the plain message
    const n = await plain.call('GET', '/api/v2/network/interface/nosuch0/details');
    expect([n.status, errorOf(n).message]).toEqual([404, 'no network interface nosuch0']);
    // nothing was changed: eth1 is as the harness made it
    expect(await real('eth1')).toMatchObject({ flags: ['BROADCAST', 'MULTICAST', 'UP', 'LOWER_UP'], mtu: 1500 });
    expect(v4(await real('eth1'))).toEqual([]);
  });

  it('a bond only in interfaces.d (no kernel device) is listed and detailed as "not created"', async () => {
    writeFileSync(join(dirOf(), 'bond0'), BOND0);
    expect((await ns.exec([IP, 'link', 'show', 'dev', 'bond0'])).code).not.toBe(0);
    const expected = {
      link: 'bond0',
      class: 'phys',
      mtu: '9000',
      state: 'not created',
      phys: null,
      settings: null,
      config: {
        mode: 'static',
        address: '10.9.50.10',
        netmask: '255.255.255.0',
        mtu: '9000',
        slaves: 'eth1 eth2',
        bond_mode: '4',
      },
      ipv4: null,
      status: 'WARNING',
    };
    const l = await t.call<NetworkInterface[]>('GET', '/api/v2/network/interface');
    expect(l.status, l.text).toBe(200);
    expect(l.json.map((i: NetworkInterface) => [i.link, i.state])).toEqual([
      ['eth1', 'up'],
      ['eth2', 'down'],
      ['bond0', 'not created'],
    ]);
    expect(l.json[2]).toEqual(expected);
    const d = await t.call<NetworkInterface[]>('GET', '/api/v2/network/interface/bond0/details');
    expect([d.status, d.json]).toEqual([200, [expected]]);
  });

  it('bind refuses the ports it claims; configure of it is 409 "not created"; nothing is run or written', async () => {
    const files = configFiles();
    const links = await realLinks();
    const b = await t.call('POST', '/api/v2/network/interface/bind', { body: { isdhcp: true, slaves: 'eth2' } });
    expect([b.status, errorOf(b).message]).toEqual([409, 'eth2 is configured as a port of bond0']);
    const c = await t.call('POST', '/api/v2/network/interface/configure', {
      body: { device: 'bond0', isdhcp: false, address: '10.9.50.11/24' },
    });
    expect(c.status).toBe(409);
    expect(errorOf(c).message).toMatch(/^bond0 is a bond defined in the interfaces files but not created/);
    expect(configFiles()).toEqual(files);
    expect(await realLinks()).toEqual(links);
  });

  it('unconfigure removes the definition and its port stanza: the file it had alone is gone, not left empty', async () => {
    writeFileSync(mainOf(), `${SEED_MAIN}\n${PORT1}`);
    const before = networkEvents().length;
    const r = await t.call('POST', '/api/v2/network/interface/bond0/unconfigure', { body: {} });
    expect(r.status, r.text).toBe(200);
    expect(r.json).toEqual({ message: "bond0 was not created; its configuration and its ports' (eth1) were removed" });
    expect(readdirSync(dirOf())).toEqual([]);
    expect(readFileSync(mainOf(), 'utf8')).toBe(SEED_MAIN);
    expect(networkEvents().slice(before)).toEqual([
      { kind: 'network.interface.unconfigured', data: { device: 'bond0' } },
    ]);
    const l = await t.call<NetworkInterface[]>('GET', '/api/v2/network/interface');
    expect(l.json.map((i: NetworkInterface) => i.link)).toEqual(['eth1', 'eth2']);
  });
});

describe('item 10: unconfigure writes nothing when there is nothing to remove, and resets the MTU', () => {
  it('a bond that exists nowhere: 404 as for any unknown name; no file created or changed (listing and bytes)', async () => {
    writeFileSync(join(dirOf(), 'eth9'), 'iface eth9 inet manual\n');
    const files = configFiles();
    const before = networkEvents().length;
    for (const name of ['bond0', 'bond7']) {
      const r = await t.call('POST', `/api/v2/network/interface/${name}/unconfigure`, { body: {} });
      expect([r.status, errorOf(r).message]).toEqual([404, `no network interface ${name}`]);
    }
    expect(readdirSync(dirOf())).toEqual(['eth9']);
    expect(configFiles()).toEqual(files);
    expect(existsSync(join(dirOf(), 'bond0'))).toBe(false);
    expect(networkEvents().length).toBe(before);
  });

  it('eth2, already unconfigured (down, no address, no stanza): 200 "already unconfigured", no event, no change', async () => {
    const files = configFiles();
    const eth2 = await real('eth2');
    expect(eth2.flags).not.toContain('UP');
    const before = networkEvents().length;
    const r = await t.call('POST', '/api/v2/network/interface/eth2/unconfigure', { body: {} });
    expect([r.status, r.json]).toEqual([200, { message: 'eth2 is already unconfigured' }]);
    expect(networkEvents().length).toBe(before);
    expect(configFiles()).toEqual(files);
    expect(await real('eth2')).toEqual(eth2);
  });

  it('unconfigure puts the MTU back to 1500 (ip link), so a later configure without mtu has 1500', async () => {
    const c = await t.call<NetworkInterface>('POST', '/api/v2/network/interface/configure', {
      body: { device: 'eth1', isdhcp: false, address: '10.9.5.7/24', mtu: 9000 },
    });
    expect(c.status, c.text).toBe(200);
    expect((await real('eth1')).mtu).toBe(9000);
    const before = networkEvents().length;
    const u = await t.call('POST', '/api/v2/network/interface/eth1/unconfigure', { body: {} });
    expect([u.status, u.json]).toEqual([200, { message: 'eth1 unconfigured' }]);
    const after = await real('eth1');
    expect([after.mtu, after.flags.includes('UP'), v4(after)]).toEqual([1500, false, []]);
    expect(networkEvents().slice(before)).toEqual([
      { kind: 'network.interface.unconfigured', data: { device: 'eth1' } },
    ]);
    // a second unconfigure: nothing left, no event
    const again = await t.call('POST', '/api/v2/network/interface/eth1/unconfigure', { body: {} });
    expect([again.status, again.json]).toEqual([200, { message: 'eth1 is already unconfigured' }]);
    expect(networkEvents().length).toBe(before + 1);

    const c2 = await t.call<NetworkInterface>('POST', '/api/v2/network/interface/configure', {
      body: { device: 'eth1', isdhcp: false, address: '10.9.5.7/24' },
    });
    expect(c2.status, c2.text).toBe(200);
    expect([c2.json.mtu, c2.json.config?.mtu]).toEqual(['1500', undefined]);
    expect((await real('eth1')).mtu).toBe(1500);
    expect(readFileSync(mainOf(), 'utf8')).toBe(
      `${SEED_MAIN}\nauto eth1\niface eth1 inet static\n    address 10.9.5.7\n    netmask 255.255.255.0\n`,
    );
  });
});

describe('item 11: bind without the bonding kernel module', () => {
  it('502 "the bonding kernel module is not available (modprobe bonding)"; files and ip state as before', async () => {
    // say which kernel it ran on: the real missing module, or the wrapper standing in for it
    console.log(
      `network item 11: ${kernelHasBonding ? 'the kernel has bonding: ip wrapper answers type bond' : 'no bonding module: the real kernel answered'}`,
    );
    const files = configFiles();
    const links = await realLinks();
    const before = networkEvents().length;
    const r = await t.call('POST', '/api/v2/network/interface/bind', {
      // force: eth1 carries the namespace's only global address (the last-address guard)
      body: { isdhcp: false, address: '10.9.51.10/24', slaves: 'eth1,eth2', force: true },
    });
    expect(r.status, r.text).toBe(502);
    const e = errorOf(r);
    expect([e.code, e.message, e.details?.reason]).toEqual([
      'command_failed',
      'the bonding kernel module is not available (modprobe bonding); nothing was changed',
      'bonding-module-missing',
    ]);
    expect(e.details?.command).toEqual([
      kernelHasBonding ? (t.config.system.binaries.ip ?? IP) : IP,
      ...'link add name bond0 type bond mode 802.3ad miimon 100 updelay 200 downdelay 200 lacp_rate fast xmit_hash_policy layer3+4'.split(
        ' ',
      ),
    ]);
    expect(configFiles()).toEqual(files);
    expect(await realLinks()).toEqual(links);
    expect((await realLinks()).map((l) => l.ifname)).not.toContain('bond0');
    expect(networkEvents().length).toBe(before);
  });
});
