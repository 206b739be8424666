/**
 * The network interface routes on replayed output (route tier): the box recorded in a private
 * namespace by test/tools/network/record-fixtures.ts (veths eth0..eth4, bridges, a tap; the
 * listing rule set to show veths), with config files under the test host's private root.
 * Asserts responses, the exact argv each change runs, the files written, rollback, the
 * lockout guard, validation and events. Bonds: network-bond.test.ts.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { makeTestHost, type TestHost } from '../helpers/host';
import { ReplayBackend } from '../../runtime/system/replay';
import type { CommandBackend, ExecOptions, ExecResult } from '../../runtime/system/types';
import { CONNECTION_HEADER } from '../../handlers/core/route';
import list from '../../handlers/network/routes/interface-list';
import details from '../../handlers/network/routes/interface-details';
import configure from '../../handlers/network/routes/interface-configure';
import update from '../../handlers/network/routes/interface-update';
import unconfigure from '../../handlers/network/routes/interface-unconfigure';
import { networkInterface, type NetworkInterface } from '../../handlers/network/responses';
import {
  changes,
  edit,
  ethtoolAs,
  fails,
  inet,
  IP,
  ipState,
  ok,
  recorded,
  records,
  type IpRecord,
} from './network-helpers';
import { errorOf, detail } from '../helpers/answers';

const DHCLIENT = '/usr/sbin/dhclient';
const LINKS = records('ip/link-show-netns.yaml');
const ADDRS = records('ip/addr-show-netns.yaml');

const SEED_MAIN = `# /etc/network/interfaces (route test seed)
source /etc/network/interfaces.d/*

auto lo
iface lo inet loopback

auto eth0
iface eth0 inet static
    address 192.0.2.10
    netmask 255.255.255.0

auto eth2
iface eth2 inet static
    address 198.51.100.7/24

allow-hotplug eth4
iface eth4 inet dhcp

iface eth9 inet manual
`;
const SEED_ETH3 = 'iface eth3 inet static\n    address 203.0.113.5\n    netmask 255.255.255.0\n';

/** The replay back end, yielding to the event loop before it answers, counting how many commands were in flight at once. */
class Slow implements CommandBackend {
  inFlight = 0;
  maxInFlight = 0;
  constructor(readonly replay: ReplayBackend) {}
  async exec(argv: string[], opts: ExecOptions): Promise<ExecResult> {
    this.inFlight++;
    this.maxInFlight = Math.max(this.maxInFlight, this.inFlight);
    // stay in flight until the event loop turns, so the commands the pool started together overlap
    await new Promise((r) => setImmediate(r));
    try {
      return await this.replay.exec(argv, opts);
    } finally {
      this.inFlight--;
    }
  }
  pty: CommandBackend['pty'] = (a, d, o) => this.replay.pty(a, d, o);
}

const replay = new ReplayBackend();
const slow = new Slow(replay);
let t: TestHost;
let mainFile: string;
let eth3File: string;

function ethtools() {
  return [
    ...['eth0', 'eth1', 'eth4'].flatMap((d) => ethtoolAs(d, 'ethtool/veth-eth0.yaml', 'ethtool/veth-eth0-i.yaml')),
    ...['eth2', 'eth3'].flatMap((d) => ethtoolAs(d, 'ethtool/veth-eth3-no-carrier.yaml', 'ethtool/veth-eth0-i.yaml')),
  ];
}

/** The recorded box, then the given state changes on top (later fixtures win). */
function state(links: IpRecord[] = LINKS, addrs: IpRecord[] = ADDRS) {
  replay.load(ipState(links, addrs));
}

const events = (kind: string) =>
  (t.host.db.prepare('SELECT data FROM events WHERE kind = ? ORDER BY seq').all(kind) as { data: string }[]).map((e) =>
    JSON.parse(e.data),
  );

beforeAll(async () => {
  t = await makeTestHost({
    routes: [list, details, configure, update, unconfigure],
    backend: slow,
    config: {
      // confirmDefaultS 0: the guard's 409 (the default window is network-confirm.test.ts's)
      settings: { network: { list: { kinds: ['bond', 'veth'] }, confirmDefaultS: 0 } },
      system: {
        mode: 'replay',
        fixtures: [],
        wrapper: [],
        binaries: { ip: IP, ethtool: '/usr/sbin/ethtool', dhclient: DHCLIENT },
        env: {},
        envAllow: [],
      },
    },
  });
  mainFile = t.config.paths.networkInterfaces;
  eth3File = join(t.config.paths.networkInterfacesD, 'eth3');
  replay.load(ethtools());
  replay.load([recorded('ip/link-show-dev-nonexist.yaml')]);
});
afterAll(() => t.close());

beforeEach(() => {
  writeFileSync(mainFile, SEED_MAIN);
  writeFileSync(eth3File, SEED_ETH3);
  state();
  replay.calls.length = 0;
});

