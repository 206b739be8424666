/**
 * Editing ifupdown text the way the routes do: one option of a stanza changed with every other
 * byte kept (hooks, comments, continuations), removals that give back the file as it was
 * before an append, and edits spread over the main file and interfaces.d. Plus the request
 * inputs that turn into argv (netmask, address, MTU, bond tables).
 */
import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { replaceIfaceStanza, setIfaceOption } from '../../../handlers/network/render/ifupdown';
import { parseIfupdownWithSpans } from '../../../handlers/network/parse/ifupdown';
import { ConfigEdit, type NetworkConfig } from '../../../handlers/network/config-files';
import { SLAVES_OPTIONS, bondIpArgs, bondStanzaOptions, nextBondName } from '../../../handlers/network/bond';
import {
  addressInput,
  isNetworkOrBroadcast,
  mtuInput,
  netmaskFromPrefix,
  netmaskInput,
  normalizeAddress,
  prefixFromNetmask,
} from '../../../handlers/network/ipv4';
import { configureStanza } from '../../../handlers/network/stanzas';
import { findInetIface, parseIfupdown } from '../../../handlers/network/parse/ifupdown';

const dir = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', 'fixtures', 'ifupdown');
const appliance = readFileSync(join(dir, 'appliance-bond-underscore.interfaces'), 'utf8');

describe('setIfaceOption', () => {
  it('rewrites the slaves option in place, keeping its spelling and indentation', () => {
    const out = setIfaceOption(appliance, 'bond0', SLAVES_OPTIONS, { value: ['eth0'] });
    expect(out).toBe(appliance.replace('    slaves eth0 eth1\n', '    slaves eth0\n'));
  });

  it('keeps hooks with continuation lines and comments byte for byte', () => {
    const out = setIfaceOption(appliance, 'eth2', ['mtu'], { value: '9000' }) ?? '';
    // added after the last option line of the stanza (the continued post-up), tab-indented like the others
    expect(out).toBe(appliance.replace('\t    eth2 --quiet\n', '\t    eth2 --quiet\n\tmtu 9000\n'));
  });

  it('replaces the first alias and drops the others; deletes with null', () => {
    const text = 'iface bond0 inet manual\n  bond-slaves a b\n  bond_slaves c\n  bond-mode 4\n';
    expect(setIfaceOption(text, 'bond0', SLAVES_OPTIONS, { value: ['x', 'y'] })).toBe(
      'iface bond0 inet manual\n  bond-slaves x y\n  bond-mode 4\n',
    );
    expect(setIfaceOption(text, 'bond0', SLAVES_OPTIONS, null)).toBe('iface bond0 inet manual\n  bond-mode 4\n');
  });

  it('null when there is no inet stanza; injection is refused', () => {
    expect(setIfaceOption('iface eth0 inet6 auto\n', 'eth0', ['mtu'], { value: '1500' })).toBeNull();
    expect(() => setIfaceOption(appliance, 'bond0', SLAVES_OPTIONS, { value: ['eth0\nup reboot'] })).toThrow();
    expect(() => setIfaceOption(appliance, 'bond0', ['post-up'], { value: 'x' })).toThrow(/not allowed/);
  });
});

describe('removal gives back the file as it was before the append', () => {
  const base = '# head\nauto lo\niface lo inet loopback\n';
  it('append then remove is the identity, also between other stanzas', () => {
    const added = replaceIfaceStanza(base, 'eth1', { name: 'eth1', method: 'dhcp' });
    expect(added).toBe(`${base}\nauto eth1\niface eth1 inet dhcp\n`);
    expect(replaceIfaceStanza(added, 'eth1', null)).toBe(base);
    const middle = `${base}\niface eth1 inet dhcp\n\niface eth2 inet dhcp\n`;
    expect(replaceIfaceStanza(middle, 'eth1', null)).toBe(`${base}\niface eth2 inet dhcp\n`);
  });
});

function configOf(files: Record<string, string | null>): NetworkConfig {
  const list = Object.entries(files).map(([path, text]) => ({
    path,
    text,
    parsed: parseIfupdownWithSpans(text ?? ''),
  }));
  return { files: list, merged: parseIfupdown(Object.values(files).join('\n')) };
}

describe('ConfigEdit', () => {
  const cfg = configOf({
    '/etc/network/interfaces': 'auto lo\niface lo inet loopback\n',
    '/etc/network/interfaces.d/eth3': 'auto eth3\niface eth3 inet dhcp\n',
  });

  it('edits a stanza in the file that holds it, adds new ones to the main file', () => {
    const changes = new ConfigEdit(cfg)
      .setStanza({ name: 'eth3', method: 'static', options: [{ name: 'address', value: '10.0.0.3/24' }] })
      .setStanza({ name: 'eth1', method: 'dhcp' })
      .changes();
    expect(changes).toEqual([
      {
        path: '/etc/network/interfaces',
        before: 'auto lo\niface lo inet loopback\n',
        after: 'auto lo\niface lo inet loopback\n\nauto eth1\niface eth1 inet dhcp\n',
      },
      {
        path: '/etc/network/interfaces.d/eth3',
        before: 'auto eth3\niface eth3 inet dhcp\n',
        after: 'auto eth3\niface eth3 inet static\n    address 10.0.0.3/24\n',
      },
    ]);
  });

  it('nothing changed, nothing to write; a missing main file is created', () => {
    expect(new ConfigEdit(cfg).setStanza({ name: 'eth3', method: 'dhcp' }).changes()).toEqual([]);
    const empty = configOf({ '/etc/network/interfaces': null });
    expect(new ConfigEdit(empty).setStanza({ name: 'eth1', method: 'dhcp' }).changes()).toEqual([
      { path: '/etc/network/interfaces', before: null, after: 'auto eth1\niface eth1 inet dhcp\n' },
    ]);
  });
});

