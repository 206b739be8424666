/**
 * ifupdown: fixture files against their hand-written expected parse, render → parse round
 * trips, byte-for-byte stanza replacement, injection attempts, and garbage naming its line.
 */
import { describe, expect, it } from 'vitest';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { findInetIface, ifupdownFile, parseIfupdown } from '../../../handlers/network/parse/ifupdown';
import {
  ifaceStanzaInput,
  ifupdownToken,
  renderIfaceBlock,
  renderIfaceStanza,
  replaceIfaceStanza,
  type IfaceStanzaInput,
} from '../../../handlers/network/render/ifupdown';
import { parseError } from '../../helpers/parse-error';

const dir = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', 'fixtures', 'ifupdown');
const read = (name: string) => readFileSync(join(dir, name), 'utf8');

describe('fixtures/ifupdown', () => {
  const files = readdirSync(dir).filter((f) => f.endsWith('.interfaces'));
  it('has fixtures', () => expect(files.length).toBeGreaterThanOrEqual(3));
  for (const f of files) {
    it(f, () => {
      const parsed = parseIfupdown(read(f));
      expect(parsed).toEqual(JSON.parse(read(f.replace(/\.interfaces$/, '.expected.json'))));
      expect(ifupdownFile.safeParse(parsed).success).toBe(true);
    });
  }

  it('merges repeated inet stanzas and ignores inet6 when picking the config', () => {
    const file = parseIfupdown(read('appliance-bond-underscore.interfaces'));
    expect(findInetIface(file, 'eth2')?.options.map((o) => o.name)).toEqual([
      'address',
      'netmask',
      'gateway',
      'post-up',
    ]);
    expect(findInetIface(file, 'nope')).toBeNull();
    const twice = parseIfupdown('iface a inet static\n address 10.0.0.1\niface a inet static\n address 10.0.0.2\n');
    expect(findInetIface(twice, 'a')?.options.map((o) => o.value)).toEqual(['10.0.0.1', '10.0.0.2']);
  });
});

const bond: IfaceStanzaInput = {
  name: 'bond0',
  method: 'static',
  options: [
    { name: 'address', value: '192.168.1.10' },
    { name: 'netmask', value: '255.255.255.0' },
    { name: 'mtu', value: '9000' },
    { name: 'slaves', value: ['eth0', 'eth1'] },
    { name: 'bond_mode', value: '4' },
    { name: 'bond_lacp_rate', value: '1' },
    { name: 'bond_miimon', value: '100' },
    { name: 'bond_xmit_hash_policy', value: 'layer3+4' },
    { name: 'bond-downdelay', value: '200' },
    { name: 'bond-updelay', value: '200' },
  ],
};

describe('render', () => {
  it('renders a stanza exactly', () => {
    expect(renderIfaceStanza(bond)).toBe(
      [
        'auto bond0',
        'iface bond0 inet static',
        '    address 192.168.1.10',
        '    netmask 255.255.255.0',
        '    mtu 9000',
        '    slaves eth0 eth1',
        '    bond_mode 4',
        '    bond_lacp_rate 1',
        '    bond_miimon 100',
        '    bond_xmit_hash_policy layer3+4',
        '    bond-downdelay 200',
        '    bond-updelay 200',
        '',
      ].join('\n'),
    );
    expect(renderIfaceStanza({ name: 'eth3', method: 'dhcp', auto: false })).toBe('iface eth3 inet dhcp\n');
  });

  const cases: IfaceStanzaInput[] = [
    bond,
    { name: 'eth3', method: 'dhcp' },
    { name: 'eth0', method: 'manual', options: [{ name: 'bond-master', value: 'bond0' }] },
    {
      name: 'eth1',
      method: 'static',
      options: [
        { name: 'address', value: '2001:db8::5/64' },
        { name: 'hwaddress', value: '02:00:00:00:00:01' },
      ],
    },
    {
      name: 'eth1.100',
      method: 'static',
      options: [
        { name: 'address', value: '10.1.0.2/16' },
        { name: 'gateway', value: '10.1.0.1' },
      ],
    },
  ];
  for (const c of cases) {
    it(`round trips ${c.name} ${c.method}`, () => {
      const text = renderIfaceStanza(c);
      const file = parseIfupdown(text);
      expect(file.auto).toEqual([c.name]);
      expect(file.ifaces).toHaveLength(1);
      const iface = file.ifaces[0];
      expect(iface?.name).toBe(c.name);
      expect(iface?.family).toBe('inet');
      expect(iface?.method).toBe(c.method);
      expect(iface?.options.map((o) => [o.name, o.value])).toEqual(
        (c.options ?? []).map((o) => [o.name, Array.isArray(o.value) ? o.value.join(' ') : o.value]),
      );
    });
  }
});