describe('GET /network/interface', () => {
  it('lists the veths in ifindex order with every field of the spec object', async () => {
    const r = await t.call<NetworkInterface[]>('GET', '/api/v2/network/interface');
    expect(r.status).toBe(200);
    expect(r.json.map((i: { link: string; status: string }) => [i.link, i.status])).toEqual([
      ['eth0', 'GOOD'],
      ['eth1', 'GOOD'],
      ['eth2', 'WARNING'], // configured but down
      ['eth3', 'WARNING'], // up without carrier
      ['eth4', 'GOOD'],
    ]);
    expect(r.json[0]).toEqual({
      link: 'eth0',
      class: 'phys',
      mtu: '1500',
      state: 'up',
      phys: {
        index: '2',
        deleted: false,
        name: 'eth0',
        flags: ['BROADCAST', 'MULTICAST', 'UP', 'LOWER_UP'],
        type: 'ether',
        mac: 'd2:56:5d:ff:a3:83',
        brd: 'ff:ff:ff:ff:ff:ff',
        mtu: '1500',
        qdisc: 'noqueue',
        state: 'UP',
        mode: 'DEFAULT',
        group: 'default',
        qlen: '1000',
      },
      settings: {
        dev: 'eth0',
        speed: 10000,
        transceiver: 0,
        supported: 0,
        advertising: 0,
        phy_address: 0,
        autoneg: 0,
        maxtxpkt: 0,
        maxrxpkt: 0,
        port: 'Twisted Pair',
        duplex: 'Full',
        link_detected: true,
        driver: { name: 'veth', version: '1.0', fw_version: null, bus_info: null },
      },
      config: { mode: 'static', address: '192.0.2.10', netmask: '255.255.255.0' },
      ipv4: { type: 'static', address: '192.0.2.10/24', brd: '192.0.2.255', scope: 'global' },
      status: 'GOOD',
    });
    // a lease: ipv4.type dhcp, `dynamic` holds the label; the stanza comes from allow-hotplug
    expect(r.json[4]).toMatchObject({
      config: { mode: 'dhcp' },
      ipv4: { type: 'dhcp', address: '10.1.2.3/24', dynamic: 'eth4' },
    });
    // the stanza in interfaces.d/eth3 is read too
    expect(r.json[3].config).toEqual({ mode: 'static', address: '203.0.113.5', netmask: '255.255.255.0' });
  });

  it('runs the ethtool commands of several interfaces concurrently', async () => {
    slow.maxInFlight = 0;
    await t.call<NetworkInterface[]>('GET', '/api/v2/network/interface');
    const tools = replay.calls.filter((c) => c.argv[0] === '/usr/sbin/ethtool').map((c) => c.argv.slice(1).join(' '));
    expect(tools.sort()).toEqual([
      '-i eth0',
      '-i eth1',
      '-i eth2',
      '-i eth3',
      '-i eth4',
      'eth0',
      'eth1',
      'eth2',
      'eth3',
      'eth4',
    ]);
    // the default pool: two interfaces at a time, two commands each
    expect(slow.maxInFlight).toBe(4);
  });

  it('needs network:read', async () => {
    expect(
      (
        await t.call<NetworkInterface[]>('GET', '/api/v2/network/interface', {
          token: await t.token(['kerberos:read']),
        })
      ).status,
    ).toBe(403);
    expect(
      (await t.call<NetworkInterface[]>('GET', '/api/v2/network/interface', { token: await t.token(['network:read']) }))
        .status,
    ).toBe(200);
  });
});

describe('GET /network/interface/:device_name/details', () => {
  it('one interface, from the dev-scoped commands', async () => {
    const r = await t.call<NetworkInterface[]>('GET', '/api/v2/network/interface/eth4/details');
    expect(r.status).toBe(200);
    expect(r.json).toHaveLength(1);
    expect(r.json[0]).toMatchObject({
      link: 'eth4',
      ipv4: { type: 'dhcp', address: '10.1.2.3/24', brd: '10.1.2.255', scope: 'global', dynamic: 'eth4' },
    });
    expect(replay.calls.map((c) => c.argv).filter((a) => a[0] === IP)).toEqual([
      [IP, '-j', '-d', 'link', 'show', 'dev', 'eth4'],
      [IP, '-j', 'addr', 'show', 'dev', 'eth4'],
    ]);
  });

  it('404 for a device that does not exist (ip says so) or that the listing rule hides', async () => {
    const r = await t.call<NetworkInterface[]>('GET', '/api/v2/network/interface/nonexist/details');
    expect(r.status).toBe(404);
    expect(errorOf(r).message).toBe('no network interface nonexist');
    expect((await t.call<NetworkInterface[]>('GET', '/api/v2/network/interface/br0/details')).status).toBe(404);
    expect((await t.call<NetworkInterface[]>('GET', '/api/v2/network/interface/lo/details')).status).toBe(404);
    expect((await t.call<NetworkInterface[]>('GET', '/api/v2/network/interface/a%20b/details')).status).toBe(400);
  });
});

describe('a hidden device says why (issue 12 item 9, details and update)', () => {
  it('br0 is a bridge, lo a loopback: 404 naming the kind and settings.network.list', async () => {
    const msg = (r: { json: unknown }) => (r.json as { error: { message: string } }).error.message;
    const br = await t.call('GET', '/api/v2/network/interface/br0/details');
    expect([br.status, msg(br)]).toEqual([404, 'br0 is a bridge, not listed (see settings.network.list)']);
    const lo = await t.call('GET', '/api/v2/network/interface/lo/details');
    expect([lo.status, msg(lo)]).toEqual([404, 'lo is a loopback, not listed (see settings.network.list)']);
    const tap = await t.call('POST', '/api/v2/network/interface/tap0/update', { body: { state: 'up' } });
    expect([tap.status, msg(tap)]).toEqual([404, 'tap0 is a tun, not listed (see settings.network.list)']);
  });
});