describe('configureStanza', () => {
  const bond = findInetIface(parseIfupdown(appliance), 'bond0');
  it('carries mtu and the bond options over unless the request sets them (- and _ are one name)', () => {
    const s = configureStanza(
      'bond0',
      { method: 'static', ip: '172.16.5.21', prefix: 16 },
      [{ name: 'bond-mode', value: 'active-backup' }],
      bond,
    );
    expect(s.options).toEqual([
      { name: 'address', value: '172.16.5.21' },
      { name: 'netmask', value: '255.255.0.0' },
      { name: 'mtu', value: '9000' },
      { name: 'slaves', value: ['eth0', 'eth1'] },
      { name: 'bond_lacp_rate', value: '1' },
      { name: 'bond_miimon', value: '100' },
      { name: 'bond_xmit_hash_policy', value: 'layer3+4' },
      { name: 'bond-downdelay', value: '200' },
      { name: 'bond-updelay', value: '200' },
      { name: 'bond-mode', value: 'active-backup' },
    ]);
    const withMtu = configureStanza('bond0', { method: 'dhcp', mtu: 1500 }, [], bond);
    expect(withMtu.options?.filter((o) => o.name === 'mtu')).toEqual([{ name: 'mtu', value: '1500' }]);
    // a plain NIC loses what the API does not manage
    const eth2 = findInetIface(parseIfupdown(appliance), 'eth2');
    expect(configureStanza('eth2', { method: 'dhcp' }, [], eth2).options).toEqual([]);
  });
});

describe('inputs', () => {
  it('netmask: dotted, prefix, /prefix; refuses holes and 0', () => {
    expect(['255.255.255.0', '24', '/24', 24].map((v) => netmaskInput.parse(v))).toEqual([24, 24, 24, 24]);
    expect(netmaskInput.parse('255.255.255.255')).toBe(32);
    for (const bad of ['255.0.255.0', '0', '33', '0.0.0.0', 'abc', '255.255.255.0/24'])
      expect(netmaskInput.safeParse(bad).success, bad).toBe(false);
    expect(netmaskFromPrefix(20)).toBe('255.255.240.0');
    expect(prefixFromNetmask('255.255.240.0')).toBe(20);
  });

  it('address: plain or CIDR', () => {
    expect(addressInput.parse('10.0.0.5')).toEqual({ ip: '10.0.0.5', prefix: undefined });
    expect(addressInput.parse(' 10.0.0.5/31 ')).toEqual({ ip: '10.0.0.5', prefix: 31 });
    for (const bad of ['10.0.0.5/0', '10.0.0.5/33', '10.0.0.5/24/1', '010.0.0.5', 'fe80::1'])
      expect(addressInput.safeParse(bad).success, bad).toBe(false);
    expect(isNetworkOrBroadcast('10.0.0.255', 24)).toBe(true);
    expect(isNetworkOrBroadcast('10.0.0.0', 31)).toBe(false);
  });

  it('mtu: number or numeric string, 68-9216', () => {
    expect([9000, '9000', ' 1500 '].map((v) => mtuInput.parse(v))).toEqual([9000, 9000, 1500]);
    for (const bad of [67, 9217, '9k', 1500.5, '']) expect(mtuInput.safeParse(bad).success, String(bad)).toBe(false);
  });

  it('the local address of a connection, as node reports it', () => {
    expect(normalizeAddress('::ffff:192.0.2.10')).toBe('192.0.2.10');
    expect(normalizeAddress('FE80::1%eth0')).toBe('fe80::1');
    expect(normalizeAddress(undefined)).toBeNull();
  });

  it('bond tables: argv by name, stanza by number; lacp_rate only in 802.3ad', () => {
    const p = { mode: 4, lacpRate: 1, miimon: 100, updelay: 200, downdelay: 200, xmitHashPolicy: 1 };
    expect(bondIpArgs(p)).toEqual([
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
    ]);
    expect(bondIpArgs({ ...p, mode: 6, xmitHashPolicy: 5 })).toEqual([
      'mode',
      'balance-alb',
      'miimon',
      '100',
      'updelay',
      '200',
      'downdelay',
      '200',
      'xmit_hash_policy',
      'vlan+srcmac',
    ]);
    expect(bondStanzaOptions(p).map((o) => `${o.name} ${o.value}`)).toEqual([
      'bond_mode 4',
      'bond_lacp_rate 1',
      'bond_miimon 100',
      'bond_xmit_hash_policy layer3+4',
      'bond-downdelay 200',
      'bond-updelay 200',
    ]);
    expect(nextBondName((n) => ['bond0', 'bond1', 'bond3'].includes(n))).toBe('bond2');
  });
});