describe('injection is rejected', () => {
  const bad: [string, IfaceStanzaInput][] = [
    [
      'newline in a value',
      { name: 'eth0', method: 'static', options: [{ name: 'address', value: '10.0.0.1\n    up rm -rf /' }] },
    ],
    ['carriage return', { name: 'eth0', method: 'static', options: [{ name: 'address', value: '10.0.0.1\rup x' }] }],
    ['# in a value', { name: 'eth0', method: 'static', options: [{ name: 'address', value: '10.0.0.1#x' }] }],
    ['space in a value', { name: 'eth0', method: 'static', options: [{ name: 'address', value: '10.0.0.1 up' }] }],
    [
      'trailing backslash (continuation)',
      { name: 'eth0', method: 'static', options: [{ name: 'address', value: '10.0.0.1\\' }] },
    ],
    ['shell metacharacters', { name: 'eth0', method: 'static', options: [{ name: 'address', value: '$(reboot)' }] }],
    ['quote', { name: 'eth0', method: 'static', options: [{ name: 'address', value: '"10.0.0.1"' }] }],
    ['empty value', { name: 'eth0', method: 'static', options: [{ name: 'address', value: '' }] }],
    ['leading dash', { name: 'eth0', method: 'static', options: [{ name: 'address', value: '-x' }] }],
    [
      'unicode line separator',
      { name: 'eth0', method: 'static', options: [{ name: 'address', value: '10.0.0.1\u2028up x' }] },
    ],
    ['hook option up', { name: 'eth0', method: 'dhcp', options: [{ name: 'up', value: 'reboot' }] }],
    ['hook option post-up', { name: 'eth0', method: 'dhcp', options: [{ name: 'post-up', value: 'reboot' }] }],
    ['hook option pre-up', { name: 'eth0', method: 'dhcp', options: [{ name: 'pre-up', value: 'reboot' }] }],
    ['stanza keyword as option', { name: 'eth0', method: 'dhcp', options: [{ name: 'auto', value: 'eth9' }] }],
    ['source as option', { name: 'eth0', method: 'dhcp', options: [{ name: 'source', value: '/tmp/x' }] }],
    ['newline in an option name', { name: 'eth0', method: 'dhcp', options: [{ name: 'bond\nup', value: 'x' }] }],
    ['newline in the interface name', { name: 'eth0\nup', method: 'dhcp' }],
    ['# in the interface name', { name: 'eth0#', method: 'dhcp' }],
    ['space in the interface name', { name: 'eth 0', method: 'dhcp' }],
    ['too long interface name', { name: 'a234567890123456', method: 'dhcp' }],
    ['unknown method', { name: 'eth0', method: 'ppp' as 'dhcp' }],
    ['static without address', { name: 'eth0', method: 'static', options: [{ name: 'netmask', value: '255.0.0.0' }] }],
    [
      'duplicate option',
      {
        name: 'eth0',
        method: 'static',
        options: [
          { name: 'address', value: '10.0.0.1' },
          { name: 'address', value: '10.0.0.2' },
        ],
      },
    ],
    [
      'bad token in a list',
      { name: 'bond0', method: 'manual', options: [{ name: 'slaves', value: ['eth0', 'eth1\nup x'] }] },
    ],
  ];
  for (const [what, input] of bad) {
    it(what, () => {
      expect(ifaceStanzaInput.safeParse(input).success).toBe(false);
      expect(() => renderIfaceBlock(input)).toThrow();
      expect(() => replaceIfaceStanza('auto lo\niface lo inet loopback\n', 'eth0', input)).toThrow();
    });
  }
  it('the token validator is exported and accepts ordinary values', () => {
    for (const ok of ['802.3ad', 'layer3+4', '192.168.1.10/24', 'fe80::1%eth0', '00:11:22:33:44:55', '9000', 'fast']) {
      expect(ifupdownToken.safeParse(ok).success).toBe(true);
    }
  });
  it('rejects a name that is not the stanza', () => {
    expect(() => replaceIfaceStanza('', 'eth1', { name: 'eth0', method: 'dhcp' })).toThrow();
    expect(() => replaceIfaceStanza('', 'eth0\n', null)).toThrow();
  });
});

