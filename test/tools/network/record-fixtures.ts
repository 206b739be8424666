/**
 * Records the network fixtures under fixtures/ip and fixtures/ethtool from this machine, inside
 * private network namespaces (test/system/helpers/netns.ts), and converts the upstream samples
 * in ../shared/upstream-samples into fixtures. Writes with runtime/system/fixture-file.ts so
 * stdout is stored byte for byte.
 *
 *   npx vite-node test/tools/network/record-fixtures.ts            # must run as root
 *   npx vite-node test/tools/network/record-fixtures.ts --demo     # only fixtures/demo/network
 *
 * It never writes `*.expected.json`: those are written and reviewed by hand (a draft can be
 * printed with `npx vite-node test/tools/network/draft-expected.ts <fixture.yaml>`).
 *
 * Bonds: the kernel here has no bonding module, so the bond fixtures are made by running the
 * real /usr/sbin/ip (iproute2 6.1.0) with an LD_PRELOAD shim (nl-patch.c) that rewrites the
 * kernel's RTM_NEWLINK answers for three veths named bond0/eno1/eno2: it adds the MASTER/SLAVE
 * flags, IFLA_MASTER, and an IFLA_LINKINFO carrying the attributes Linux 6.1's
 * bond_fill_info()/bond_fill_slave_info() (drivers/net/bonding/bond_netlink.c) send for an
 * 802.3ad bond. Every other attribute is the kernel's, and all JSON is printed by iproute2's
 * own code, so the key names, order and number formatting are real; the bond values are ours.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, existsSync, writeFileSync } from 'node:fs';
import { tmpdir, release } from 'node:os';
import { join, dirname } from 'node:path';
import { parse } from 'yaml';
import { fileURLToPath } from 'node:url';
import { writeFixture, type Fixture } from '../../../runtime/system/fixture-file';
import { createNetns, ETHTOOL, IP, type Netns } from '../../system/helpers/netns';

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '..', '..', '..');
const fixturesDir = join(root, 'fixtures');
const upstream = join(root, '..', 'shared', 'upstream-samples');

const ipVersion = execFileSync(IP, ['-V'], { encoding: 'utf8' }).trim();
const ethtoolVersion = execFileSync(ETHTOOL, ['--version'], { encoding: 'utf8' }).trim();
const when = new Date().toISOString().slice(0, 10);
const machine = `Debian 12, kernel ${release()}, ${ipVersion}, ${ethtoolVersion}, LC_ALL=C, as root`;

function save(rel: string, f: Fixture): void {
  writeFixture(join(fixturesDir, rel), f);
  console.log(`wrote fixtures/${rel}`);
}

/** Run argv in the namespace and store it under the product's argv (without `ip netns exec`). */
async function record(
  ns: Netns,
  rel: string,
  argv: string[],
  scenario: string,
  env?: Record<string, string>,
): Promise<void> {
  const r = await ns.exec(argv, { env });
  save(rel, {
    source: `recorded ${when} on this build machine (${machine}) inside a private network namespace (ip netns exec <ns>) by test/tools/network/record-fixtures.ts; ${scenario}`,
    argv,
    code: r.code,
    stdout: r.stdout,
    stderr: r.stderr,
  });
}

// ---------------------------------------------------------------------------------------------
// 1. Plain namespace: veths with static, no, dynamic addresses; down; no carrier; bridge; tap
// ---------------------------------------------------------------------------------------------

