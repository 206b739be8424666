/**
 * Bonds on replayed output (this kernel has no bonding module, so there is no system tier for
 * them): bind → list → slaves → unconfigure as one round trip, with the exact argv each step
 * runs and the configuration file after each step; then bind's options, validation, rollback,
 * naming and guards, and slaves/unconfigure on their own.
 *
 * States of the box: BOND is the recorded 802.3ad bond (fixtures/ip/*-bond-8023ad.yaml: bond0
 * over eno1+eno2, 10.20.0.10/24, MTU 9000), built with the real ip 6.1 and a netlink shim;
 * FREE is the same box before bind (bond0 gone, the ports released: no SLAVE flag, no master,
 * own MAC, MTU 1500); ONE_PORT is bond0 after eno2 was released.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { makeTestHost, type TestHost } from '../helpers/host';
import { CONNECTION_HEADER } from '../../handlers/core/route';
import list from '../../handlers/network/routes/interface-list';
import details from '../../handlers/network/routes/interface-details';
import bind from '../../handlers/network/routes/interface-bind';
import slaves from '../../handlers/network/routes/interface-slaves';
import unconfigure from '../../handlers/network/routes/interface-unconfigure';
import {
  changes,
  edit,
  ethtoolAs,
  ETHTOOL,
  fails,
  fx,
  inet,
  IP,
  ipState,
  ok,
  records,
  released,
  without,
  type IpRecord,
} from './network-helpers';
import type { NetworkInterface } from '../../handlers/network/responses';
import { planUnconfigureBond } from '../../handlers/network/plan';
import { parseIpLink } from '../../handlers/tools/ip-link';
import { parseIpAddr } from '../../handlers/network/parse/ip-addr';
import { errorOf } from '../helpers/answers';

const DHCLIENT = '/usr/sbin/dhclient';
const BOND_LINKS = records('ip/link-show-bond-8023ad.yaml');
const BOND_ADDRS = records('ip/addr-show-bond-8023ad.yaml');

function releasedAll(recs: IpRecord[], ...ports: string[]): IpRecord[] {
  let out = recs;
  for (const p of ports) out = edit(out, p, released);
  return out;
}
const FREE = {
  links: releasedAll(without(BOND_LINKS, 'bond0'), 'eno1', 'eno2'),
  addrs: releasedAll(without(BOND_ADDRS, 'bond0'), 'eno1', 'eno2'),
};
const BOND = { links: BOND_LINKS, addrs: BOND_ADDRS };
const ONE_PORT = {
  links: edit(releasedAll(BOND_LINKS, 'eno2'), 'bond0', (r) => {
    (r.linkinfo as { info_data: { ad_info: { num_ports: number } } }).info_data.ad_info.num_ports = 1;
  }),
  addrs: releasedAll(BOND_ADDRS, 'eno2'),
};

const SEED = '# route test seed\nsource /etc/network/interfaces.d/*\n\nauto lo\niface lo inet loopback\n';
const BOND_STANZAS = `
auto bond0
iface bond0 inet static
    address 10.20.0.10
    netmask 255.255.255.0
    mtu 9000
    slaves eno1 eno2
    bond_mode 4
    bond_lacp_rate 1
    bond_miimon 100
    bond_xmit_hash_policy layer3+4
    bond-downdelay 200
    bond-updelay 200

auto eno1
iface eno1 inet manual
    bond-master bond0

auto eno2
iface eno2 inet manual
    bond-master bond0
`;

/** `ethtool -i` of an Intel 10G port and of the bonding driver: constructed, in the format of
 *  ethtool 6.1 (see fixtures/ethtool/veth-eth0-i.yaml); nobody recorded them on real hardware. */
const driverInfo = (driver: string, version: string, fw: string, bus: string) =>
  `driver: ${driver}\nversion: ${version}\nfirmware-version: ${fw}\nexpansion-rom-version: \nbus-info: ${bus}\nsupports-statistics: yes\nsupports-test: no\nsupports-eeprom-access: no\nsupports-register-dump: no\nsupports-priv-flags: no\n`;

let t: TestHost;
let mainFile: string;

