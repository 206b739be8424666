/**
 * Edge cases and refusals of the traffic parsers, beyond the recorded fixtures: garbage and
 * truncated input must throw a ParseError that names the line, never return a half result.
 */
import { describe, expect, it } from 'vitest';
import { JsonObject, parseJsonMulti } from '../../../handlers/traffic/parse/json-multi';
import { parseTcQdisc } from '../../../handlers/traffic/parse/tc-qdisc';
import { parseTcClass } from '../../../handlers/traffic/parse/tc-class';
import { decodeU32Match, parseTcFilter, parseTcFilterText } from '../../../handlers/traffic/parse/tc-filter';
import {
  formatClassId,
  ipv4ToHex32,
  normalizeHex32,
  parseTcHandle,
  parseTcRate,
  parseTcSize,
  prefixLengthOfMask,
  tcShownRate,
} from '../../../handlers/traffic/parse/tc-units';
import { parseError } from '../../helpers/parse-error';

describe('json-multi', () => {
  it('keeps every value of a repeated key, in order', () => {
    const v = parseJsonMulti('{"a":1,"m":{"x":1},"b":true,"m":{"x":2},"m":null}', 't');
    expect(v).toBeInstanceOf(JsonObject);
    const o = v as JsonObject;
    expect(o.all('m').map((m) => (m instanceof JsonObject ? m.one('x', 't') : m))).toEqual([1, 2, null]);
    expect(o.one('a', 't')).toBe(1);
    expect(o.all('none')).toEqual([]);
    expect(o.keys()).toEqual(['a', 'm', 'b', 'm', 'm']);
  });

  it('one() refuses a repeated key, naming its line', () => {
    const o = parseJsonMulti('{"k":1,\n"k":2}', 't') as JsonObject;
    const e = parseError(() => o.one('k', 't'));
    expect(e.line).toBe(2);
    expect(e.message).toMatch(/"k" appears 2 times/);
  });

  it('reads the JSON grammar: escapes, numbers, literals, nesting', () => {
    const v = parseJsonMulti(
      ' [ "a\\"b\\\\c\\/\\n\\u00e9\\ud83d\\ude00", -1.5e3, 0, true, false, null, [], {} ] \n',
      't',
    );
    expect(v).toEqual(['a"b\\c/\né😀', -1500, 0, true, false, null, [], expect.any(JsonObject)]);
  });

  it.each([
    ['', 1, /empty output/],
    ['   \n  ', 2, /empty output/],
    ['[1,2', 1, /expected "," or "\]" but found end of input/],
    ['[{"a":1}]x', 1, /after the JSON document/],
    ['[{"a" 1}]', 1, /expected ":"/],
    ['[{"a":1,}]', 1, /expected a key/],
    ['[\n\n{"a":01}]', 3, /expected "," or "}"/],
    ['["tab\there"]', 1, /control character/],
    ['["\\x"]', 1, /bad escape/],
    ['["\\u12"]', 1, /bad \\u escape/],
    ['[tru]', 1, /unexpected character "t"/],
    ['Error: Cannot find device "x"', 1, /unexpected character "E"/],
    ['[' + '['.repeat(100), 1, /nesting too deep/],
  ])('refuses %j at line %i', (text, line, msg) => {
    const e = parseError(() => parseJsonMulti(text, 'p'));
    expect(e.parser).toBe('p');
    expect(e.line).toBe(line);
    expect(e.message).toMatch(msg);
    expect(e.message).toMatch(/column \d+/);
  });
});