async function recordVeths(): Promise<void> {
  const scenario =
    'namespace with veths eth0 (192.0.2.10/24, up), eth1 (no address, up), eth2 (198.51.100.7/24, admin down), eth3 (203.0.113.5/24, up, peer down so NO-CARRIER), eth4 (10.1.2.3/24 added with valid_lft 3600 preferred_lft 1800, i.e. a lease), an empty bridge br0 (up), an empty bridge br1 (down) and a tap tap0 (down)';
  const ns = await createNetns({
    name: 'ballast-rec',
    veths: [
      { name: 'eth0', peer: 'peer0', address: '192.0.2.10/24', peerAddress: '192.0.2.1/24' },
      { name: 'eth1', peer: 'peer1' },
      { name: 'eth2', peer: 'peer2', address: '198.51.100.7/24', up: false },
      { name: 'eth3', peer: 'peer3', address: '203.0.113.5/24', peerUp: false },
      { name: 'eth4', peer: 'peer4' },
    ],
  });
  try {
    await ns.run([
      IP,
      'addr',
      'add',
      '10.1.2.3/24',
      'brd',
      '+',
      'dev',
      'eth4',
      'valid_lft',
      '3600',
      'preferred_lft',
      '1800',
    ]);
    await ns.run([IP, 'link', 'add', 'br0', 'type', 'bridge']);
    await ns.run([IP, 'link', 'set', 'br0', 'up']);
    // a bridge left down: ethtool says Speed Unknown!, Duplex Unknown! (255), Link detected no
    await ns.run([IP, 'link', 'add', 'br1', 'type', 'bridge']);
    await ns.run([IP, 'tuntap', 'add', 'dev', 'tap0', 'mode', 'tap']);
    // let carrier and IPv6 DAD settle so the capture shows a steady state
    await new Promise((r) => setTimeout(r, 2500));

    await record(ns, 'ip/link-show-netns.yaml', [IP, '-j', '-d', 'link', 'show'], scenario);
    await record(ns, 'ip/addr-show-netns.yaml', [IP, '-j', 'addr', 'show'], scenario);
    await record(ns, 'ip/link-show-dev-eth0.yaml', [IP, '-j', '-d', 'link', 'show', 'dev', 'eth0'], scenario);
    await record(ns, 'ip/addr-show-dev-eth4-lease.yaml', [IP, '-j', 'addr', 'show', 'dev', 'eth4'], scenario);
    await record(ns, 'ip/link-show-dev-nonexist.yaml', [IP, '-j', '-d', 'link', 'show', 'dev', 'nonexist'], scenario);

    await record(ns, 'ethtool/veth-eth0.yaml', [ETHTOOL, 'eth0'], scenario);
    await record(ns, 'ethtool/veth-eth0-i.yaml', [ETHTOOL, '-i', 'eth0'], scenario);
    await record(ns, 'ethtool/veth-eth3-no-carrier.yaml', [ETHTOOL, 'eth3'], scenario);
    await record(ns, 'ethtool/bridge-br0-unknown-speed.yaml', [ETHTOOL, 'br0'], scenario);
    await record(ns, 'ethtool/bridge-br1-down.yaml', [ETHTOOL, 'br1'], scenario);
    await record(ns, 'ethtool/bridge-br0-i.yaml', [ETHTOOL, '-i', 'br0'], scenario);
    await record(ns, 'ethtool/tap-tap0.yaml', [ETHTOOL, 'tap0'], scenario);
    await record(ns, 'ethtool/loopback-lo.yaml', [ETHTOOL, 'lo'], scenario);
    await record(ns, 'ethtool/nonexist.yaml', [ETHTOOL, 'nonexist'], scenario);
  } finally {
    await ns.cleanup();
  }
}

// ---------------------------------------------------------------------------------------------
// 2. Bonds through the netlink shim
// ---------------------------------------------------------------------------------------------

const IFF_MASTER = 0x400;
const IFF_SLAVE = 0x800;
const IFLA = {
  LINK: 5,
  QDISC: 6,
  MASTER: 10,
  LINKINFO: 18,
  LINK_NETNSID: 37,
  PARENT_DEV_NAME: 56,
  PARENT_DEV_BUS_NAME: 57,
};
const INFO = { KIND: 1, DATA: 2, SLAVE_KIND: 4, SLAVE_DATA: 5 };
const BOND = {
  MODE: 1,
  MIIMON: 3,
  UPDELAY: 4,
  DOWNDELAY: 5,
  USE_CARRIER: 6,
  ARP_INTERVAL: 7,
  ARP_VALIDATE: 9,
  ARP_ALL_TARGETS: 10,
  PRIMARY_RESELECT: 12,
  FAIL_OVER_MAC: 13,
  XMIT_HASH_POLICY: 14,
  RESEND_IGMP: 15,
  NUM_PEER_NOTIF: 16,
  ALL_SLAVES_ACTIVE: 17,
  MIN_LINKS: 18,
  LP_INTERVAL: 19,
  PACKETS_PER_SLAVE: 20,
  AD_LACP_RATE: 21,
  AD_SELECT: 22,
  AD_INFO: 23,
  AD_ACTOR_SYS_PRIO: 24,
  AD_USER_PORT_KEY: 25,
  AD_ACTOR_SYSTEM: 26,
  TLB_DYNAMIC_LB: 27,
  PEER_NOTIF_DELAY: 28,
  AD_LACP_ACTIVE: 29,
  MISSED_MAX: 30,
};
const AD_INFO = { AGGREGATOR: 1, NUM_PORTS: 2, ACTOR_KEY: 3, PARTNER_KEY: 4, PARTNER_MAC: 5 };
const SLAVE = {
  STATE: 1,
  MII_STATUS: 2,
  LINK_FAILURE_COUNT: 3,
  PERM_HWADDR: 4,
  QUEUE_ID: 5,
  AD_AGGREGATOR_ID: 6,
  AD_ACTOR_OPER_PORT_STATE: 7,
  AD_PARTNER_OPER_PORT_STATE: 8,
  PRIO: 9,
};