/** The box is in `s`: the full reads (decisions) and the dev-scoped ones (answers) agree. */
function boxIs(s: { links: IpRecord[]; addrs: IpRecord[] }) {
  t.replay?.load(ipState(s.links, s.addrs));
}
/** Decisions see `before`; the answer (dev-scoped reads, after the change) sees `after`. */
function change(before: { links: IpRecord[]; addrs: IpRecord[] }, after: { links: IpRecord[]; addrs: IpRecord[] }) {
  t.replay?.load([...ipState(before.links, before.addrs).slice(0, 2), ...ipState(after.links, after.addrs).slice(2)]);
}
const calls = () => changes(t.replay?.calls ?? []);
const events = (kind: string) =>
  (t.host.db.prepare('SELECT data FROM events WHERE kind = ? ORDER BY seq').all(kind) as { data: string }[]).map((e) =>
    JSON.parse(e.data),
  );

beforeAll(async () => {
  t = await makeTestHost({
    routes: [list, details, bind, slaves, unconfigure],
    config: {
      // confirmDefaultS 0: the guard's 409 (the default window is network-confirm.test.ts's)
      settings: { network: { confirmDefaultS: 0 } },
      system: {
        mode: 'replay',
        fixtures: [],
        wrapper: [],
        binaries: { ip: IP, ethtool: ETHTOOL, dhclient: DHCLIENT },
        env: {},
        envAllow: [],
      },
    },
  });
  mainFile = t.config.paths.networkInterfaces;
  t.replay?.load([
    ...['eno1', 'eno2'].flatMap((d) => ethtoolAs(d, 'ethtool/upstream-jc-default2.yaml', 'ethtool/veth-eth0-i.yaml')),
    fx([ETHTOOL, '-i', 'eno1'], driverInfo('ixgbe', '6.1.0-28-amd64', '0x800003df, 1.2074.0', '0000:3b:00.0')),
    fx([ETHTOOL, '-i', 'eno2'], driverInfo('ixgbe', '6.1.0-28-amd64', '0x800003df, 1.2074.0', '0000:3b:00.1')),
    ...ethtoolAs('bond0', 'ethtool/veth-eth0.yaml', 'ethtool/veth-eth0-i.yaml'),
    fx([ETHTOOL, '-i', 'bond0'], driverInfo('bonding', '6.1.0-28-amd64', '2', '')),
  ]);
});
afterAll(() => t.close());

const BIND_ARGV = [
  [
    IP,
    'link',
    'add',
    'name',
    'bond0',
    'type',
    'bond',
    'mode',
    '802.3ad',
    'miimon',
    '100',
    'updelay',
    '200',
    'downdelay',
    '200',
    'lacp_rate',
    'fast',
    'xmit_hash_policy',
    'layer3+4',
  ],
  [IP, 'link', 'set', 'dev', 'eno1', 'down'],
  [IP, '-4', 'addr', 'flush', 'dev', 'eno1'],
  [IP, 'link', 'set', 'dev', 'eno1', 'master', 'bond0'],
  [IP, 'link', 'set', 'dev', 'eno2', 'down'],
  [IP, '-4', 'addr', 'flush', 'dev', 'eno2'],
  [IP, 'link', 'set', 'dev', 'eno2', 'master', 'bond0'],
  [IP, 'addr', 'add', '10.20.0.10/24', 'broadcast', '+', 'dev', 'bond0'],
  [IP, 'link', 'set', 'dev', 'bond0', 'mtu', '9000', 'up'],
];