describe('replaceIfaceStanza keeps everything else byte for byte', () => {
  const original = read('appliance-bond-underscore.interfaces');

  it('replaces bond0 in place', () => {
    const out = replaceIfaceStanza(original, 'bond0', { ...bond, options: bond.options?.slice(0, 4) });
    const before = original.split('\n');
    const after = out.split('\n');
    // lines 1-23 (up to and including "auto bond0") and everything after the old stanza are untouched
    expect(after.slice(0, 23)).toEqual(before.slice(0, 23));
    expect(after.slice(23, 28)).toEqual([
      'iface bond0 inet static',
      '    address 192.168.1.10',
      '    netmask 255.255.255.0',
      '    mtu 9000',
      '    slaves eth0 eth1',
    ]);
    expect(after.slice(28)).toEqual(before.slice(34));
    // no second "auto bond0": it was already listed
    expect(out.match(/^auto bond0$/gm)).toHaveLength(1);
  });

  it('replacing with the same stanza text is the identity', () => {
    const text = `# head\n\n${renderIfaceStanza(bond)}\n# tail\n`;
    expect(replaceIfaceStanza(text, 'bond0', bond)).toBe(text);
  });

  it('replaces only the inet stanza of eth2 and keeps its inet6 stanza and hooks text elsewhere', () => {
    const out = replaceIfaceStanza(original, 'eth2', { name: 'eth2', method: 'dhcp' });
    expect(out).toContain('allow-auto eth2\niface eth2 inet dhcp\niface eth2 inet6 auto\n');
    expect(out).not.toContain('10.0.0.5');
    expect(out.startsWith('# /etc/network/interfaces -- written by the appliance')).toBe(true);
    expect(
      parseIfupdown(out)
        .ifaces.filter((i) => i.name === 'eth2')
        .map((i) => i.family),
    ).toEqual(['inet', 'inet6']);
  });

  it('appends a new stanza after a blank line, with its auto line', () => {
    const out = replaceIfaceStanza(original, 'eth7', { name: 'eth7', method: 'dhcp' });
    expect(out).toBe(`${original}\nauto eth7\niface eth7 inet dhcp\n`);
    const noNl = 'auto lo\niface lo inet loopback';
    expect(replaceIfaceStanza(noNl, 'eth7', { name: 'eth7', method: 'dhcp', auto: false })).toBe(
      `${noNl}\n\niface eth7 inet dhcp\n`,
    );
    expect(replaceIfaceStanza('', 'eth7', { name: 'eth7', method: 'dhcp' })).toBe('auto eth7\niface eth7 inet dhcp\n');
  });

  it('adds "auto NAME" before a replaced stanza that was not auto', () => {
    const out = replaceIfaceStanza(original, 'eth4', {
      name: 'eth4',
      method: 'static',
      options: [{ name: 'address', value: '10.9.9.9/24' }],
    });
    expect(out).toContain(
      'allow-hotplug eth3 eth4\nauto eth4\niface eth4 inet static\n    address 10.9.9.9/24\nno-auto-down eth2\n',
    );
  });

  it('auto false takes the name out of a shared auto line only', () => {
    const out = replaceIfaceStanza(original, 'eth0', {
      name: 'eth0',
      method: 'manual',
      auto: false,
      options: [{ name: 'bond-master', value: 'bond0' }],
    });
    expect(out).toContain('\nauto lo eth1\n');
    expect(out.split('\n')).toHaveLength(original.split('\n').length);
  });

  it('removes every stanza of a name and its auto/allow entries', () => {
    const out = replaceIfaceStanza(original, 'eth2', null);
    expect(out).not.toMatch(/iface eth2/);
    expect(out).not.toContain('allow-auto');
    expect(out).not.toContain('notify up');
    expect(out).toContain('no-auto-down eth2'); // not a stanza of eth2, kept
    const removedBond = replaceIfaceStanza(original, 'bond0', null);
    expect(removedBond).not.toContain('bond0 inet');
    expect(removedBond).not.toContain('auto bond0');
    expect(removedBond).toContain('    bond-master bond0'); // the ports' stanzas are theirs
    const hot = replaceIfaceStanza(original, 'eth4', null);
    expect(hot).toContain('allow-hotplug eth3\n');
  });

  it('keeps CRLF, tabs and a missing final newline', () => {
    const text = 'auto lo\r\niface lo inet loopback\r\n\r\n# keep\tme  \r\niface eth0 inet dhcp\r\nauto x';
    const out = replaceIfaceStanza(text, 'eth0', {
      name: 'eth0',
      method: 'static',
      auto: false,
      options: [{ name: 'address', value: '10.0.0.1/8' }],
    });
    expect(out).toBe(
      'auto lo\r\niface lo inet loopback\r\n\r\n# keep\tme  \r\niface eth0 inet static\r\n    address 10.0.0.1/8\r\nauto x',
    );
  });

  it('refuses to rewrite a file ifup would reject', () => {
    parseError(() => replaceIfaceStanza('address 10.0.0.1\n', 'eth0', null));
  });
});

describe('garbage names its line', () => {
  const cases: [string, string, number][] = [
    ['option before any stanza', '# hi\n\n  address 10.0.0.1\n', 3],
    ['option after auto', 'auto eth0\n  address 10.0.0.1\n', 2],
    ['iface without method', 'auto eth0\niface eth0 inet\n', 2],
    ['iface without name', '\n\niface\n', 3],
    ['option with empty value', 'iface eth0 inet dhcp\n  mtu\n', 2],
    ['inherits without target', 'iface eth0 inherits\n', 1],
    ['extra word on iface line', 'iface eth0 inet dhcp now\n', 1],
    ['mapping junk', 'mapping eth0\n  address 1\n', 2],
    ['duplicate mapping script', 'mapping eth0\n script a\n script b\n', 3],
    ['source without path', 'source\n', 1],
    ['binary noise', 'iface eth0 inet dhcp\n\u0000\u0001 x\nauto\n\u0007', 4],
  ];
  for (const [what, text, line] of cases) {
    it(what, () => {
      const e = parseError(() => parseIfupdown(text));
      expect(e.line).toBe(line);
      expect(e.message).toContain(`line ${line}`);
    });
  }
});