function rta(type: number, payload: Buffer): Buffer {
  const len = 4 + payload.length;
  const out = Buffer.alloc((len + 3) & ~3);
  out.writeUInt16LE(len, 0);
  out.writeUInt16LE(type, 2);
  payload.copy(out, 4);
  return out;
}
const u8 = (t: number, v: number) => rta(t, Buffer.from([v]));
const u16 = (t: number, v: number) => {
  const b = Buffer.alloc(2);
  b.writeUInt16LE(v);
  return rta(t, b);
};
const u32 = (t: number, v: number) => {
  const b = Buffer.alloc(4);
  b.writeUInt32LE(v);
  return rta(t, b);
};
const s32 = (t: number, v: number) => {
  const b = Buffer.alloc(4);
  b.writeInt32LE(v);
  return rta(t, b);
};
const str = (t: number, v: string) => rta(t, Buffer.from(`${v}\0`));
const mac = (t: number, v: string) => rta(t, Buffer.from(v.split(':').map((h) => parseInt(h, 16))));
const nest = (t: number, ...children: Buffer[]) => rta(t, Buffer.concat(children));

interface Patch {
  name: string;
  set: number;
  clear: number;
  strip: number[];
  blob: Buffer;
}

function patchFile(patches: Patch[]): Buffer {
  return Buffer.concat(
    patches.map((p) => {
      const head = Buffer.alloc(16 + 4 + 4 + 8 + 4);
      head.write(p.name, 0, 15, 'latin1');
      head.writeUInt32LE(p.set, 16);
      head.writeUInt32LE(p.clear, 20);
      let mask = 0n;
      for (const t of p.strip) mask |= 1n << BigInt(t);
      head.writeBigUInt64LE(mask, 24);
      head.writeUInt32LE(p.blob.length, 32);
      return Buffer.concat([head, p.blob]);
    }),
  );
}

interface BondScenario {
  label: string;
  degraded: boolean;
}

/** IFLA_BOND_* of an 802.3ad bond with the spec's bind defaults: mode 4, lacp_rate 1 (fast),
 *  miimon 100, updelay/downdelay 200, xmit_hash_policy layer3+4; other values are the kernel
 *  defaults (bond_check_params) as bond_fill_info() reports them. */
function bondInfoData(numPorts: number): Buffer {
  return Buffer.concat([
    u8(BOND.MODE, 4),
    u32(BOND.MIIMON, 100),
    u32(BOND.UPDELAY, 200),
    u32(BOND.DOWNDELAY, 200),
    u32(BOND.PEER_NOTIF_DELAY, 0),
    u8(BOND.USE_CARRIER, 1),
    u32(BOND.ARP_INTERVAL, 0),
    u32(BOND.ARP_VALIDATE, 0),
    u32(BOND.ARP_ALL_TARGETS, 0),
    u8(BOND.PRIMARY_RESELECT, 0),
    u8(BOND.FAIL_OVER_MAC, 0),
    u8(BOND.XMIT_HASH_POLICY, 1),
    u32(BOND.RESEND_IGMP, 1),
    u8(BOND.NUM_PEER_NOTIF, 1),
    u8(BOND.ALL_SLAVES_ACTIVE, 0),
    u32(BOND.MIN_LINKS, 0),
    u32(BOND.LP_INTERVAL, 1),
    u32(BOND.PACKETS_PER_SLAVE, 1),
    u8(BOND.AD_LACP_ACTIVE, 1),
    u8(BOND.AD_LACP_RATE, 1),
    u8(BOND.AD_SELECT, 0),
    u8(BOND.TLB_DYNAMIC_LB, 1),
    u8(BOND.MISSED_MAX, 2),
    u16(BOND.AD_ACTOR_SYS_PRIO, 65535),
    u16(BOND.AD_USER_PORT_KEY, 0),
    mac(BOND.AD_ACTOR_SYSTEM, '00:00:00:00:00:00'),
    nest(
      BOND.AD_INFO,
      u16(AD_INFO.AGGREGATOR, 1),
      u16(AD_INFO.NUM_PORTS, numPorts),
      // 10 Gb/s full duplex: (AD_LINK_SPEED_10000MBPS << 1) | 1 = 15, as bond_3ad computes it
      u16(AD_INFO.ACTOR_KEY, 15),
      u16(AD_INFO.PARTNER_KEY, 32778),
      mac(AD_INFO.PARTNER_MAC, '02:1c:73:5e:10:01'),
    ),
  ]);
}