describe('POST /network/interface/configure', () => {
  const eth1After = () => {
    const links = edit(LINKS, 'eth1', (r) => (r.mtu = 9000));
    const addrs = edit(ADDRS, 'eth1', (r) => {
      r.mtu = 9000;
      (r.addr_info as unknown[]).unshift(inet('10.9.8.7', 24, '10.9.8.255', 'eth1'));
    });
    replay.load(ipState(links, addrs).slice(2));
  };

  it('static: flush, add, mtu+up; appends the stanza; answers the interface as ip now shows it', async () => {
    replay.load([
      ok([IP, '-4', 'addr', 'flush', 'dev', 'eth1']),
      ok([IP, 'addr', 'add', '10.9.8.7/24', 'broadcast', '+', 'dev', 'eth1']),
      ok([IP, 'link', 'set', 'dev', 'eth1', 'mtu', '9000', 'up']),
    ]);
    // the change is decided on the full listing (the recorded box); the answer is read with the
    // dev-scoped commands, which show eth1 as it is after the change
    eth1After();
    const r = await t.call<NetworkInterface>('POST', '/api/v2/network/interface/configure', {
      body: { device: 'eth1', isdhcp: false, address: '10.9.8.7', netmask: '255.255.255.0', mtu: 9000 },
    });
    expect(r.status, r.text).toBe(200);
    expect(changes(replay.calls)).toEqual([
      [IP, '-4', 'addr', 'flush', 'dev', 'eth1'],
      [IP, 'addr', 'add', '10.9.8.7/24', 'broadcast', '+', 'dev', 'eth1'],
      [IP, 'link', 'set', 'dev', 'eth1', 'mtu', '9000', 'up'],
    ]);
    expect(r.json).toMatchObject({
      link: 'eth1',
      mtu: '9000',
      config: { mode: 'static', address: '10.9.8.7', netmask: '255.255.255.0', mtu: '9000' },
      ipv4: { type: 'static', address: '10.9.8.7/24', brd: '10.9.8.255', scope: 'global' },
      status: 'GOOD',
    });
    expect(readFileSync(mainFile, 'utf8')).toBe(
      `${SEED_MAIN}\nauto eth1\niface eth1 inet static\n    address 10.9.8.7\n    netmask 255.255.255.0\n    mtu 9000\n`,
    );
    expect(events('network.interface.configured').at(-1)).toEqual({
      device: 'eth1',
      mode: 'static',
      address: '10.9.8.7/24',
      mtu: 9000,
      options: [],
    });
  });

  it('CIDR address, string mtu and bond/slave pass-through options land in the stanza', async () => {
    replay.load([
      ok([IP, '-4', 'addr', 'flush', 'dev', 'eth2']),
      ok([IP, 'addr', 'add', '198.51.100.8/25', 'broadcast', '+', 'dev', 'eth2']),
      ok([IP, 'link', 'set', 'dev', 'eth2', 'mtu', '1400', 'up']),
    ]);
    const r = await t.call<NetworkInterface>('POST', '/api/v2/network/interface/configure', {
      body: {
        device: 'eth2',
        isdhcp: false,
        address: '198.51.100.8/25',
        mtu: '1400',
        'bond-primary': 'eth2',
        slave_prio: 7,
        bond_slaves: 'eth0, eth1',
      },
    });
    expect(r.status, r.text).toBe(200);
    expect(changes(replay.calls)).toEqual([
      [IP, '-4', 'addr', 'flush', 'dev', 'eth2'],
      [IP, 'addr', 'add', '198.51.100.8/25', 'broadcast', '+', 'dev', 'eth2'],
      [IP, 'link', 'set', 'dev', 'eth2', 'mtu', '1400', 'up'],
    ]);
    // replaced in place, the auto line kept
    expect(readFileSync(mainFile, 'utf8')).toBe(
      SEED_MAIN.replace(
        'iface eth2 inet static\n    address 198.51.100.7/24\n',
        'iface eth2 inet static\n    address 198.51.100.8\n    netmask 255.255.255.128\n    mtu 1400\n    bond-primary eth2\n    slave_prio 7\n    bond_slaves eth0 eth1\n',
      ),
    );
  });

  it('dhcp: stops the old client, flush, up, then the client once', async () => {
    const pid = ['-pf', '/run/dhclient.eth4.pid', '-lf', '/var/lib/dhcp/dhclient.eth4.leases'];
    replay.load([
      ok([DHCLIENT, '-4', '-x', ...pid, 'eth4']),
      ok([IP, '-4', 'addr', 'flush', 'dev', 'eth4']),
      ok([IP, 'link', 'set', 'dev', 'eth4', 'up']),
      ok([DHCLIENT, '-4', '-1', ...pid, 'eth4']),
    ]);
    const r = await t.call<NetworkInterface>('POST', '/api/v2/network/interface/configure', {
      body: { device: 'eth4', isdhcp: true, address: '' },
    });
    expect(r.status, r.text).toBe(200);
    expect(changes(replay.calls)).toEqual([
      [DHCLIENT, '-4', '-x', ...pid, 'eth4'],
      [IP, '-4', 'addr', 'flush', 'dev', 'eth4'],
      [IP, 'link', 'set', 'dev', 'eth4', 'up'],
      [DHCLIENT, '-4', '-1', ...pid, 'eth4'],
    ]);
    expect(r.json).toMatchObject({ config: { mode: 'dhcp' }, ipv4: { type: 'dhcp', dynamic: 'eth4' } });
    expect(readFileSync(mainFile, 'utf8')).toBe(
      SEED_MAIN.replace(
        'allow-hotplug eth4\niface eth4 inet dhcp\n',
        'allow-hotplug eth4\nauto eth4\niface eth4 inet dhcp\n',
      ),
    );
  });

  it('a failing command: files restored, earlier steps undone newest first, 502 naming the command', async () => {
    replay.load([
      ok([IP, '-4', 'addr', 'flush', 'dev', 'eth0']),
      fails(
        [IP, 'addr', 'add', '10.1.1.1/24', 'broadcast', '+', 'dev', 'eth0'],
        'Error: ipv4: Address already assigned.\n',
      ),
      ok([IP, 'addr', 'add', '192.0.2.10/24', 'broadcast', '192.0.2.255', 'dev', 'eth0']),
    ]);
    const r = await t.call<NetworkInterface>('POST', '/api/v2/network/interface/configure', {
      body: { device: 'eth0', isdhcp: false, address: '10.1.1.1/24' },
    });
    expect(r.status).toBe(502);
    expect(errorOf(r)).toMatchObject({
      code: 'command_failed',
      message: 'ip failed (exit 2): Error: ipv4: Address already assigned.; the previous configuration was restored',
      details: {
        command: [IP, 'addr', 'add', '10.1.1.1/24', 'broadcast', '+', 'dev', 'eth0'],
        exitCode: 2,
        rollback: {
          files: [mainFile],
          undone: [[IP, 'addr', 'add', '192.0.2.10/24', 'broadcast', '192.0.2.255', 'dev', 'eth0']],
          failed: [],
        },
      },
    });
    expect(changes(replay.calls)).toEqual([
      [IP, '-4', 'addr', 'flush', 'dev', 'eth0'],
      [IP, 'addr', 'add', '10.1.1.1/24', 'broadcast', '+', 'dev', 'eth0'],
      [IP, 'addr', 'add', '192.0.2.10/24', 'broadcast', '192.0.2.255', 'dev', 'eth0'],
    ]);
    expect(readFileSync(mainFile, 'utf8')).toBe(SEED_MAIN);
    expect(events('network.interface.configured').filter((e) => e.address === '10.1.1.1/24')).toEqual([]);
  });

  it('a failing undo is reported, not hidden', async () => {
    replay.load([
      ok([IP, '-4', 'addr', 'flush', 'dev', 'eth0']),
      fails([IP, 'addr', 'add', '10.1.1.1/24', 'broadcast', '+', 'dev', 'eth0'], 'Error: boom\n'),
      fails([IP, 'addr', 'add', '192.0.2.10/24', 'broadcast', '192.0.2.255', 'dev', 'eth0'], 'Error: still broken\n'),
    ]);
    const r = await t.call<NetworkInterface>('POST', '/api/v2/network/interface/configure', {
      body: { device: 'eth0', isdhcp: false, address: '10.1.1.1/24' },
    });
    expect(r.status).toBe(502);
    expect(errorOf(r).message).toBe(
      'ip failed (exit 2): Error: boom; rollback incomplete (1 step(s) failed; see details.rollback)',
    );
    expect(detail(r, 'rollback', 'failed')).toEqual([
      {
        argv: [IP, 'addr', 'add', '192.0.2.10/24', 'broadcast', '192.0.2.255', 'dev', 'eth0'],
        error: 'exit 2: Error: still broken',
      },
    ]);
    expect(readFileSync(mainFile, 'utf8')).toBe(SEED_MAIN);
  });

  const invalid: [string, Record<string, unknown>, string, RegExp][] = [
    ['static without address', { device: 'eth1', isdhcp: false }, 'body.address', /required when isdhcp is false/],
    ['no prefix at all', { device: 'eth1', isdhcp: false, address: '10.0.0.5' }, 'body.netmask', /required/],
    [
      'non-contiguous netmask',
      { device: 'eth1', isdhcp: false, address: '10.0.0.5', netmask: '255.0.255.0' },
      'body.netmask',
      /contiguous/,
    ],
    [
      'netmask disagrees with CIDR',
      { device: 'eth1', isdhcp: false, address: '10.0.0.5/24', netmask: '255.255.0.0' },
      'body.netmask',
      /does not match/,
    ],
    [
      'network address',
      { device: 'eth1', isdhcp: false, address: '10.0.0.0/24' },
      'body.address',
      /network or broadcast/,
    ],
    ['bad address', { device: 'eth1', isdhcp: false, address: '10.0.0.256/24' }, 'body.address', /IPv4/],
    ['mtu too small', { device: 'eth1', isdhcp: true, mtu: 67 }, 'body.mtu', /at least 68/],
    ['mtu too big', { device: 'eth1', isdhcp: true, mtu: '9217' }, 'body.mtu', /at most 9216/],
    ['mtu not a number', { device: 'eth1', isdhcp: true, mtu: '1500; reboot' }, 'body.mtu', /number/],
    ['device with a space', { device: 'eth1 up', isdhcp: true }, 'body.device', /interface name/],
    ['isdhcp missing', { device: 'eth1' }, 'body.isdhcp', /./],
    [
      'newline in a pass-through value',
      { device: 'eth1', isdhcp: true, bond_mode: '4\n    up rm -rf /' },
      'body.bond_mode',
      /single token/,
    ],
    [
      '# in a pass-through value',
      { device: 'eth1', isdhcp: true, 'bond-mode': '4#x' },
      'body.bond-mode',
      /single token/,
    ],
    [
      'a hook is not a pass-through option',
      { device: 'eth1', isdhcp: true, 'post-up': '/bin/true' },
      'body.post-up',
      /unknown parameter/,
    ],
    [
      'gateway is not a parameter',
      { device: 'eth1', isdhcp: true, gateway: '10.0.0.1' },
      'body.gateway',
      /unknown parameter/,
    ],
    ['odd option name', { device: 'eth1', isdhcp: true, 'bond mode': '4' }, 'body.bond mode', /option name/],
    [
      'bad port name in slaves',
      { device: 'eth1', isdhcp: true, slaves: 'eth0,-x' },
      'body.slaves',
      /not a valid interface name/,
    ],
  ];
  for (const [what, body, path, message] of invalid) {
    it(`400: ${what}`, async () => {
      const r = await t.call<NetworkInterface>('POST', '/api/v2/network/interface/configure', { body });
      expect(r.status).toBe(400);
      const issue = errorOf(r).issues!.find((i: { path: string }) => i.path === path);
      expect(issue?.message).toMatch(message);
      expect(changes(replay.calls)).toEqual([]);
      expect(readFileSync(mainFile, 'utf8')).toBe(SEED_MAIN);
    });
  }

  it('404 for an unknown or unlisted device; 403 without network:manage', async () => {
    expect(
      (
        await t.call<NetworkInterface>('POST', '/api/v2/network/interface/configure', {
          body: { device: 'eth7', isdhcp: true },
        })
      ).status,
    ).toBe(404);
    expect(
      (
        await t.call<NetworkInterface>('POST', '/api/v2/network/interface/configure', {
          body: { device: 'br0', isdhcp: true },
        })
      ).status,
    ).toBe(404);
    const reader = await t.token(['network:read']);
    expect(
      (
        await t.call<NetworkInterface>('POST', '/api/v2/network/interface/configure', {
          body: { device: 'eth1', isdhcp: true },
          token: reader,
        })
      ).status,
    ).toBe(403);
    expect(changes(replay.calls)).toEqual([]);
  });
});

