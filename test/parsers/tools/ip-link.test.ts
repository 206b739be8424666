/**
 * `ip -j [-d] link show` (handlers/tools/ip-link.ts): the network listing's links and the traffic
 * listing's device names (linkNames). Truncated, foreign or malformed input throws a ParseError
 * naming the parser and the line (or the record), never a half-parsed success. The recorded
 * outputs run against their expected parses in the network and traffic fixture tables
 * (fixtures/ip/link-show-*.yaml, fixtures/tc/routes/ip-link-show.yaml).
 */
import { describe, expect, it } from 'vitest';
import { parseError } from '../../helpers/parse-error';
import { linkNames, parseIpLink } from '../../../handlers/tools/ip-link';

const pe = parseError;

const link =
  '[{"ifindex":2,"ifname":"eth0","flags":["UP"],"mtu":1500,"qdisc":"mq","operstate":"UP","link_type":"ether","promiscuity":0}]';

describe('ip-link garbage', () => {
  it('empty output', () => {
    expect(pe(() => parseIpLink('')).line).toBe(1);
    expect(pe(() => parseIpLink('')).message).toMatch(/^ip-link: line 1: empty output/);
  });
  it('truncated JSON names the line', () => {
    const e = pe(() => parseIpLink(link.slice(0, 60)));
    expect(e.parser).toBe('ip-link');
    expect(e.line).toBe(1);
    const pretty = JSON.stringify(JSON.parse(link), null, 2).split('\n');
    const e2 = pe(() => parseIpLink(`${pretty.slice(0, 6).join('\n')}\n  ,,\n`));
    expect(e2.line).toBe(7);
  });
  it('text output instead of JSON', () => {
    expect(pe(() => parseIpLink('1: lo: <LOOPBACK,UP,LOWER_UP> mtu 65536 qdisc noqueue state UNKNOWN\n')).line).toBe(1);
  });
  it('not an array', () => {
    expect(pe(() => parseIpLink('{"ifname":"eth0"}')).message).toContain('JSON array');
  });
  it('a record without required keys names the record and the key', () => {
    const e = pe(() =>
      parseIpLink('[{"ifindex":2,"ifname":"eth0","flags":["UP"],"operstate":"UP","link_type":"ether"}]'),
    );
    expect(e.message).toContain('record 0 (eth0)');
    expect(e.message).toContain('mtu');
  });
  it('a bond without mode', () => {
    const bad = link.replace(
      '"promiscuity":0',
      '"promiscuity":0,"linkinfo":{"info_kind":"bond","info_data":{"miimon":100}}',
    );
    expect(pe(() => parseIpLink(bad)).message).toContain('record 0 (eth0): linkinfo.info_data.mode: ');
  });
  it('wrong types', () => {
    expect(pe(() => parseIpLink(link.replace('"mtu":1500', '"mtu":"1500"'))).message).toContain('mtu');
  });
  it('tolerates unknown keys and empty arrays', () => {
    expect(parseIpLink('[]')).toEqual([]);
    expect(parseIpLink(link.replace('"promiscuity":0', '"promiscuity":0,"future_key":{"x":1}'))[0]?.ifname).toBe(
      'eth0',
    );
  });
});

describe('linkNames (the traffic listing: ip -j link show)', () => {
  const rec = (r: Record<string, unknown>) => ({ mtu: 1500, operstate: 'UNKNOWN', ...r });
  it('keeps kernel order; loopback by link_type or by the LOOPBACK flag; unknown keys ignored', () => {
    const out = JSON.stringify([
      rec({ ifindex: 1, ifname: 'lo', flags: ['LOOPBACK', 'UP'], link_type: 'loopback' }),
      rec({ ifindex: 7, ifname: 'eno2', flags: ['BROADCAST'], link_type: 'ether', altnames: ['enp1s0f1'] }),
      rec({ ifindex: 3, ifname: 'lo2', flags: ['LOOPBACK'], link_type: 'none' }),
    ]);
    expect(linkNames(parseIpLink(out))).toEqual([
      { name: 'lo', loopback: true },
      { name: 'eno2', loopback: false },
      { name: 'lo2', loopback: true },
    ]);
    expect(linkNames(parseIpLink('[]'))).toEqual([]);
  });

  it.each([
    ['empty output', ''],
    ['truncated', '[{"ifname":"lo"'],
    ['not an array', '{"ifname":"lo"}'],
    ['no ifname', '[{"ifindex":1,"flags":[],"mtu":1500,"operstate":"UP","link_type":"ether"}]'],
    ['empty ifname', '[{"ifindex":1,"ifname":"","flags":[],"mtu":1500,"operstate":"UP","link_type":"ether"}]'],
    [
      'flags not a list',
      '[{"ifindex":1,"ifname":"eth0","flags":"UP","mtu":1500,"operstate":"UP","link_type":"ether"}]',
    ],
  ])('%s is a ParseError', (_what, text) => {
    expect(parseError(() => linkNames(parseIpLink(text))).parser).toBe('ip-link');
  });
});