/** IFLA_BOND_SLAVE_* of one port; 63 = activity|timeout|aggregation|sync|collecting|distributing */
function slaveData(permMac: string, up: boolean, aggregator: number): Buffer {
  return Buffer.concat([
    u8(SLAVE.STATE, up ? 0 : 1), // BOND_STATE_ACTIVE / BOND_STATE_BACKUP
    u8(SLAVE.MII_STATUS, up ? 0 : 2), // BOND_LINK_UP / BOND_LINK_DOWN
    u32(SLAVE.LINK_FAILURE_COUNT, up ? 0 : 1),
    mac(SLAVE.PERM_HWADDR, permMac),
    u16(SLAVE.QUEUE_ID, 0),
    s32(SLAVE.PRIO, 0),
    u16(SLAVE.AD_AGGREGATOR_ID, aggregator),
    u8(SLAVE.AD_ACTOR_OPER_PORT_STATE, up ? 63 : 71), // down: activity|timeout|aggregation|defaulted
    u16(SLAVE.AD_PARTNER_OPER_PORT_STATE, up ? 63 : 1),
  ]);
}

async function recordBond(shim: string, s: BondScenario): Promise<void> {
  const bondMac = '3c:ec:ef:10:20:30';
  const perm = { eno1: '3c:ec:ef:10:20:30', eno2: '3c:ec:ef:10:20:31' };
  const ns = await createNetns({
    name: 'ballast-rec',
    veths: [
      { name: 'eno1', peer: 'sw1' },
      { name: 'eno2', peer: 'sw2', peerUp: !s.degraded },
      { name: 'bond0', peer: 'swb', address: '10.20.0.10/24' },
    ],
  });
  try {
    for (const dev of ['eno1', 'eno2', 'bond0']) {
      // down first, so the IPv6 link-local address is regenerated from the new MAC
      await ns.run([IP, 'link', 'set', 'dev', dev, 'down']);
      await ns.run([IP, 'link', 'set', 'dev', dev, 'mtu', '9000']);
      // a bond in 802.3ad mode gives its ports the bond's MAC; perm_hwaddr keeps the original
      await ns.run([IP, 'link', 'set', 'dev', dev, 'address', bondMac]);
      // the kernel gives bond ports no IPv6 addresses (addrconf skips IFF_SLAVE devices)
      if (dev !== 'bond0') await ns.run(['/usr/sbin/sysctl', '-q', '-w', `net.ipv6.conf.${dev}.disable_ipv6=1`]);
      await ns.run([IP, 'link', 'set', 'dev', dev, 'up']);
    }
    await new Promise((r) => setTimeout(r, 2500));
    const links = JSON.parse((await ns.run([IP, '-j', 'link', 'show'])).stdout) as {
      ifname: string;
      ifindex: number;
    }[];
    const bondIndex = links.find((l) => l.ifname === 'bond0')?.ifindex;
    if (!bondIndex) throw new Error('bond0 not found');

    const veth = [IFLA.LINK, IFLA.LINK_NETNSID, IFLA.LINKINFO];
    const port = (name: 'eno1' | 'eno2', pci: string, up: boolean, aggregator: number): Patch => ({
      name,
      set: IFF_SLAVE,
      clear: 0,
      strip: [...veth, IFLA.QDISC],
      blob: Buffer.concat([
        str(IFLA.QDISC, 'mq'),
        u32(IFLA.MASTER, bondIndex),
        nest(IFLA.LINKINFO, str(INFO.SLAVE_KIND, 'bond'), nest(INFO.SLAVE_DATA, slaveData(perm[name], up, aggregator))),
        str(IFLA.PARENT_DEV_NAME, pci),
        str(IFLA.PARENT_DEV_BUS_NAME, 'pci'),
      ]),
    });
    const patches: Patch[] = [
      {
        name: 'bond0',
        set: IFF_MASTER,
        clear: 0,
        strip: veth,
        blob: nest(IFLA.LINKINFO, str(INFO.KIND, 'bond'), nest(INFO.DATA, bondInfoData(s.degraded ? 1 : 2))),
      },
      port('eno1', '0000:3b:00.0', true, 1),
      port('eno2', '0000:3b:00.1', !s.degraded, s.degraded ? 2 : 1),
    ];
    const dir = mkdtempSync(join(tmpdir(), 'ballast-nlpatch-'));
    const file = join(dir, 'patch.bin');
    writeFileSync(file, patchFile(patches));
    const env = { LD_PRELOAD: shim, NL_PATCH_FILE: file };
    const scenario =
      `BOND FIXTURE BUILT FROM SOURCE, NOT CAPTURED FROM A BOND: the kernel has no bonding module, so veths bond0/eno1/eno2 (MTU 9000, one MAC) were dumped by the real iproute2 6.1.0 ip binary while an LD_PRELOAD shim (test/tools/network/nl-patch.c) rewrote their RTM_NEWLINK: MASTER/SLAVE flags, IFLA_MASTER, qdisc mq and parent PCI device on the ports, and IFLA_LINKINFO with the attributes Linux 6.1 bond_fill_info()/bond_fill_slave_info() send for an 802.3ad bond (mode 4, lacp_rate fast, miimon 100, updelay/downdelay 200, layer3+4); ` +
      (s.degraded
        ? 'degraded: eno2 has no carrier (its peer is down), MII down, in its own aggregator, one port in the active aggregator'
        : 'healthy: both ports up, both in aggregator 1');
    await record(ns, `ip/link-show-${s.label}.yaml`, [IP, '-j', '-d', 'link', 'show'], scenario, env);
    await record(ns, `ip/addr-show-${s.label}.yaml`, [IP, '-j', 'addr', 'show'], scenario, env);
  } finally {
    await ns.cleanup();
  }
}