describe('lockout guard', () => {
  const via = (localAddress: string) => ({
    [CONNECTION_HEADER]: JSON.stringify({ localAddress, remoteAddress: '192.0.2.1' }),
  });

  it('refuses to re-address, take down or unconfigure the interface carrying the request', async () => {
    const headers = via('::ffff:192.0.2.10');
    const cases: [string, string, Record<string, unknown>, string][] = [
      [
        'POST',
        '/api/v2/network/interface/configure',
        { device: 'eth0', isdhcp: false, address: '192.0.2.11/24' },
        're-address',
      ],
      ['POST', '/api/v2/network/interface/eth0/update', { state: 'down' }, 'take down'],
      ['POST', '/api/v2/network/interface/eth0/unconfigure', {}, 'unconfigure'],
    ];
    for (const [method, path, body, action] of cases) {
      const r = await t.call(method, path, { body, headers });
      expect(r.status, path).toBe(409);
      expect(errorOf(r).message).toBe(
        `refusing to ${action} eth0: it carries 192.0.2.10, the address this request came in on, so the change would cut this connection; send "confirmWithin": <seconds> to try it with an automatic rollback, or "force": true to do it without one`,
      );
      expect(errorOf(r).details).toEqual({ device: 'eth0', address: '192.0.2.10', action });
    }
    expect(changes(replay.calls)).toEqual([]);
    expect(readFileSync(mainFile, 'utf8')).toBe(SEED_MAIN);
  });

  it('lets it through with force, and does not guard other interfaces or bringing it up', async () => {
    replay.load([
      ok([IP, 'link', 'set', 'dev', 'eth0', 'down']),
      ok([IP, 'link', 'set', 'dev', 'eth0', 'up']),
      ok([IP, 'link', 'set', 'dev', 'eth2', 'down']),
    ]);
    const headers = via('192.0.2.10');
    expect(
      (
        await t.call<NetworkInterface>('POST', '/api/v2/network/interface/eth0/update', {
          body: { state: 'down', force: true },
          headers,
        })
      ).status,
    ).toBe(200);
    expect(
      (
        await t.call<NetworkInterface>('POST', '/api/v2/network/interface/eth0/update', {
          body: { state: 'up' },
          headers,
        })
      ).status,
    ).toBe(200);
    expect(
      (
        await t.call<NetworkInterface>('POST', '/api/v2/network/interface/eth2/update', {
          body: { state: 'down' },
          headers,
        })
      ).status,
    ).toBe(200);
    expect(changes(replay.calls)).toEqual([
      [IP, 'link', 'set', 'dev', 'eth0', 'down'],
      [IP, 'link', 'set', 'dev', 'eth0', 'up'],
      [IP, 'link', 'set', 'dev', 'eth2', 'down'],
    ]);
  });
});

