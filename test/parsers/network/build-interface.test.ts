/**
 * The spec's interface object assembled from recorded fixtures, the listing rule, and the
 * status rule. The expected objects here are written out by hand from the fixtures.
 */
import { describe, expect, it } from 'vitest';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { readFixture } from '../../../runtime/system/fixture-file';
import { parseIpLink, type IpLinkRecord } from '../../../handlers/tools/ip-link';
import { parseIpAddr } from '../../../handlers/network/parse/ip-addr';
import { parseEthtool, parseEthtoolDriver } from '../../../handlers/network/parse/ethtool';
import { findInetIface, parseIfupdown } from '../../../handlers/network/parse/ifupdown';
import {
  buildInterface,
  buildSettings,
  interfaceHealth,
  type BuildInput,
} from '../../../handlers/network/build-interface';
import { DEFAULT_SELECT_RULE, isListed, selectInterfaces } from '../../../handlers/network/select';
import { networkInterface } from '../../../handlers/network/responses';

const fx = (rel: string) =>
  readFixture(join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', 'fixtures', rel)).stdout;

const bondConfig = parseIfupdown(
  [
    'auto bond0',
    'iface bond0 inet static',
    '    address 10.20.0.10',
    '    netmask 255.255.255.0',
    '    mtu 9000',
    '    slaves eno1 eno2',
    '    bond_mode 4',
    '    bond_lacp_rate 1',
    '    bond_miimon 100',
    '    bond_xmit_hash_policy layer3+4',
    '    bond-downdelay 200',
    '    bond-updelay 200',
    'iface eno1 inet manual',
    'iface eno2 inet manual',
    '',
  ].join('\n'),
);

const netnsConfig = parseIfupdown(
  [
    'auto eth0 eth2 eth3 eth4',
    'iface eth0 inet static',
    '    address 192.0.2.10/24',
    'iface eth2 inet static',
    '    address 198.51.100.7/24',
    'iface eth3 inet static',
    '    address 203.0.113.5/24',
    'iface eth4 inet dhcp',
    'iface eth5 inet static',
    '    address 10.9.9.9/24',
    '',
  ].join('\n'),
);

function input(
  links: IpLinkRecord[],
  addrStdout: string,
  name: string,
  config: ReturnType<typeof parseIfupdown>,
  extra: Partial<BuildInput> = {},
): BuildInput {
  const link = links.find((l) => l.ifname === name);
  if (!link) throw new Error(`no ${name}`);
  const addr = parseIpAddr(addrStdout).find((a) => a.ifname === name) ?? null;
  return { link, addr, ethtool: null, driver: null, iface: findInetIface(config, name), ...extra };
}

describe('bond fixtures (802.3ad)', () => {
  const links = parseIpLink(fx('ip/link-show-bond-8023ad.yaml'));
  const addrs = fx('ip/addr-show-bond-8023ad.yaml');

  it('builds the bond object', () => {
    const obj = buildInterface(input(links, addrs, 'bond0', bondConfig));
    expect(obj).toEqual({
      link: 'bond0',
      class: 'phys',
      mtu: '9000',
      state: 'up',
      phys: {
        index: '4',
        deleted: false,
        name: 'bond0',
        flags: ['BROADCAST', 'MULTICAST', 'MASTER', 'UP', 'LOWER_UP'],
        type: 'ether',
        mac: '3c:ec:ef:10:20:30',
        brd: 'ff:ff:ff:ff:ff:ff',
        mtu: '9000',
        qdisc: 'noqueue',
        state: 'UP',
        mode: 'DEFAULT',
        group: 'default',
        qlen: '1000',
      },
      settings: null,
      config: {
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
      },
      ipv4: { type: 'static', address: '10.20.0.10/24', brd: '10.20.0.255', scope: 'global' },
      status: 'GOOD',
    });
    expect(networkInterface.safeParse(obj).success).toBe(true);
  });

  it('ports are GOOD, manual, without ipv4', () => {
    const eno1 = buildInterface(input(links, addrs, 'eno1', bondConfig));
    expect(eno1.phys.flags).toContain('SLAVE');
    expect(eno1.config).toEqual({ mode: 'manual' });
    expect(eno1.ipv4).toBeNull();
    expect(eno1.status).toBe('GOOD');
  });

  it('degraded: the bond and the dead port are WARNING, with reasons', () => {
    const dl = parseIpLink(fx('ip/link-show-bond-8023ad-degraded.yaml'));
    const da = fx('ip/addr-show-bond-8023ad-degraded.yaml');
    expect(interfaceHealth(input(dl, da, 'bond0', bondConfig))).toEqual({
      status: 'WARNING',
      reasons: ['bond aggregator has 1 of 2 ports'],
    });
    expect(interfaceHealth(input(dl, da, 'eno2', bondConfig))).toEqual({
      status: 'WARNING',
      reasons: ['no carrier', 'bond port link down'],
    });
    expect(interfaceHealth(input(dl, da, 'eno1', bondConfig)).status).toBe('GOOD');
  });

  it('default listing: ports and bond, not lo', () => {
    expect(selectInterfaces(links).map((l) => l.ifname)).toEqual(['eno1', 'eno2', 'bond0']);
  });
});

describe('netns fixtures (veths)', () => {
  const links = parseIpLink(fx('ip/link-show-netns.yaml'));
  const addrs = fx('ip/addr-show-netns.yaml');

  it('eth0: static, GOOD, settings from ethtool', () => {
    const obj = buildInterface(
      input(links, addrs, 'eth0', netnsConfig, {
        ethtool: parseEthtool(fx('ethtool/veth-eth0.yaml')),
        driver: parseEthtoolDriver(fx('ethtool/veth-eth0-i.yaml')),
      }),
    );
    expect(obj.settings).toEqual({
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
    });
    expect(obj.ipv4).toEqual({ type: 'static', address: '192.0.2.10/24', brd: '192.0.2.255', scope: 'global' });
    expect(obj.config).toEqual({ mode: 'static', address: '192.0.2.10/24' });
    expect(obj.status).toBe('GOOD');
    expect(networkInterface.safeParse(obj).success).toBe(true);
  });

  it('eth4: a lease is dhcp and names its label', () => {
    const obj = buildInterface(input(links, addrs, 'eth4', netnsConfig));
    expect(obj.ipv4).toEqual({
      type: 'dhcp',
      address: '10.1.2.3/24',
      brd: '10.1.2.255',
      scope: 'global',
      dynamic: 'eth4',
    });
    expect(obj.status).toBe('GOOD');
  });

  it('eth1: unconfigured, no IPv4, GOOD', () => {
    const obj = buildInterface(input(links, addrs, 'eth1', netnsConfig));
    expect(obj).toMatchObject({ state: 'up', config: null, ipv4: null, status: 'GOOD' });
  });

  it('eth2: configured but down → WARNING', () => {
    const i = input(links, addrs, 'eth2', netnsConfig);
    expect(buildInterface(i).state).toBe('down');
    expect(interfaceHealth(i)).toEqual({ status: 'WARNING', reasons: ['configured but administratively down'] });
  });

  it('eth3: no carrier → WARNING (also via ethtool)', () => {
    const i = input(links, addrs, 'eth3', netnsConfig, {
      ethtool: parseEthtool(fx('ethtool/veth-eth3-no-carrier.yaml')),
    });
    expect(interfaceHealth(i)).toEqual({ status: 'WARNING', reasons: ['no carrier'] });
    expect(buildInterface(i).settings?.link_detected).toBe(false);
  });

  it('configured address missing / no DHCP lease → WARNING; address set by hand → inet', () => {
    const eth1 = links.find((l) => l.ifname === 'eth1');
    if (!eth1) throw new Error('eth1');
    const noAddr = { link: eth1, addr: null, ethtool: null, driver: null };
    expect(interfaceHealth({ ...noAddr, iface: findInetIface(netnsConfig, 'eth5') }).reasons).toEqual([
      'configured address missing',
    ]);
    expect(interfaceHealth({ ...noAddr, iface: findInetIface(netnsConfig, 'eth4') }).reasons).toEqual([
      'no DHCP lease',
    ]);
    // eth0's address with no stanza is just an inet address
    const obj = buildInterface(input(links, addrs, 'eth0', parseIfupdown('')));
    expect(obj.ipv4?.type).toBe('inet');
  });

  it('listing: default lists no veth/bridge/tap/lo; a netns rule lists the veths', () => {
    expect(selectInterfaces(links)).toEqual([]);
    expect(selectInterfaces(links, { kinds: ['bond', 'veth'] }).map((l) => l.ifname)).toEqual([
      'eth0',
      'eth1',
      'eth2',
      'eth3',
      'eth4',
    ]);
    expect(selectInterfaces(links, { kinds: ['veth'], excludeNames: ['eth4', 'eth3'] }).map((l) => l.ifname)).toEqual([
      'eth0',
      'eth1',
      'eth2',
    ]);
    expect(selectInterfaces(links, { includeNames: ['br*'] }).map((l) => l.ifname)).toEqual(['br0', 'br1']);
    expect(DEFAULT_SELECT_RULE.kinds).toEqual(['bond']);
  });

  it('refuses records without -d', () => {
    const plain = parseIpLink(fx('ip/addr-show-netns.yaml').replace(/"addr_info":\[[^\]]*\]/g, '"x":1'));
    expect(() => isListed(plain[1] as IpLinkRecord)).toThrow(/without -d/);
  });
});