// ---------------------------------------------------------------------------------------------
// 3. Upstream samples (verbatim stdout, argv as they were captured)
// ---------------------------------------------------------------------------------------------

function fromUpstream(rel: string, sample: string, argv: string[], note: string): void {
  const path = join(upstream, sample);
  if (!existsSync(path)) throw new Error(`upstream sample missing: ${path}`);
  save(rel, {
    source: `upstream sample ${sample} (see shared/upstream-samples/SOURCES.md); ${note}`,
    argv,
    code: 0,
    stdout: readFileSync(path, 'utf8'),
    stderr: '',
  });
}

function recordUpstream(): void {
  const deb = 'Debian 12 capture, iproute2 6.1.0, in unshare -n with veth0/veth1 and bridge br0';
  fromUpstream(
    'ip/upstream-debian12-link-show.yaml',
    'ip/debian12-iproute2-6.1-ip-j-d-link-show.out',
    [IP, '-j', '-d', 'link', 'show'],
    deb,
  );
  fromUpstream(
    'ip/upstream-debian12-addr-show.yaml',
    'ip/debian12-iproute2-6.1-ip-j-addr-show.out',
    [IP, '-j', 'addr', 'show'],
    `${deb}; veth0 has a labelled static address and a dynamic one`,
  );
  fromUpstream(
    'ip/upstream-debian12-addr-show-4.yaml',
    'ip/debian12-iproute2-6.1-ip-4-j-addr-show.out',
    [IP, '-4', '-j', 'addr', 'show'],
    `${deb}; -4 omits link_type/address/broadcast`,
  );
  const jc = 'jc (kellyjonbrazil/jc @ac8120e1, MIT) test fixture; argv as jc documents it, ethtool version unknown';
  fromUpstream(
    'ethtool/upstream-jc-default1.yaml',
    'ethtool/jc-generic-ethtool--default1.out',
    [ETHTOOL, 'enp0s3'],
    jc,
  );
  fromUpstream(
    'ethtool/upstream-jc-default2.yaml',
    'ethtool/jc-generic-ethtool--default2.out',
    [ETHTOOL, 'enp1s0'],
    `${jc}; its tabs were turned into spaces upstream`,
  );
  fromUpstream(
    'ethtool/upstream-jc-link-partner.yaml',
    'ethtool/jc-generic-ethtool--link-partner-advertised-link-modes.out',
    [ETHTOOL, 'eth0'],
    jc,
  );
}