describe('round trip: bind → list → slaves → unconfigure', () => {
  beforeAll(() => {
    writeFileSync(mainFile, SEED);
  });
  beforeEach(() => {
    if (t.replay) t.replay.calls.length = 0;
  });

  it('bind: creates bond0 with the spec defaults, writes its stanza and the ports, answers the bond', async () => {
    change(FREE, BOND);
    t.replay?.load(BIND_ARGV.map(ok));
    const r = await t.call<NetworkInterface>('POST', '/api/v2/network/interface/bind', {
      body: { isdhcp: false, address: '10.20.0.10', netmask: '255.255.255.0', mtu: 9000, slaves: 'eno1,eno2' },
    });
    expect(r.status, r.text).toBe(200);
    expect(calls()).toEqual(BIND_ARGV);
    expect(readFileSync(mainFile, 'utf8')).toBe(SEED + BOND_STANZAS);
    expect(r.json).toMatchObject({
      link: 'bond0',
      class: 'phys',
      mtu: '9000',
      state: 'up',
      phys: { name: 'bond0', flags: ['BROADCAST', 'MULTICAST', 'MASTER', 'UP', 'LOWER_UP'], mac: '3c:ec:ef:10:20:30' },
      settings: {
        dev: 'bond0',
        driver: { name: 'bonding', version: '6.1.0-28-amd64', fw_version: '2', bus_info: null },
      },
      ipv4: { type: 'static', address: '10.20.0.10/24', brd: '10.20.0.255', scope: 'global' },
      status: 'GOOD',
    });
    // the spec's config object, with its mixed underscore/hyphen names
    expect(r.json.config).toEqual({
      mode: 'static',
      address: '10.20.0.10',
      netmask: '255.255.255.0',
      mtu: '9000',
      slaves: 'eno1 eno2',
      bond_mode: '4',
      bond_lacp_rate: '1',
      bond_miimon: '100',
      bond_xmit_hash_policy: 'layer3+4',
      'bond-downdelay': '200',
      'bond-updelay': '200',
    });
    expect(events('network.bond.created').at(-1)).toEqual({
      device: 'bond0',
      slaves: ['eno1', 'eno2'],
      mode: '802.3ad',
      lacp_rate: 'fast',
      miimon: 100,
      updelay: 200,
      downdelay: 200,
      xmit_hash_policy: 'layer3+4',
      addressing: 'static',
      address: '10.20.0.10/24',
      mtu: 9000,
    });
  });

  it('list: the ports and the bond, all GOOD, the ports configured as bond-master bond0', async () => {
    boxIs(BOND);
    const r = await t.call<NetworkInterface[]>('GET', '/api/v2/network/interface');
    expect(r.status).toBe(200);
    expect(r.json.map((i: { link: string; status: string; state: string }) => [i.link, i.state, i.status])).toEqual([
      ['eno1', 'up', 'GOOD'],
      ['eno2', 'up', 'GOOD'],
      ['bond0', 'up', 'GOOD'],
    ]);
    expect(r.json[0]).toMatchObject({
      phys: { flags: ['BROADCAST', 'MULTICAST', 'SLAVE', 'UP', 'LOWER_UP'], qdisc: 'mq' },
      settings: { dev: 'eno1', speed: 40000, port: 'FIBRE', driver: { name: 'ixgbe', bus_info: '0000:3b:00.0' } },
      config: { mode: 'manual', 'bond-master': 'bond0' },
      ipv4: null,
    });
    expect(r.json[2].config?.slaves).toBe('eno1 eno2');
    const d = await t.call<NetworkInterface[]>('GET', '/api/v2/network/interface/bond0/details');
    expect(d.json[0]).toEqual(r.json[2]);
  });

  it('bind refuses ports that are already enslaved', async () => {
    boxIs(BOND);
    const r = await t.call<NetworkInterface>('POST', '/api/v2/network/interface/bind', {
      body: { isdhcp: true, slaves: 'eno2' },
    });
    expect(r.status).toBe(409);
    expect(errorOf(r).message).toBe('eno2 is already a port of bond0');
    expect(calls()).toEqual([]);
  });

  it("slaves (with the usage example's `dev`): eno2 released at runtime and in the config", async () => {
    change(BOND, ONE_PORT);
    t.replay?.load([
      ok([IP, 'link', 'set', 'dev', 'eno2', 'nomaster']),
      ok([IP, 'link', 'set', 'dev', 'eno2', 'down']),
    ]);
    const r = await t.call<NetworkInterface>('POST', '/api/v2/network/interface/slaves', {
      body: { dev: 'bond0', slaves: 'eno1' },
    });
    expect(r.status, r.text).toBe(200);
    expect(calls()).toEqual([
      [IP, 'link', 'set', 'dev', 'eno2', 'nomaster'],
      [IP, 'link', 'set', 'dev', 'eno2', 'down'],
    ]);
    expect(readFileSync(mainFile, 'utf8')).toBe(
      SEED +
        BOND_STANZAS.replace('slaves eno1 eno2', 'slaves eno1').replace(
          '\nauto eno2\niface eno2 inet manual\n    bond-master bond0\n',
          '',
        ),
    );
    expect(r.json).toMatchObject({ link: 'bond0', config: { slaves: 'eno1' }, status: 'GOOD' });
    expect(events('network.bond.slaves_changed').at(-1)).toEqual({
      device: 'bond0',
      slaves: ['eno1'],
      added: [],
      removed: ['eno2'],
    });
  });

  it('slaves: eno2 added back (down, flushed, enslaved), the file as after bind', async () => {
    change(ONE_PORT, BOND);
    const argv = [
      [IP, 'link', 'set', 'dev', 'eno2', 'down'],
      [IP, '-4', 'addr', 'flush', 'dev', 'eno2'],
      [IP, 'link', 'set', 'dev', 'eno2', 'master', 'bond0'],
    ];
    t.replay?.load(argv.map(ok));
    const r = await t.call<NetworkInterface>('POST', '/api/v2/network/interface/slaves', {
      body: { device: 'bond0', slaves: 'eno1,eno2' },
    });
    expect(r.status, r.text).toBe(200);
    expect(calls()).toEqual(argv);
    expect(readFileSync(mainFile, 'utf8')).toBe(SEED + BOND_STANZAS);
    expect(events('network.bond.slaves_changed').at(-1)).toEqual({
      device: 'bond0',
      slaves: ['eno1', 'eno2'],
      added: ['eno2'],
      removed: [],
    });
  });

  it('unconfigure bond0: down, ports released and down, bond deleted; the file is the seed again', async () => {
    boxIs(BOND);
    const argv = [
      [IP, 'link', 'set', 'dev', 'bond0', 'down'],
      [IP, 'link', 'set', 'dev', 'eno1', 'nomaster'],
      [IP, 'link', 'set', 'dev', 'eno1', 'down'],
      [IP, 'link', 'set', 'dev', 'eno2', 'nomaster'],
      [IP, 'link', 'set', 'dev', 'eno2', 'down'],
      [IP, 'link', 'del', 'dev', 'bond0'],
    ];
    t.replay?.load(argv.map(ok));
    const r = await t.call('POST', '/api/v2/network/interface/bond0/unconfigure', { body: {} });
    expect(r.status, r.text).toBe(200);
    expect(r.json).toEqual({ message: 'bond0 unconfigured and deleted; ports eno1, eno2 released' });
    expect(calls()).toEqual(argv);
    expect(readFileSync(mainFile, 'utf8')).toBe(SEED);
    expect(events('network.interface.unconfigured').at(-1)).toEqual({
      device: 'bond0',
      deleted: true,
      released: ['eno1', 'eno2'],
    });
  });

  it('list afterwards: two free, unconfigured ports', async () => {
    boxIs(FREE);
    const r = await t.call<NetworkInterface[]>('GET', '/api/v2/network/interface');
    expect(r.json.map((i: { link: string; config: unknown; status: string }) => [i.link, i.config, i.status])).toEqual([
      ['eno1', null, 'GOOD'],
      ['eno2', null, 'GOOD'],
    ]);
  });
});