describe('POST /network/interface/:device_name/update', () => {
  it('up/down for a configured interface only', async () => {
    replay.load([ok([IP, 'link', 'set', 'dev', 'eth2', 'up'])]);
    // the answer is read with the dev-scoped commands: they show eth2 up
    replay.load(
      ipState(
        edit(LINKS, 'eth2', (r) => (r.flags = ['BROADCAST', 'MULTICAST', 'UP', 'LOWER_UP'])),
        ADDRS,
      ).slice(2),
    );
    const r = await t.call<NetworkInterface>('POST', '/api/v2/network/interface/eth2/update', {
      body: { state: 'up' },
    });
    expect(r.status, r.text).toBe(200);
    expect(r.json).toMatchObject({ link: 'eth2', state: 'up' });
    expect(changes(replay.calls)).toEqual([[IP, 'link', 'set', 'dev', 'eth2', 'up']]);
    expect(events('network.interface.updated').at(-1)).toEqual({ device: 'eth2', state: 'up' });

    const r409 = await t.call<NetworkInterface>('POST', '/api/v2/network/interface/eth1/update', {
      body: { state: 'up' },
    });
    expect(r409.status).toBe(409);
    expect(errorOf(r409).message).toBe('eth1 is not configured; configure it first');
    expect(
      (await t.call<NetworkInterface>('POST', '/api/v2/network/interface/eth1/update', { body: { state: 'sideways' } }))
        .status,
    ).toBe(400);
    expect(
      (await t.call<NetworkInterface>('POST', '/api/v2/network/interface/eth7/update', { body: { state: 'up' } }))
        .status,
    ).toBe(404);
  });
});