// ---------------------------------------------------------------------------------------------
// 4. The demo appliance (fixtures/demo/network): `--demo`
// ---------------------------------------------------------------------------------------------

const DEMO_MACS = {
  eno1: '3c:ec:ef:10:20:10',
  eno2: '3c:ec:ef:10:20:11',
  eno3: '3c:ec:ef:10:20:12',
  eno4: '3c:ec:ef:10:20:13',
  eno5: '3c:ec:ef:10:20:14',
};

/**
 * A plausible box, made like the bond fixtures: veths in a namespace, dumped by the real ip
 * while the shim makes eno1-eno5 look like PCI NICs (no veth linkinfo, qdisc mq, parent
 * device) and bond0 an 802.3ad bond over eno3+eno4. eno1 management (static), eno2 a DHCP
 * lease, bond0 the storage network (MTU 9000), eno5 unused (down, no carrier), docker0 a real
 * bridge the listing rule leaves out. Stored under the argv the network routes run.
 */
async function recordDemo(shim: string): Promise<void> {
  const ns = await createNetns({
    name: 'ballast-demo',
    veths: [
      { name: 'eno1', peer: 'sw1', address: '192.168.10.20/24', peerAddress: '192.168.10.1/24' },
      { name: 'eno2', peer: 'sw2' },
      { name: 'eno3', peer: 'sw3' },
      { name: 'eno4', peer: 'sw4' },
      { name: 'eno5', peer: 'sw5', up: false, peerUp: false },
      { name: 'bond0', peer: 'swb', address: '10.20.0.10/24' },
    ],
  });
  try {
    for (const [dev, mac] of Object.entries({ ...DEMO_MACS, bond0: DEMO_MACS.eno3 })) {
      const port = dev === 'eno3' || dev === 'eno4';
      const wasUp = dev !== 'eno5';
      await ns.run([IP, 'link', 'set', 'dev', dev, 'down']);
      if (port || dev === 'bond0') await ns.run([IP, 'link', 'set', 'dev', dev, 'mtu', '9000']);
      // 802.3ad ports carry the bond's MAC; perm_hwaddr keeps their own
      await ns.run([IP, 'link', 'set', 'dev', dev, 'address', port ? DEMO_MACS.eno3 : mac]);
      if (port) await ns.run(['/usr/sbin/sysctl', '-q', '-w', `net.ipv6.conf.${dev}.disable_ipv6=1`]);
      if (wasUp) await ns.run([IP, 'link', 'set', 'dev', dev, 'up']);
    }
    await ns.run([
      IP,
      'addr',
      'add',
      '10.1.2.50/24',
      'brd',
      '+',
      'dev',
      'eno2',
      'valid_lft',
      '86400',
      'preferred_lft',
      '86400',
    ]);
    await ns.run([IP, 'link', 'add', 'docker0', 'type', 'bridge']);
    await ns.run([IP, 'addr', 'add', '172.17.0.1/16', 'brd', '+', 'dev', 'docker0']);
    await new Promise((r) => setTimeout(r, 2500));
    const links = JSON.parse((await ns.run([IP, '-j', 'link', 'show'])).stdout) as {
      ifname: string;
      ifindex: number;
    }[];
    const bondIndex = links.find((l) => l.ifname === 'bond0')?.ifindex;
    if (!bondIndex) throw new Error('bond0 not found');

    const veth = [IFLA.LINK, IFLA.LINK_NETNSID, IFLA.LINKINFO];
    const pci = (n: number) =>
      Buffer.concat([str(IFLA.PARENT_DEV_NAME, `0000:3b:00.${n}`), str(IFLA.PARENT_DEV_BUS_NAME, 'pci')]);
    const nic = (name: string, n: number): Patch => ({
      name,
      set: 0,
      clear: 0,
      strip: [...veth, IFLA.QDISC],
      blob: Buffer.concat([str(IFLA.QDISC, 'mq'), pci(n)]),
    });
    const port = (name: 'eno3' | 'eno4', n: number): Patch => ({
      name,
      set: IFF_SLAVE,
      clear: 0,
      strip: [...veth, IFLA.QDISC],
      blob: Buffer.concat([
        str(IFLA.QDISC, 'mq'),
        u32(IFLA.MASTER, bondIndex),
        nest(IFLA.LINKINFO, str(INFO.SLAVE_KIND, 'bond'), nest(INFO.SLAVE_DATA, slaveData(DEMO_MACS[name], true, 1))),
        pci(n),
      ]),
    });
    const patches: Patch[] = [
      {
        name: 'bond0',
        set: IFF_MASTER,
        clear: 0,
        strip: veth,
        blob: nest(IFLA.LINKINFO, str(INFO.KIND, 'bond'), nest(INFO.DATA, bondInfoData(2))),
      },
      nic('eno1', 0),
      nic('eno2', 1),
      port('eno3', 2),
      port('eno4', 3),
      nic('eno5', 4),
    ];
    const dir = mkdtempSync(join(tmpdir(), 'ballast-nlpatch-'));
    const file = join(dir, 'patch.bin');
    writeFileSync(file, patchFile(patches));
    const env = { LD_PRELOAD: shim, NL_PATCH_FILE: file };
    const scenario =
      'THE DEMO APPLIANCE, BUILT FROM SOURCE LIKE THE BOND FIXTURES: veths eno1-eno5 and bond0 dumped by the real iproute2 6.1.0 ip binary while the LD_PRELOAD shim (test/tools/network/nl-patch.c) made eno1-eno5 look like PCI NICs (no veth linkinfo, qdisc mq, parent device) and bond0 an 802.3ad bond over eno3+eno4 (mode 4, lacp_rate fast, miimon 100, updelay/downdelay 200, layer3+4, MTU 9000, both ports in aggregator 1); eno1 192.168.10.20/24 (management), eno2 10.1.2.50/24 added with a 1-day lifetime (a DHCP lease), bond0 10.20.0.10/24, eno5 admin down without carrier, docker0 a real bridge';
    await record(ns, 'demo/network/ip/link-show.yaml', [IP, '-j', '-d', 'link', 'show'], scenario, env);
    await record(ns, 'demo/network/ip/addr-show.yaml', [IP, '-j', 'addr', 'show'], scenario, env);
    for (const dev of ['eno1', 'eno2', 'eno3', 'eno4', 'eno5', 'bond0', 'docker0', 'lo']) {
      await record(
        ns,
        `demo/network/ip/link-show-dev-${dev}.yaml`,
        [IP, '-j', '-d', 'link', 'show', 'dev', dev],
        scenario,
        env,
      );
      await record(
        ns,
        `demo/network/ip/addr-show-dev-${dev}.yaml`,
        [IP, '-j', 'addr', 'show', 'dev', dev],
        scenario,
        env,
      );
    }
  } finally {
    await ns.cleanup();
  }
  demoEthtool();
}