describe('tc-units', () => {
  it('handles are hex', () => {
    expect(parseTcHandle('1:')).toEqual({ major: 1, minor: 0 });
    expect(parseTcHandle('1:a')).toEqual({ major: 1, minor: 10 });
    expect(parseTcHandle(':4')).toEqual({ major: 0, minor: 4 });
    expect(parseTcHandle('8001:')).toEqual({ major: 0x8001, minor: 0 });
    expect(parseTcHandle('ffff:fff1')).toEqual({ major: 0xffff, minor: 0xfff1 });
    for (const bad of ['1', '1:2:3', 'x:', '12345:', 'root']) expect(parseTcHandle(bad)).toBeNull();
    expect(formatClassId(1, 0xba11)).toBe('1:ba11');
  });

  it('rates as tc prints them', () => {
    expect(parseTcRate('8Mbit')).toBe(8_000_000);
    expect(parseTcRate('500Kbit')).toBe(500_000);
    expect(parseTcRate('999bit')).toBe(999);
    expect(parseTcRate('2Gbit')).toBe(2e9);
    expect(parseTcRate('8Mibit')).toBe(8 * 1024 * 1024);
    expect(parseTcRate('100ibit')).toBe(100);
    for (const bad of ['8mbit', '8Mbps', 'Mbit', '8 Mbit', '']) expect(parseTcRate(bad)).toBeNull();
  });

  it('mirrors print_rate rounding', () => {
    expect(tcShownRate(8_000_000)).toBe(8_000_000);
    expect(tcShownRate(12_345_678)).toBe(12_345_000); // "12345Kbit"
    expect(tcShownRate(1_500_000)).toBe(1_500_000); // "1500Kbit"
    expect(tcShownRate(999)).toBe(999);
    expect(tcShownRate(9_876_544)).toBe(9_876_000);
    expect(tcShownRate(800_000_000_000)).toBe(800_000_000_000);
  });

  it('sizes as tc prints them (1024-based)', () => {
    expect(parseTcSize('1600b')).toBe(1600);
    expect(parseTcSize('15Kb')).toBe(15_360);
    expect(parseTcSize('1Mb')).toBe(1_048_576);
    expect(parseTcSize('16kb')).toBeNull();
  });

  it('hex words and masks', () => {
    expect(normalizeHex32('a000000')).toBe('0a000000');
    expect(normalizeHex32('0xFFFF')).toBe('0000ffff');
    expect(normalizeHex32('123456789')).toBeNull();
    expect(ipv4ToHex32('10.213.77.2')).toBe('0ad54d02');
    expect(prefixLengthOfMask('ffffffff')).toBe(32);
    expect(prefixLengthOfMask('ffffff00')).toBe(24);
    expect(prefixLengthOfMask('00000000')).toBe(0);
    expect(prefixLengthOfMask('ff00ff00')).toBeNull();
  });
});

describe('tc-qdisc', () => {
  it('needs a device when tc did not print one', () => {
    const e = parseError(() => parseTcQdisc('[{"kind":"noqueue","handle":"0:","root":true,"options":{}}]'));
    expect(e.message).toMatch(/no "dev" and no device given/);
  });

  it('an ingress qdisc is owned by its parent', () => {
    expect(parseTcQdisc('[{"kind":"ingress","handle":"ffff:","parent":"ffff:fff1","options":{}}]', 'eth0')).toEqual([
      { qtype: 'ingress', handler: 0xffff, device: 'eth0', owner: 'parent' },
    ]);
  });

  it('htb default 0 is printed as "0"', () => {
    const [q] = parseTcQdisc(
      '[{"kind":"htb","handle":"1:","root":true,"refcnt":2,"options":{"r2q":10,"default":"0","direct_packets_stat":0,"direct_qlen":1000}}]',
      'eth0',
    );
    expect(q!.details!.default).toBe('0');
  });

  it.each([
    ['{"kind":"htb"}', /expected a JSON array/],
    ['[1]', /not an object/],
    ['[{"handle":"1:","root":true}]', /without "kind"/],
    ['[{"kind":"htb","handle":"1:2","root":true}]', /bad handle/],
    ['[{"kind":"htb","handle":"1:"}]', /neither "root" nor a valid "parent"/],
    ['[{"kind":"htb","handle":"1:","root":true,"refcnt":"3"}]', /refcnt is not an integer/],
    ['[{"kind":"htb","handle":"1:","root":true,"options":{"default":30}}]', /default is not hex text/],
    ['[{"kind":"htb","handle":"1:","root":true,"options":{"r2q":1,"r2q":2}}]', /"r2q" appears 2 times/],
    ['[{"kind":"pfifo_fast","handle":"0:","root":true,"options":{"priomap":[1,"2"]}}]', /priomap/],
    ['qdisc noqueue 0: root refcnt 2', /unexpected character "q"/],
  ])('refuses %s', (text, msg) => {
    const e = parseError(() => parseTcQdisc(text, 'eth0'));
    expect(e.parser).toBe('tc-qdisc');
    expect(e.line).toBe(1);
    expect(e.message).toMatch(msg);
  });
});