describe('bind', () => {
  beforeEach(() => {
    writeFileSync(mainFile, SEED);
    boxIs(FREE);
    if (t.replay) t.replay.calls.length = 0;
  });

  it('takes mode and hash policy as names or numbers, numbers as strings; dhcp runs the client', async () => {
    change(FREE, BOND);
    const pid = ['-pf', '/run/dhclient.bond0.pid', '-lf', '/var/lib/dhcp/dhclient.bond0.leases'];
    const argv = [
      [
        IP,
        'link',
        'add',
        'name',
        'bond0',
        'type',
        'bond',
        'mode',
        'active-backup',
        'miimon',
        '50',
        'updelay',
        '100',
        'downdelay',
        '0',
        'xmit_hash_policy',
        'layer2+3',
      ],
      ...BIND_ARGV.slice(1, 7),
      [IP, 'link', 'set', 'dev', 'bond0', 'mtu', '9000', 'up'],
      [DHCLIENT, '-4', '-1', ...pid, 'bond0'],
    ];
    t.replay?.load(argv.map(ok));
    const body = {
      isdhcp: 'true',
      slaves: 'eno1, eno2',
      mtu: '9000',
      bond_mode: 'active-backup',
      bond_xmit_hash_policy: 2,
      bond_miimon: '50',
      bond_updelay: 100,
      bond_downdelay: '0',
      bond_lacp_rate: 'slow',
    };
    const r = await t.call<NetworkInterface>('POST', '/api/v2/network/interface/bind', { body });
    expect(r.status, r.text).toBe(200);
    expect(calls()).toEqual(argv);
    // lacp_rate exists only in 802.3ad mode: neither the kernel nor ifenslave take it otherwise
    expect(readFileSync(mainFile, 'utf8')).toBe(
      `${SEED}\nauto bond0\niface bond0 inet dhcp\n    mtu 9000\n    slaves eno1 eno2\n    bond_mode 1\n    bond_miimon 50\n    bond_xmit_hash_policy layer2+3\n    bond-downdelay 0\n    bond-updelay 100\n` +
        '\nauto eno1\niface eno1 inet manual\n    bond-master bond0\n\nauto eno2\niface eno2 inet manual\n    bond-master bond0\n',
    );
  });

  it('names the bond after the first free bondN (devices and stanzas both count)', async () => {
    writeFileSync(mainFile, `${SEED}\niface bond0 inet manual\n`);
    const asBond1 = (recs: IpRecord[]) => recs.map((r) => (r.ifname === 'bond0' ? { ...r, ifname: 'bond1' } : r));
    change(FREE, { links: asBond1(BOND.links), addrs: asBond1(BOND.addrs) });
    t.replay?.load(ethtoolAs('bond1', 'ethtool/veth-eth0.yaml', 'ethtool/veth-eth0-i.yaml'));
    const argv = BIND_ARGV.map((a) => a.map((x) => (x === 'bond0' ? 'bond1' : x)));
    t.replay?.load(argv.map(ok));
    const r = await t.call<NetworkInterface>('POST', '/api/v2/network/interface/bind', {
      body: { isdhcp: false, address: '10.20.0.10/24', mtu: 9000, slaves: 'eno1,eno2' },
    });
    expect(r.status, r.text).toBe(200);
    expect(calls()).toEqual(argv);
    expect(r.json.link).toBe('bond1');
    expect(readFileSync(mainFile, 'utf8')).toContain(
      '\niface bond0 inet manual\n\nauto bond1\niface bond1 inet static\n',
    );
  });

  it('a bond defined only in interfaces.d (not created): listed, its name skipped, its ports refused, slaves 409 (issue 12 item 9)', async () => {
    const file = join(t.config.paths.networkInterfacesD, 'bond0');
    const BOND0 = 'auto bond0\niface bond0 inet dhcp\n    slaves eno1 eno2\n    bond_mode 4\n';
    writeFileSync(mainFile, SEED);
    writeFileSync(file, BOND0);
    try {
      boxIs(FREE);
      const l = await t.call<NetworkInterface[]>('GET', '/api/v2/network/interface');
      expect(l.status, l.text).toBe(200);
      expect(l.json.map((i: NetworkInterface) => [i.link, i.state, i.status])).toEqual([
        ['eno1', 'up', 'GOOD'],
        ['eno2', 'up', 'GOOD'],
        ['bond0', 'not created', 'WARNING'],
      ]);
      const before = calls().length;
      // its ports are taken by its definition: bind refuses them as for a running bond's
      const r = await t.call('POST', '/api/v2/network/interface/bind', {
        body: { isdhcp: true, slaves: 'eno1,eno2' },
      });
      expect([r.status, errorOf(r).message]).toEqual([409, 'eno1 is configured as a port of bond0']);
      // and bond0 cannot be made a port either: it is a bond, not created
      const p = await t.call('POST', '/api/v2/network/interface/bind', { body: { isdhcp: true, slaves: 'bond0' } });
      expect(p.status).toBe(409);
      expect(errorOf(p).message).toMatch(/^bond0 is a bond defined in the interfaces files but not created/);
      const sl = await t.call('POST', '/api/v2/network/interface/slaves', {
        body: { device: 'bond0', slaves: 'eno1' },
      });
      expect(sl.status).toBe(409);
      expect(errorOf(sl).message).toMatch(/^bond0 is a bond defined in the interfaces files but not created/);
      expect(calls().length).toBe(before);
      expect(readFileSync(file, 'utf8')).toBe(BOND0);
      expect(readFileSync(mainFile, 'utf8')).toBe(SEED);

      // ports it does not claim: the new bond is bond1, bond0's name stays its own
      writeFileSync(file, BOND0.replace('slaves eno1 eno2', 'slaves none'));
      const asBond1 = (recs: IpRecord[]) => recs.map((x) => (x.ifname === 'bond0' ? { ...x, ifname: 'bond1' } : x));
      change(FREE, { links: asBond1(BOND.links), addrs: asBond1(BOND.addrs) });
      t.replay?.load(ethtoolAs('bond1', 'ethtool/veth-eth0.yaml', 'ethtool/veth-eth0-i.yaml'));
      const argv = BIND_ARGV.map((a) => a.map((x) => (x === 'bond0' ? 'bond1' : x)));
      t.replay?.load(argv.map(ok));
      const b = await t.call<NetworkInterface>('POST', '/api/v2/network/interface/bind', {
        body: { isdhcp: false, address: '10.20.0.10/24', mtu: 9000, slaves: 'eno1,eno2' },
      });
      expect(b.status, b.text).toBe(200);
      expect(b.json.link).toBe('bond1');
      expect(calls().slice(before)).toEqual(argv);
      expect(readdirSync(t.config.paths.networkInterfacesD)).toEqual(['bond0']);
    } finally {
      rmSync(file, { force: true });
    }
  });

  it('no bonding kernel module: 502 naming it (modprobe bonding); bond add runs before any file is written, nothing changed (issue 12 item 11)', async () => {
    const created = events('network.bond.created').length;
    // the backup a write of the main file leaves: absent after the request = the file was never written
    const backup = join(t.config.stateDir, 'backups', `${mainFile}.prev`);
    rmSync(backup, { force: true });
    t.replay?.load([fails(BIND_ARGV[0] ?? [], 'Error: Unknown device type.\n')]);
    const r = await t.call('POST', '/api/v2/network/interface/bind', {
      body: { isdhcp: false, address: '10.20.0.10/24', mtu: 9000, slaves: 'eno1,eno2' },
    });
    expect(r.status).toBe(502);
    const err = (r.json as { error: { code: string; message: string; details: { reason: string } } }).error;
    expect([err.code, err.message, err.details.reason]).toEqual([
      'command_failed',
      'the bonding kernel module is not available (modprobe bonding); nothing was changed',
      'bonding-module-missing',
    ]);
    expect(calls()).toEqual([BIND_ARGV[0]]);
    expect(readFileSync(mainFile, 'utf8')).toBe(SEED);
    expect(existsSync(backup)).toBe(false);
    expect(events('network.bond.created').length).toBe(created);
  });

  it('a failing enslave undoes everything before it, newest first, and restores the file', async () => {
    const created = events('network.bond.created').length;
    t.replay?.load([...BIND_ARGV.slice(0, 6).map(ok), fails(BIND_ARGV[6] ?? [], 'Error: Device or resource busy\n')]);
    const undo = [
      [IP, 'link', 'set', 'dev', 'eno2', 'mtu', '1500', 'up'],
      [IP, 'link', 'set', 'dev', 'eno1', 'nomaster'],
      [IP, 'link', 'set', 'dev', 'eno1', 'mtu', '1500', 'up'],
      [IP, 'link', 'del', 'dev', 'bond0'],
    ];
    t.replay?.load(undo.map(ok));
    const r = await t.call<NetworkInterface>('POST', '/api/v2/network/interface/bind', {
      body: { isdhcp: false, address: '10.20.0.10/24', slaves: 'eno1,eno2' },
    });
    expect(r.status).toBe(502);
    expect(errorOf(r).message).toBe(
      'ip failed (exit 2): Error: Device or resource busy; the previous configuration was restored',
    );
    expect(errorOf(r).details?.command).toEqual(BIND_ARGV[6]);
    expect(calls()).toEqual([...BIND_ARGV.slice(0, 7), ...undo]);
    expect(readFileSync(mainFile, 'utf8')).toBe(SEED);
    expect(events('network.bond.created')).toHaveLength(created);
  });

  const invalid: [string, Record<string, unknown>, string, RegExp][] = [
    ['no slaves', { isdhcp: true, slaves: ' , ' }, 'body.slaves', /at least one/],
    ['a port twice', { isdhcp: true, slaves: 'eno1,eno1' }, 'body.slaves', /twice/],
    ['a bad port name', { isdhcp: true, slaves: 'eno1,en/o2' }, 'body.slaves', /not a valid interface name/],
    ['an unknown mode', { isdhcp: true, slaves: 'eno1', bond_mode: 7 }, 'body.bond_mode', /0-6 or one of/],
    [
      'an unknown hash policy',
      { isdhcp: true, slaves: 'eno1', bond_xmit_hash_policy: 'layer9' },
      'body.bond_xmit_hash_policy',
      /0-5 or one of/,
    ],
    [
      'a lacp rate that is neither',
      { isdhcp: true, slaves: 'eno1', bond_lacp_rate: 'medium' },
      'body.bond_lacp_rate',
      /slow, fast/,
    ],
    [
      'updelay not a multiple of miimon',
      { isdhcp: true, slaves: 'eno1', bond_updelay: 150 },
      'body.bond_updelay',
      /multiple of bond_miimon/,
    ],
    ['mtu out of range', { isdhcp: true, slaves: 'eno1', mtu: 9600 }, 'body.mtu', /at most 9216/],
    ['static without address', { isdhcp: false, slaves: 'eno1' }, 'body.address', /required/],
    ['an unknown parameter', { isdhcp: true, slaves: 'eno1', device: 'bond7' }, 'body', /device/],
  ];
  for (const [what, body, path, message] of invalid) {
    it(`400: ${what}`, async () => {
      const r = await t.call<NetworkInterface>('POST', '/api/v2/network/interface/bind', { body });
      expect(r.status).toBe(400);
      const issue = errorOf(r).issues!.find((i: { path: string }) => i.path === path);
      expect(issue?.message ?? errorOf(r).message).toMatch(message);
      expect(calls()).toEqual([]);
    });
  }

  it('404 for a port that does not exist', async () => {
    const r = await t.call<NetworkInterface>('POST', '/api/v2/network/interface/bind', {
      body: { isdhcp: true, slaves: 'eno1,eno9' },
    });
    expect(r.status).toBe(404);
    expect(errorOf(r).message).toBe('no network interface eno9');
  });

  it("refuses a port carrying the connection, or the box's only address, unless forced", async () => {
    boxIs({
      links: FREE.links,
      addrs: edit(FREE.addrs, 'eno2', (r) =>
        (r.addr_info as unknown[]).push(inet('10.0.0.5', 24, '10.0.0.255', 'eno2')),
      ),
    });
    const via = { [CONNECTION_HEADER]: JSON.stringify({ localAddress: '10.0.0.5' }) };
    const guarded = await t.call<NetworkInterface>('POST', '/api/v2/network/interface/bind', {
      body: { isdhcp: true, slaves: 'eno1,eno2' },
      headers: via,
    });
    expect(guarded.status).toBe(409);
    expect(errorOf(guarded).message).toMatch(
      /^refusing to enslave eno2: it carries 10\.0\.0\.5, the address this request came in on/,
    );
    const last = await t.call<NetworkInterface>('POST', '/api/v2/network/interface/bind', {
      body: { isdhcp: true, slaves: 'eno1,eno2' },
    });
    expect(last.status).toBe(409);
    expect(errorOf(last).message).toBe(
      'refusing to enslave eno2: it carries 10.0.0.5, the only global IPv4 address of this box; send "confirmWithin": <seconds> to try it with an automatic rollback, or "force": true to do it without one',
    );
    expect(calls()).toEqual([]);
    expect(readFileSync(mainFile, 'utf8')).toBe(SEED);
  });

  it('403 without network:manage', async () => {
    const r = await t.call<NetworkInterface>('POST', '/api/v2/network/interface/bind', {
      body: { isdhcp: true, slaves: 'eno1' },
      token: await t.token(['network:read']),
    });
    expect(r.status).toBe(403);
  });
});