describe('update on an interface managed outside the interfaces files (issue 12 item 12)', () => {
  it('up and addressed without a stanza: 409 saying it is managed elsewhere; nothing runs', async () => {
    const links = edit(LINKS, 'eth1', (r) => (r.flags = ['BROADCAST', 'MULTICAST', 'UP', 'LOWER_UP']));
    const addrs = edit(
      ADDRS,
      'eth1',
      (r) => void (r.addr_info as unknown[]).unshift(inet('10.9.8.7', 24, '10.9.8.255', 'eth1')),
    );
    replay.load(ipState(links, addrs));
    const before = changes(replay.calls).length;
    const r = await t.call('POST', '/api/v2/network/interface/eth1/update', { body: { state: 'down' } });
    expect(r.status).toBe(409);
    expect((r.json as { error: { message: string; details: unknown } }).error).toMatchObject({
      message:
        'eth1 has 10.9.8.7/24 but no stanza in the interfaces files: it is managed outside them (by hand, a DHCP client or another tool); configure it through this API first to manage it here',
      details: { device: 'eth1', addresses: ['10.9.8.7/24'] },
    });
    expect(changes(replay.calls).length).toBe(before);
    replay.load(ipState(LINKS, ADDRS));
  });
});

describe('unconfigure of an interface that is already unconfigured (issue 12 item 10)', () => {
  it('no stanza, no IPv4 address, down: 200 "already unconfigured", nothing runs or is written, no event', async () => {
    const links = edit(LINKS, 'eth1', (r) => (r.flags = ['BROADCAST', 'MULTICAST']));
    const addrs = edit(ADDRS, 'eth1', (r) => (r.addr_info = []));
    replay.load(ipState(links, addrs));
    const before = { calls: changes(replay.calls).length, events: events('network.interface.unconfigured').length };
    const r = await t.call('POST', '/api/v2/network/interface/eth1/unconfigure', { body: {} });
    expect(r.status, r.text).toBe(200);
    expect(r.json as unknown).toEqual({ message: 'eth1 is already unconfigured' });
    expect(changes(replay.calls).length).toBe(before.calls);
    expect(events('network.interface.unconfigured').length).toBe(before.events);
    expect(readFileSync(mainFile, 'utf8')).toBe(SEED_MAIN);
    replay.load(ipState(LINKS, ADDRS));
  });
});

describe('unconfigure resets the runtime MTU (issue 12 item 10)', () => {
  it('eth3 at mtu 9000: flush, then mtu 1500 and down in one step', async () => {
    replay.load(
      ipState(
        edit(LINKS, 'eth3', (r) => (r.mtu = 9000)),
        ADDRS,
      ),
    );
    replay.load([
      ok([IP, '-4', 'addr', 'flush', 'dev', 'eth3']),
      ok([IP, 'link', 'set', 'dev', 'eth3', 'mtu', '1500', 'down']),
    ]);
    const before = changes(replay.calls).length;
    const r = await t.call('POST', '/api/v2/network/interface/eth3/unconfigure', { body: {} });
    expect(r.status, r.text).toBe(200);
    expect(changes(replay.calls).slice(before)).toEqual([
      [IP, '-4', 'addr', 'flush', 'dev', 'eth3'],
      [IP, 'link', 'set', 'dev', 'eth3', 'mtu', '1500', 'down'],
    ]);
    replay.load(ipState(LINKS, ADDRS));
  });
});

