/**
 * regenerate's default IP SANs: the addresses of the appliance's own interfaces, read from sysfs
 * (a fake /sys/class/net here, and this machine's real one), not container bridges or veths.
 */
import { describe, expect, it } from 'vitest';
import { existsSync, mkdirSync, readdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { NetworkInterfaceInfo } from 'node:os';
import { hostAddresses, ownInterfaces } from '../../runtime/areas/certificate/ops';
import { privateDir } from '../helpers/tmp';

/** A /sys/class/net: NICs have `device`; uppers have `lower_<dev>`; bridges `brif/<port>`. */
function fakeSys(): string {
  const sys = privateDir('certificate-sysfs');
  const devices = join(sys, 'devices');
  const iface = (name: string, o: { device?: boolean; lower?: string[]; ports?: string[] } = {}) => {
    const d = join(sys, name);
    mkdirSync(d, { recursive: true });
    writeFileSync(join(d, 'type'), '1\n');
    if (o.device) {
      mkdirSync(join(devices, name), { recursive: true });
      symlinkSync(join(devices, name), join(d, 'device'));
    }
    for (const l of o.lower ?? []) symlinkSync(join(sys, l), join(d, `lower_${l}`));
    if (o.ports) {
      mkdirSync(join(d, 'brif'));
      for (const p of o.ports) symlinkSync(join(sys, p), join(d, 'brif', p));
    }
  };
  iface('lo');
  iface('eth0', { device: true });
  iface('eth1', { device: true });
  iface('eth2', { device: true });
  iface('bond0', { lower: ['eth1'] });
  iface('eth0.10', { lower: ['eth0'] });
  iface('br0', { lower: ['eth2'], ports: ['eth2'] });
  iface('veth1a2b');
  iface('docker0', { lower: ['veth1a2b'], ports: ['veth1a2b'] });
  iface('br-d4dd492ccb30');
  iface('tun0');
  return sys;
}

const addr = (address: string, o: Partial<NetworkInterfaceInfo> = {}): NetworkInterfaceInfo =>
  ({
    address,
    netmask: '255.255.255.0',
    family: address.includes(':') ? 'IPv6' : 'IPv4',
    mac: '02:00:00:00:00:01',
    internal: false,
    cidr: null,
    ...(address.includes(':') ? { scopeid: 0 } : {}),
    ...o,
  }) as NetworkInterfaceInfo;

describe('regenerate: the addresses of the certificate', () => {
  it('ownInterfaces: NICs and what is built on them (bond, VLAN, a bridge with a NIC port), not container plumbing', () => {
    expect([...ownInterfaces(fakeSys())].sort()).toEqual(['bond0', 'br0', 'eth0', 'eth0.10', 'eth1', 'eth2']);
  });

  it("hostAddresses: the own interfaces' addresses, without loopback, link-local, docker0, br-<id>, veths or tun", () => {
    const interfaces = {
      lo: [addr('127.0.0.1', { internal: true }), addr('::1', { internal: true })],
      eth0: [addr('192.0.2.10'), addr('2001:db8::10'), addr('fe80::1')],
      'eth0.10': [addr('198.51.100.10')],
      bond0: [addr('203.0.113.10'), addr('169.254.3.4')],
      br0: [addr('192.0.2.20')],
      docker0: [addr('172.17.0.1')],
      'br-d4dd492ccb30': [addr('172.18.0.1')],
      veth1a2b: [addr('fe80::2')],
      tun0: [addr('10.8.0.1')],
    };
    expect(hostAddresses(fakeSys(), interfaces)).toEqual([
      '192.0.2.10',
      '2001:db8::10',
      '198.51.100.10',
      '203.0.113.10',
      '192.0.2.20',
    ]);
  });

  it("this machine's /sys/class/net: its NICs are own; loopback, bridges without a NIC port and ifb are not", () => {
    const sys = '/sys/class/net';
    const own = ownInterfaces(sys);
    for (const n of readdirSync(sys)) {
      const nic = existsSync(join(sys, n, 'device'));
      const plumbing = n === 'lo' || /^(docker\d|br-|veth|ifb|tun|tap)/.test(n);
      const ports = existsSync(join(sys, n, 'brif')) ? readdirSync(join(sys, n, 'brif')) : [];
      const nicPort = ports.some((p) => existsSync(join(sys, p, 'device')));
      if (nic) expect([n, own.has(n)]).toEqual([n, true]);
      else if (plumbing && !nicPort) expect([n, own.has(n)]).toEqual([n, false]);
    }
    expect(own.has('lo')).toBe(false);
  });
});
