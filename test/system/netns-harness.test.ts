/**
 * The netns harness against the real tools: veths inside a private namespace (peers in a
 * second one, nothing in the root namespace), read back with `ip -j -d link`, `ip -j addr`
 * and `ethtool`, parsed by the product's parsers. A missing tool fails this file; it never
 * skips.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import { createNetns, ETHTOOL, IP, netnsExists, requireTool, type Netns } from './helpers/netns';
import { parseIpLink } from '../../handlers/tools/ip-link';
import { parseIpAddr } from '../../handlers/network/parse/ip-addr';
import { parseEthtool, parseEthtoolDriver } from '../../handlers/network/parse/ethtool';
import { selectInterfaces } from '../../handlers/network/select';
import { buildInterface } from '../../handlers/network/build-interface';
import { networkInterface } from '../../handlers/network/responses';

function rootLinks(): string[] {
  return (JSON.parse(execFileSync(IP, ['-j', 'link', 'show'], { encoding: 'utf8' })) as { ifname: string }[]).map(
    (l) => l.ifname,
  );
}

describe('netns harness', () => {
  let ns: Netns;
  let rootBefore: string[];

  beforeAll(async () => {
    // loud, not skipped: CI must go red if the machine lost its tools or root
    requireTool(IP, 'iproute2');
    requireTool(ETHTOOL, 'ethtool');
    expect(process.getuid?.(), 'system tests run as root').toBe(0);
    rootBefore = rootLinks();
    ns = await createNetns({
      veths: [
        { name: 'eth0', peer: 'peer0', address: '192.0.2.10/24', peerAddress: '192.0.2.1/24' },
        { name: 'eth1', peer: 'peer1' },
        { name: 'eth2', peer: 'peer2', address: '198.51.100.7/24', up: false },
      ],
    });
  });

  afterAll(async () => {
    await ns?.cleanup();
  });

  it('names the namespaces uniquely and creates nothing in the root namespace', () => {
    expect(ns.name).toMatch(new RegExp(`^ballast-t-${process.pid}-\\d+$`));
    expect(ns.peerName).toBe(`${ns.name}-p`);
    expect(netnsExists(ns.name) && netnsExists(ns.peerName)).toBe(true);
    expect(rootLinks()).toEqual(rootBefore);
  });

  it('ip -j -d link inside parses, veths listed with the netns rule', async () => {
    const r = await ns.run([IP, '-j', '-d', 'link', 'show']);
    const links = parseIpLink(r.stdout);
    expect(links.map((l) => l.ifname)).toEqual(['lo', 'eth0', 'eth1', 'eth2']);
    expect(links.every((l) => l.details)).toBe(true);
    expect(links.find((l) => l.ifname === 'eth0')).toMatchObject({ kind: 'veth', operstate: 'UP', mtu: 1500 });
    expect(links.find((l) => l.ifname === 'eth2')?.flags).not.toContain('UP');
    expect(selectInterfaces(links)).toEqual([]);
    expect(selectInterfaces(links, { kinds: ['veth'] }).map((l) => l.ifname)).toEqual(['eth0', 'eth1', 'eth2']);
    // the peers are in the other namespace
    const peers = parseIpLink((await ns.execPeer([IP, '-j', '-d', 'link', 'show'])).stdout).map((l) => l.ifname);
    expect(peers).toEqual(['lo', 'peer0', 'peer1', 'peer2']);
  });

  it('ip -j addr inside parses: static, none, down', async () => {
    const addrs = parseIpAddr((await ns.run([IP, '-j', 'addr', 'show'])).stdout);
    const v4 = (n: string) => addrs.find((a) => a.ifname === n)?.addresses.filter((a) => a.family === 'inet');
    expect(v4('eth0')).toEqual([
      {
        family: 'inet',
        local: '192.0.2.10',
        prefixlen: 24,
        broadcast: '192.0.2.255',
        scope: 'global',
        dynamic: false,
        label: 'eth0',
        valid_life_time: 'forever',
        preferred_life_time: 'forever',
        flags: [],
      },
    ]);
    expect(v4('eth1')).toEqual([]);
    expect(v4('eth2')?.map((a) => a.local)).toEqual(['198.51.100.7']);
  });

  it('a lease added with lifetimes is dynamic', async () => {
    await ns.run([IP, 'addr', 'add', '10.1.2.3/24', 'dev', 'eth1', 'valid_lft', '600', 'preferred_lft', '300']);
    const a = parseIpAddr((await ns.run([IP, '-j', 'addr', 'show', 'dev', 'eth1'])).stdout)[0]?.addresses.find(
      (x) => x.family === 'inet',
    );
    expect(a?.dynamic).toBe(true);
    expect(typeof a?.valid_life_time === 'number' && a.valid_life_time <= 600).toBe(true);
  });

  it('ethtool on a veth inside parses, and the interface object validates', async () => {
    const e = parseEthtool((await ns.run([ETHTOOL, 'eth0'])).stdout);
    expect(e).toMatchObject({ dev: 'eth0', speed: 10000, duplex: 'Full', link_detected: true });
    const d = parseEthtoolDriver((await ns.run([ETHTOOL, '-i', 'eth0'])).stdout);
    expect(d.driver).toBe('veth');
    const link = parseIpLink((await ns.run([IP, '-j', '-d', 'link', 'show', 'dev', 'eth0'])).stdout)[0];
    const addr = parseIpAddr((await ns.run([IP, '-j', 'addr', 'show', 'dev', 'eth0'])).stdout)[0] ?? null;
    if (!link) throw new Error('eth0 missing');
    const obj = buildInterface({ link, addr, ethtool: e, driver: d, iface: null });
    expect(networkInterface.parse(obj)).toMatchObject({
      link: 'eth0',
      state: 'up',
      ipv4: { type: 'inet', address: '192.0.2.10/24' },
      status: 'GOOD',
    });
  });

  it('a failing command reports its exit code instead of throwing', async () => {
    const r = await ns.exec([IP, '-j', 'link', 'show', 'dev', 'nonexist']);
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain('does not exist');
    await expect(ns.run([IP, '-j', 'link', 'show', 'dev', 'nonexist'])).rejects.toThrow(/exited 1/);
  });

  it('cleanup leaves no namespace behind', async () => {
    const extra = await createNetns({ name: 'ballast-t', veths: [{ name: 'x0', peer: 'y0' }] });
    expect(netnsExists(extra.name)).toBe(true);
    await extra.cleanup();
    await extra.cleanup(); // idempotent
    expect(netnsExists(extra.name)).toBe(false);
    expect(netnsExists(extra.peerName)).toBe(false);
    const listed = execFileSync(IP, ['netns', 'list'], { encoding: 'utf8' });
    expect(listed).not.toContain(extra.name);
  });

  it('rejects unsafe base names and reports a missing tool loudly', async () => {
    await expect(createNetns({ name: 'bad name; reboot', veths: [] })).rejects.toThrow(/bad namespace base name/);
    expect(() => requireTool('/usr/sbin/definitely-not-here', 'nothing')).toThrow(/missing/);
  });
});

describe('after the suite', () => {
  it('the main namespaces are gone once cleaned up', async () => {
    const ns = await createNetns({ veths: [] });
    await ns.cleanup();
    expect(execFileSync(IP, ['netns', 'list'], { encoding: 'utf8' })).not.toContain(ns.name);
  });
});