describe('POST /network/interface/:device_name/unconfigure', () => {
  it('eth3 (stanza in interfaces.d): flush, down; its file, left empty, is removed, not kept as 0 bytes (issue 12 item 10)', async () => {
    replay.load([ok([IP, '-4', 'addr', 'flush', 'dev', 'eth3']), ok([IP, 'link', 'set', 'dev', 'eth3', 'down'])]);
    const r = await t.call('POST', '/api/v2/network/interface/eth3/unconfigure', { body: {} });
    expect(r.status, r.text).toBe(200);
    expect(r.json).toEqual({ message: 'eth3 unconfigured' });
    expect(changes(replay.calls)).toEqual([
      [IP, '-4', 'addr', 'flush', 'dev', 'eth3'],
      [IP, 'link', 'set', 'dev', 'eth3', 'down'],
    ]);
    expect(existsSync(eth3File)).toBe(false);
    expect(readdirSync(t.config.paths.networkInterfacesD)).toEqual([]);
    expect(readFileSync(mainFile, 'utf8')).toBe(SEED_MAIN);
    expect(events('network.interface.unconfigured').at(-1)).toEqual({ device: 'eth3' });
  });

  it('with no main file, a change elsewhere does not create one (no empty file from a no-op)', async () => {
    rmSync(mainFile);
    replay.load([ok([IP, '-4', 'addr', 'flush', 'dev', 'eth3']), ok([IP, 'link', 'set', 'dev', 'eth3', 'down'])]);
    const r = await t.call('POST', '/api/v2/network/interface/eth3/unconfigure', { body: {} });
    expect(r.status, r.text).toBe(200);
    expect(existsSync(mainFile)).toBe(false);
    expect(existsSync(eth3File)).toBe(false);
  });

  it('a failing step puts back the interfaces.d file it removed, byte for byte', async () => {
    replay.load([fails([IP, '-4', 'addr', 'flush', 'dev', 'eth3'], 'Error: injected\n')]);
    const r = await t.call('POST', '/api/v2/network/interface/eth3/unconfigure', { body: {} });
    expect(r.status, r.text).toBe(502);
    expect(readFileSync(eth3File, 'utf8')).toBe(SEED_ETH3);
    expect(readdirSync(t.config.paths.networkInterfacesD)).toEqual(['eth3']);
    expect(readFileSync(mainFile, 'utf8')).toBe(SEED_MAIN);
  });

  it('eth4 (dhcp, allow-hotplug): the client is stopped and every trace of eth4 leaves the file', async () => {
    const pid = ['-pf', '/run/dhclient.eth4.pid', '-lf', '/var/lib/dhcp/dhclient.eth4.leases'];
    replay.load([
      ok([DHCLIENT, '-4', '-x', ...pid, 'eth4']),
      ok([IP, '-4', 'addr', 'flush', 'dev', 'eth4']),
      ok([IP, 'link', 'set', 'dev', 'eth4', 'down']),
    ]);
    const r = await t.call('POST', '/api/v2/network/interface/eth4/unconfigure', { body: {} });
    expect(r.status, r.text).toBe(200);
    expect(changes(replay.calls)).toEqual([
      [DHCLIENT, '-4', '-x', ...pid, 'eth4'],
      [IP, '-4', 'addr', 'flush', 'dev', 'eth4'],
      [IP, 'link', 'set', 'dev', 'eth4', 'down'],
    ]);
    expect(readFileSync(mainFile, 'utf8')).toBe(SEED_MAIN.replace('\nallow-hotplug eth4\niface eth4 inet dhcp\n', ''));
  });

  it('a stanza for a device that is gone is just removed; nothing at all is 404', async () => {
    const r = await t.call('POST', '/api/v2/network/interface/eth9/unconfigure', { body: {} });
    expect(r.status, r.text).toBe(200);
    expect(r.json).toEqual({ message: 'eth9 does not exist; its configuration was removed' });
    expect(changes(replay.calls)).toEqual([]);
    expect(readFileSync(mainFile, 'utf8')).toBe(SEED_MAIN.replace('\niface eth9 inet manual\n', ''));
    expect((await t.call('POST', '/api/v2/network/interface/eth8/unconfigure', { body: {} })).status).toBe(404);
    expect((await t.call('POST', '/api/v2/network/interface/br0/unconfigure', { body: {} })).status).toBe(404);
    expect(
      (await t.call('POST', '/api/v2/network/interface/eth1/unconfigure', { body: { force: 'maybe' } })).status,
    ).toBe(400);
  });
});