describe('slaves and unconfigure, on their own', () => {
  beforeEach(() => {
    writeFileSync(mainFile, SEED + BOND_STANZAS);
    boxIs(BOND);
    if (t.replay) t.replay.calls.length = 0;
  });

  it('slaves: 404 unknown bond, 409 not a bond, 400 for device and dev that differ or neither', async () => {
    expect(
      (
        await t.call<NetworkInterface>('POST', '/api/v2/network/interface/slaves', {
          body: { device: 'bond7', slaves: 'eno1' },
        })
      ).status,
    ).toBe(404);
    const notBond = await t.call<NetworkInterface>('POST', '/api/v2/network/interface/slaves', {
      body: { device: 'eno1', slaves: 'eno2' },
    });
    expect(notBond.status).toBe(409);
    expect(errorOf(notBond).message).toBe('eno1 is not a bond');
    expect(
      (
        await t.call<NetworkInterface>('POST', '/api/v2/network/interface/slaves', {
          body: { device: 'bond0', dev: 'bond1', slaves: 'eno1' },
        })
      ).status,
    ).toBe(400);
    expect(
      (await t.call<NetworkInterface>('POST', '/api/v2/network/interface/slaves', { body: { slaves: 'eno1' } })).status,
    ).toBe(400);
    expect(calls()).toEqual([]);
  });

  it('unconfigure a port: out of the bond at runtime and out of its slaves list', async () => {
    const argv = [
      [IP, 'link', 'set', 'dev', 'eno2', 'nomaster'],
      [IP, '-4', 'addr', 'flush', 'dev', 'eno2'],
      // the port had the bond's 9000: back to the default (issue 12 item 10)
      [IP, 'link', 'set', 'dev', 'eno2', 'mtu', '1500', 'down'],
    ];
    t.replay?.load(argv.map(ok));
    const r = await t.call('POST', '/api/v2/network/interface/eno2/unconfigure', { body: {} });
    expect(r.status, r.text).toBe(200);
    expect(r.json).toEqual({ message: 'eno2 unconfigured and taken out of bond0' });
    expect(calls()).toEqual(argv);
    expect(readFileSync(mainFile, 'utf8')).toBe(
      SEED +
        BOND_STANZAS.replace('slaves eno1 eno2', 'slaves eno1').replace(
          '\nauto eno2\niface eno2 inet manual\n    bond-master bond0\n',
          '',
        ),
    );
  });

  it('unconfigure a port that only the configuration puts in the bond: out of its slaves list too', async () => {
    boxIs(FREE);
    const argv = [
      [IP, '-4', 'addr', 'flush', 'dev', 'eno2'],
      [IP, 'link', 'set', 'dev', 'eno2', 'down'],
    ];
    t.replay?.load(argv.map(ok));
    const r = await t.call('POST', '/api/v2/network/interface/eno2/unconfigure', { body: {} });
    expect(r.status, r.text).toBe(200);
    expect(r.json).toEqual({ message: 'eno2 unconfigured and taken out of bond0' });
    expect(calls()).toEqual(argv);
    expect(readFileSync(mainFile, 'utf8')).toBe(
      SEED +
        BOND_STANZAS.replace('slaves eno1 eno2', 'slaves eno1').replace(
          '\nauto eno2\niface eno2 inet manual\n    bond-master bond0\n',
          '',
        ),
    );
  });

  it('unconfigure the bond carrying the connection is refused unless forced', async () => {
    const via = { [CONNECTION_HEADER]: JSON.stringify({ localAddress: '10.20.0.10' }) };
    const r = await t.call('POST', '/api/v2/network/interface/bond0/unconfigure', { body: {}, headers: via });
    expect(r.status).toBe(409);
    expect(errorOf(r).details).toEqual({ device: 'bond0', address: '10.20.0.10', action: 'unconfigure' });
    expect(calls()).toEqual([]);
  });
});