describe('tc-class', () => {
  it('reads the forms of 6.1 and later: leaf with or without colon, -d extras, dev', () => {
    const text =
      'class htb 1:10 root leaf 10: prio 0 rate 8Mbit ceil 8Mbit burst 1600b cburst 1600b \n' +
      'class htb 1:20 dev eth0 parent 1:1 leaf 20 prio 3 quantum 1000 rate 12345Kbit overhead 4 ceil 1Gbit linklayer ethernet burst 1600b/1 mpu 0b cburst 1Mb/1 mpu 0b level 0 \n';
    expect(parseTcClass(text)).toEqual([
      {
        kind: 'htb',
        classid: '1:10',
        parent: null,
        leaf: '10:',
        prio: 0,
        rate: 8e6,
        ceil: 8e6,
        burst: 1600,
        cburst: 1600,
      },
      {
        kind: 'htb',
        classid: '1:20',
        parent: '1:1',
        leaf: '20:',
        prio: 3,
        rate: 12_345_000,
        ceil: 1e9,
        burst: 1600,
        cburst: 1_048_576,
      },
    ]);
  });

  it('reads a rate-estimator statistics line', () => {
    const text =
      'class htb 1:1 root prio 0 rate 8Mbit ceil 8Mbit burst 16Kb cburst 16Kb \n' +
      ' Sent 1000 bytes 10 pkt (dropped 1, overlimits 2 requeues 3) \n' +
      ' rate 96bit 0pps backlog 3028b 2p requeues 3\n' +
      ' lended: 4 borrowed: 0 giants: 0\n' +
      ' tokens: -5 ctokens: 6\n\n';
    expect(parseTcClass(text)[0]!.stats).toEqual({
      bytes: 1000,
      packets: 10,
      dropped: 1,
      overlimits: 2,
      requeues: 3,
      backlog_bytes: 3028,
      backlog_packets: 2,
      lended: 4,
      borrowed: 0,
      giants: 0,
      tokens: -5,
      ctokens: 6,
    });
  });

  it('other kinds keep id, parent and leaf, and their statistics lines are not read', () => {
    expect(
      parseTcClass('class fq_codel 8001:2 parent 8001: \n  deficit 1514 count 0 lastcount 0 ldelay 0us\n'),
    ).toEqual([{ kind: 'fq_codel', classid: '8001:2', parent: '8001:' }]);
  });

  it.each([
    ['garbage', 1, /expected "class \.\.\."/],
    [
      'class htb 1:1 root prio 0 rate 8Mbit ceil 8Mbit burst 16Kb cburst 16Kb\nWhat is "clas"?',
      2,
      /expected "class \.\.\."/,
    ],
    [' Sent 0 bytes 0 pkt (dropped 0, overlimits 0 requeues 0)', 1, /before any class/],
    ['class htb 1:1 root prio 0 ceil 8Mbit burst 16Kb cburst 16Kb', 1, /has no rate/],
    ['class htb 1:1 root prio 0 rate 8Mbit ceil 8Mbit burst 16Kb cburst 16Kb frob 1', 1, /unknown htb option "frob"/],
    ['class htb 1:1 root rate 8mbps ceil 8Mbit burst 16Kb cburst 16Kb', 1, /is not a rate/],
    ['class htb 1:1 root rate 8Mbit ceil 8Mbit burst 16 cburst 16Kb', 1, /is not a size/],
    ['class htb 1:1 root rate 8Mbit ceil 8Mbit burst 16Kb cburst', 1, /"cburst" without a value/],
    ['class htb 1:1 sideways rate 8Mbit', 1, /expected "root" or "parent"/],
    ['class htb 1:1 parent x rate 8Mbit', 1, /bad parent/],
    [
      'class htb 1:1 root prio 0 rate 8Mbit ceil 8Mbit burst 16Kb cburst 16Kb\n Sent 0 bytes\n',
      2,
      /unknown htb statistics line/,
    ],
    [
      'class htb 1:1 root prio 0 rate 8Mbit ceil 8Mbit burst 16Kb cburst 16Kb\n lended: 0 borrowed: 0 giants: 0\n',
      1,
      /lack "bytes"/,
    ],
    ['[{"class":"htb","handle":"1:1"}]', 1, /JSON class output/],
    ['class htb', 1, /without a kind and a class id/],
  ])('refuses %j at line %i', (text, line, msg) => {
    const e = parseError(() => parseTcClass(text));
    expect(e.parser).toBe('tc-class');
    expect(e.line).toBe(line);
    expect(e.message).toMatch(msg);
  });
});