describe('a bond defined only in the interfaces files (issue 12 items 9 and 10)', () => {
  const bondFile = () => join(t.config.paths.networkInterfacesD, 'bond0');
  const BOND0 =
    'auto bond0\niface bond0 inet static\n    address 10.40.0.10\n    netmask 255.255.255.0\n    mtu 9000\n    slaves eth9\n    bond_mode 4\n';
  const notCreated = {
    link: 'bond0',
    class: 'phys',
    mtu: '9000',
    state: 'not created',
    phys: null,
    settings: null,
    config: {
      mode: 'static',
      address: '10.40.0.10',
      netmask: '255.255.255.0',
      mtu: '9000',
      slaves: 'eth9',
      bond_mode: '4',
    },
    ipv4: null,
    status: 'WARNING',
  };
  const bond0Missing = fails([IP, '-j', '-d', 'link', 'show', 'dev', 'bond0'], 'Device "bond0" does not exist.\n', 1);

  it('is listed last with state "not created", and its details answer the same object', async () => {
    writeFileSync(bondFile(), BOND0);
    try {
      replay.load([
        bond0Missing,
        fails([IP, '-j', '-d', 'link', 'show', 'dev', 'eth9'], 'Device "eth9" does not exist.\n', 1),
      ]);
      const l = await t.call<NetworkInterface[]>('GET', '/api/v2/network/interface');
      expect(l.status, l.text).toBe(200);
      expect(l.json.map((i: NetworkInterface) => [i.link, i.state])).toEqual([
        ['eth0', 'up'],
        ['eth1', 'up'],
        ['eth2', 'down'],
        ['eth3', 'up'],
        ['eth4', 'up'],
        ['bond0', 'not created'],
      ]);
      expect(l.json.at(-1)).toEqual(notCreated);
      expect(networkInterface.safeParse(l.json.at(-1)).success).toBe(true);
      const d = await t.call<NetworkInterface[]>('GET', '/api/v2/network/interface/bond0/details');
      expect(d.status, d.text).toBe(200);
      expect(d.json).toEqual([notCreated]);
      // a name with a plain (non-bond) stanza and no device is still unknown
      const e = await t.call('GET', '/api/v2/network/interface/eth9/details');
      expect([e.status, errorOf(e).message]).toEqual([404, 'no network interface eth9']);
    } finally {
      rmSync(bondFile(), { force: true });
    }
  });

  it('the OpenAPI descriptions say the "not created" state and the null phys', () => {
    expect(networkInterface.shape.state.description).toContain('"not created"');
    expect(networkInterface.shape.phys.description).toContain('null only when state is "not created"');
  });

  it('configure and update of it are 409 saying it is not created; nothing runs or is written', async () => {
    writeFileSync(bondFile(), BOND0);
    try {
      const c = await t.call('POST', '/api/v2/network/interface/configure', {
        body: { device: 'bond0', isdhcp: false, address: '10.40.0.11/24' },
      });
      expect([c.status, errorOf(c).message]).toEqual([
        409,
        'bond0 is a bond defined in the interfaces files but not created (no kernel device); unconfigure it to remove its definition, or create a bond with /network/interface/bind',
      ]);
      const u = await t.call('POST', '/api/v2/network/interface/bond0/update', { body: { state: 'up' } });
      expect(u.status).toBe(409);
      expect(changes(replay.calls)).toEqual([]);
      expect(readFileSync(bondFile(), 'utf8')).toBe(BOND0);
      expect(readFileSync(mainFile, 'utf8')).toBe(SEED_MAIN);
    } finally {
      rmSync(bondFile(), { force: true });
    }
  });

  it('unconfigure removes its definition: the file it was alone in is removed, no command runs', async () => {
    writeFileSync(bondFile(), BOND0);
    const before = events('network.interface.unconfigured').length;
    const r = await t.call('POST', '/api/v2/network/interface/bond0/unconfigure', { body: {} });
    expect(r.status, r.text).toBe(200);
    expect(r.json).toEqual({ message: 'bond0 was not created; its configuration was removed' });
    expect(changes(replay.calls)).toEqual([]);
    expect(readdirSync(t.config.paths.networkInterfacesD)).toEqual(['eth3']);
    expect(readFileSync(mainFile, 'utf8')).toBe(SEED_MAIN);
    expect(events('network.interface.unconfigured').slice(before)).toEqual([{ device: 'bond0' }]);
  });

  it('unconfigure of a bond that exists nowhere: 404 as for any unknown name, no file created or changed', async () => {
    const d = t.config.paths.networkInterfacesD;
    const before = events('network.interface.unconfigured').length;
    const r = await t.call('POST', '/api/v2/network/interface/bond0/unconfigure', { body: {} });
    expect([r.status, errorOf(r).message]).toEqual([404, 'no network interface bond0']);
    expect(readdirSync(d)).toEqual(['eth3']);
    expect(readFileSync(eth3File, 'utf8')).toBe(SEED_ETH3);
    expect(readFileSync(mainFile, 'utf8')).toBe(SEED_MAIN);
    expect(changes(replay.calls)).toEqual([]);
    expect(events('network.interface.unconfigured').length).toBe(before);
  });
});

describe('absent parts of an interface object (issue 12 item 8)', () => {
  it('settings, config and ipv4 are null when absent, and the OpenAPI descriptions say so; a bond port is mode manual', () => {
    const { settings, config, ipv4 } = networkInterface.shape;
    for (const f of [settings, config, ipv4]) {
      expect(f.safeParse(null).success).toBe(true);
      expect(f.description).toMatch(/null \(not an object\) when/);
    }
    expect(config.description).toContain('manual (a bond port');
  });
});