/** `ethtool -i` as ethtool 6.1 prints it (see fixtures/ethtool/veth-eth0-i.yaml). */
function driverInfo(driver: string, version: string, fw: string, bus: string, features: boolean): string {
  const yn = features ? 'yes' : 'no';
  return `driver: ${driver}\nversion: ${version}\nfirmware-version: ${fw}\nexpansion-rom-version: \nbus-info: ${bus}\nsupports-statistics: yes\nsupports-test: ${yn}\nsupports-eeprom-access: ${yn}\nsupports-register-dump: ${yn}\nsupports-priv-flags: ${yn}\n`;
}

/**
 * ethtool for the demo NICs: a veth's ethtool says "veth, 10000Mb/s", which no appliance
 * has, so these are the upstream jc samples (real NICs) renamed, and `ethtool -i` lines in
 * ethtool 6.1's format for the drivers such ports would have. Each fixture's source says so.
 */
function demoEthtool(): void {
  const jc1 = readFileSync(join(upstream, 'ethtool/jc-generic-ethtool--default1.out'), 'utf8');
  const jc2 = readFileSync(join(upstream, 'ethtool/jc-generic-ethtool--default2.out'), 'utf8');
  const veth = readFileSync(join(fixturesDir, 'ethtool/veth-eth0.yaml'), 'utf8');
  const vethOut = (parse(veth) as { stdout: string }).stdout;
  const rename = (text: string, dev: string) => text.replace(/^Settings for \S+:/, `Settings for ${dev}:`);
  const noCarrier = (text: string) =>
    text
      .replace('Speed: 1000Mb/s', 'Speed: Unknown!')
      .replace('Duplex: Full', 'Duplex: Unknown! (255)')
      .replace('Link detected: yes', 'Link detected: no');
  const settings: [string, string, string][] = [
    [
      'eno1',
      rename(jc1, 'eno1'),
      'upstream sample ethtool/jc-generic-ethtool--default1.out (jc, MIT; a 1G copper port) renamed to eno1',
    ],
    [
      'eno2',
      rename(jc1, 'eno2'),
      'upstream sample ethtool/jc-generic-ethtool--default1.out (jc, MIT; a 1G copper port) renamed to eno2',
    ],
    [
      'eno3',
      rename(jc2, 'eno3'),
      'upstream sample ethtool/jc-generic-ethtool--default2.out (jc, MIT; a 40G fibre port) renamed to eno3',
    ],
    [
      'eno4',
      rename(jc2, 'eno4'),
      'upstream sample ethtool/jc-generic-ethtool--default2.out (jc, MIT; a 40G fibre port) renamed to eno4',
    ],
    [
      'eno5',
      noCarrier(rename(jc1, 'eno5')),
      'upstream sample ethtool/jc-generic-ethtool--default1.out (jc, MIT) renamed to eno5, with the lines ethtool prints for a port without link (Speed: Unknown!, Duplex: Unknown! (255), Link detected: no)',
    ],
    [
      'bond0',
      rename(vethOut, 'bond0')
        .replace('Speed: 10000Mb/s', 'Speed: 80000Mb/s')
        .replace('Port: Twisted Pair', 'Port: Other')
        .replace(/\tMDI-X: .*\n/, ''),
      'fixtures/ethtool/veth-eth0.yaml (recorded ethtool 6.1 on a software device) renamed to bond0, with the speed a bond reports for two 40G ports and Port: Other',
    ],
  ];
  for (const [dev, stdout, note] of settings) {
    save(`demo/network/ethtool/${dev}.yaml`, {
      source: `derived for the demo appliance from ${note}`,
      argv: [ETHTOOL, dev],
      code: 0,
      stdout,
      stderr: '',
    });
  }
  const drivers: [string, string][] = [
    ['eno1', driverInfo('igb', '6.1.0-28-amd64', '1.67, 0x80000d66, 1.1767.0', '0000:3b:00.0', true)],
    ['eno2', driverInfo('igb', '6.1.0-28-amd64', '1.67, 0x80000d66, 1.1767.0', '0000:3b:00.1', true)],
    ['eno3', driverInfo('i40e', '6.1.0-28-amd64', '8.70 0x8000c40f 1.3179.0', '0000:3b:00.2', true)],
    ['eno4', driverInfo('i40e', '6.1.0-28-amd64', '8.70 0x8000c40f 1.3179.0', '0000:3b:00.3', true)],
    ['eno5', driverInfo('igb', '6.1.0-28-amd64', '1.67, 0x80000d66, 1.1767.0', '0000:3b:00.4', true)],
    ['bond0', driverInfo('bonding', '6.1.0-28-amd64', '2', '', false)],
  ];
  for (const [dev, stdout] of drivers) {
    save(`demo/network/ethtool/${dev}-i.yaml`, {
      source:
        'constructed for the demo appliance in the format of ethtool 6.1 -i (fixtures/ethtool/veth-eth0-i.yaml); driver, version and firmware strings are typical for such ports on Debian 12, not recorded',
      argv: [ETHTOOL, '-i', dev],
      code: 0,
      stdout,
      stderr: '',
    });
  }
}

async function main(): Promise<void> {
  if (process.getuid?.() !== 0) throw new Error('must run as root (network namespaces)');
  const dir = mkdtempSync(join(tmpdir(), 'ballast-nlshim-'));
  const shim = join(dir, 'nl-patch.so');
  execFileSync('gcc', ['-shared', '-fPIC', '-O1', '-Wall', '-o', shim, join(here, 'nl-patch.c'), '-ldl'], {
    stdio: 'inherit',
  });
  if (process.argv.includes('--demo')) {
    await recordDemo(shim);
    return;
  }
  recordUpstream();
  await recordVeths();
  await recordBond(shim, { label: 'bond-8023ad', degraded: false });
  await recordBond(shim, { label: 'bond-8023ad-degraded', degraded: true });
}

main().catch((e: unknown) => {
  console.error(e);
  process.exit(1);
});