describe('settings from real NIC captures (jc samples)', () => {
  const link = parseIpLink(fx('ip/link-show-dev-eth0.yaml'))[0] as IpLinkRecord;
  it('legacy supported/advertising masks', () => {
    const s = buildSettings(parseEthtool(fx('ethtool/upstream-jc-default1.yaml')), null, link);
    // 10/100 half+full, 1000 full, Autoneg, TP = 0x1 0x2 0x4 0x8 0x20 | 0x40 | 0x80
    expect(s.supported).toBe(0xef);
    // the same modes and Autoneg, no port bit
    expect(s.advertising).toBe(0x6f);
    expect(s).toMatchObject({
      speed: 1000,
      transceiver: 0,
      autoneg: 1,
      phy_address: 0,
      duplex: 'Full',
      port: 'Twisted Pair',
    });
    const fibre = buildSettings(parseEthtool(fx('ethtool/upstream-jc-default2.yaml')), null, link);
    // KX4 18, CR4 24, SR4 25, 56G CR4 28, SR4 29, FIBRE 10, Autoneg 6, Pause 13, Asym 14; 1000baseX/10000baseCR/SR have no legacy bit
    expect(fibre.supported).toBe(
      ((1 << 18) | (1 << 24) | (1 << 25) | (1 << 28) | (1 << 29) | (1 << 10) | (1 << 6) | (1 << 13) | (1 << 14)) >>> 0,
    );
    const external = buildSettings(parseEthtool(fx('ethtool/upstream-jc-link-partner.yaml')), null, link);
    expect(external.transceiver).toBe(1);
  });
  it('Unknown! speed and duplex as the spec shows them', () => {
    const s = buildSettings(
      parseEthtool(fx('ethtool/bridge-br1-down.yaml')),
      parseEthtoolDriver(fx('ethtool/bridge-br0-i.yaml')),
      link,
    );
    expect(s).toMatchObject({
      speed: 'UNKNOWN',
      duplex: 'Unknown!',
      link_detected: false,
      driver: { name: 'bridge', version: '2.3', fw_version: 'N/A', bus_info: 'N/A' },
    });
  });
});