describe('unconfigure of a bond survives a kill right after the delete (issue 11 item 5)', () => {
  it("the delete step's undo recreates bond0 with its kernel parameters, MTU and address (used by start-up recovery)", () => {
    const link = parseIpLink(JSON.stringify(BOND_LINKS)).find((l) => l.ifname === 'bond0');
    const addr = parseIpAddr(JSON.stringify(BOND_ADDRS)).find((a) => a.ifname === 'bond0') ?? null;
    if (!link) throw new Error('no bond0 in the fixture');
    const steps = planUnconfigureBond({ ip: IP, ethtool: ETHTOOL }, { link, addr }, ['eno1', 'eno2'], false);
    expect(steps.at(-1)).toEqual({
      argv: [IP, 'link', 'del', 'dev', 'bond0'],
      undo: [
        [IP, 'link', 'add', 'name', 'bond0', 'type', 'bond', ...BIND_ARGV[0].slice(7)],
        [IP, 'link', 'set', 'dev', 'bond0', 'mtu', '9000'],
        [IP, 'addr', 'add', '10.20.0.10/24', 'broadcast', '10.20.0.255', 'dev', 'bond0'],
      ],
    });
    // recovery runs undo newest first: bond0 back, then its ports re-enslaved, then it is up
    expect(steps.slice(0, -1).map((st) => st.undo)).toEqual([
      [[IP, 'link', 'set', 'dev', 'bond0', 'up']],
      [[IP, 'link', 'set', 'dev', 'eno1', 'master', 'bond0']],
      [],
      [[IP, 'link', 'set', 'dev', 'eno2', 'master', 'bond0']],
      [],
    ]);
  });
});