describe('tc-filter', () => {
  it('decodes only what a u32 key really selects', () => {
    const d = (v: string, m: string, off: number, offmask = '', proto = 'ip') =>
      decodeU32Match(v, m, off, offmask, proto, 1);
    expect(d('c0a80132', 'ffffffff', 16)).toMatchObject({ field: 'dst', address: '192.168.1.50', prefix_length: 32 });
    expect(d('a000000', 'ffffff00', 12)).toMatchObject({
      value: '0a000000',
      field: 'src',
      address: '10.0.0.0',
      prefix_length: 24,
    });
    // value bits outside the mask do not leak into the address
    expect(d('0a0000ff', 'ffffff00', 12)).toMatchObject({ address: '10.0.0.0', prefix_length: 24 });
    expect(d('500000', 'ffff0000', 20)).toMatchObject({ field: 'sport', port: 80 });
    expect(d('1bd', 'ffff', 20)).toMatchObject({ field: 'dport', port: 445 });
    // not decodable: holes in the mask, relative offsets, non-IPv4 protocol, other offsets
    for (const m of [
      d('0a000001', 'ff00ff00', 16),
      d('1bd', 'ffff', 20, 'nexthdr+'),
      d('c0a80132', 'ffffffff', 16, '', 'all'),
      d('60000', 'ff0000', 8),
      d('12345', 'fffff', 20),
    ]) {
      expect(m.field).toBeUndefined();
      expect(m.address).toBeUndefined();
    }
  });

  it('keeps other classifiers (classid, numeric handle) and drops per-pref headers', () => {
    const json =
      '[{"protocol":"ip","pref":49152,"kind":"flower","chain":0,"parent":"1:"},' +
      '{"protocol":"ip","pref":49152,"kind":"flower","chain":0,"parent":"1:","options":{"handle":1,"classid":"1:5","keys":{"dst_ip":"10.0.0.9"},"not_in_hw":true}}]';
    expect(parseTcFilter(json)).toEqual([
      {
        parent: '1:',
        protocol: 'ip',
        pref: 49152,
        kind: 'flower',
        chain: 0,
        handle: '0x1',
        flowid: '1:5',
        matches: [],
      },
    ]);
  });

  it('text: ignores action lines, refuses a match that has no filter', () => {
    const text =
      'filter parent 1: protocol ip pref 1 u32 chain 0 fh 800::1 order 1 key ht 800 bkt 0 flowid 1:1 not_in_hw \n' +
      '  match 0ad54d02/ffffffff at 16\n' +
      '\taction order 1: gact action pass\n';
    expect(parseTcFilterText(text)).toEqual([
      {
        parent: '1:',
        protocol: 'ip',
        pref: 1,
        kind: 'u32',
        chain: 0,
        handle: '800::1',
        flowid: '1:1',
        order: 1,
        matches: [
          {
            offset: 16,
            value: '0ad54d02',
            mask: 'ffffffff',
            offmask: '',
            field: 'dst',
            address: '10.213.77.2',
            prefix_length: 32,
          },
        ],
      },
    ]);
    const e = parseError(() =>
      parseTcFilterText('filter parent 1: protocol ip pref 1 u32 chain 0 \n  match 0ad54d02/ffffffff at 16\n'),
    );
    expect(e.line).toBe(2);
    expect(e.message).toMatch(/match line outside a u32 filter/);
  });

  it.each([
    ['{}', 1, /expected a JSON array/],
    ['[{"parent":"1:","protocol":"ip","kind":"u32"}]', 1, /"pref" is missing/],
    ['[{"parent":"1:","protocol":"ip","pref":1,"kind":"u32","options":[]}]', 1, /"options" is not an object/],
    [
      '[{"parent":"1:","protocol":"ip","pref":1,"kind":"u32","options":{"fh":"800::1","flowid":"1:1","match":{"value":"zz","mask":"ffffffff","offmask":"","off":16}}}]',
      1,
      /not 32-bit hex/,
    ],
    [
      '[{"parent":"1:","protocol":"ip","pref":1,"kind":"u32","options":{"fh":"800::1","flowid":"1:1","match":{"value":"1","mask":"ffffffff","offmask":""}}}]',
      1,
      /"off" is missing/,
    ],
    [
      '[{"parent":"1:","protocol":"ip","pref":1,"kind":"u32","options":{"fh":"800::1","flowid":"1:1","flowid":"1:2"}}]',
      1,
      /"flowid" appears 2 times/,
    ],
    [
      '[{"parent":"1:",\n"protocol":"ip","pref":1,"kind":"u32","chain":0,\n"options":{"fh":"800::1","order":1,',
      3,
      /end of input/,
    ],
  ])('JSON: refuses %j at line %i', (text, line, msg) => {
    const e = parseError(() => parseTcFilter(text));
    expect(e.parser).toBe('tc-filter');
    expect(e.line).toBe(line);
    expect(e.message).toMatch(msg);
  });

  it.each([
    ['Error: Cannot find device "x"', 1, /expected "filter \.\.\."/],
    [
      'filter parent 1: protocol ip pref 1 u32 chain 0 fh 800::1 flowid 1:1\n  match IP dst 192.168.1.50/32match dport 445',
      2,
      /unreadable match/,
    ],
    ['filter protocol ip u32', 1, /without parent, protocol, pref and kind/],
  ])('text: refuses %j at line %i', (text, line, msg) => {
    const e = parseError(() => parseTcFilterText(text));
    expect(e.line).toBe(line);
    expect(e.message).toMatch(msg);
  });
});
