/**
 * ip/ethtool parsers given truncated, foreign or malformed input throw ParseError naming the
 * parser and the line (or the record), never return a half-parsed success.
 */
import { describe, expect, it } from 'vitest';
import { parseError } from '../../helpers/parse-error';
import { parseIpLink } from '../../../handlers/network/parse/ip-link';
import { parseIpAddr } from '../../../handlers/network/parse/ip-addr';
import { parseEthtool, parseEthtoolDriver } from '../../../handlers/network/parse/ethtool';

const pe = parseError;

const link =
  '[{"ifindex":2,"ifname":"eth0","flags":["UP"],"mtu":1500,"qdisc":"mq","operstate":"UP","link_type":"ether","promiscuity":0}]';

describe('ip-link / ip-addr garbage', () => {
  it('empty output', () => {
    expect(pe(() => parseIpLink('')).line).toBe(1);
    expect(pe(() => parseIpAddr('\n')).message).toMatch(/^ip-addr: line 1: empty output/);
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
    expect(pe(() => parseIpLink(bad)).message).toContain('info_data: mode');
  });
  it('wrong types', () => {
    expect(pe(() => parseIpLink(link.replace('"mtu":1500', '"mtu":"1500"'))).message).toContain('mtu');
    expect(
      pe(() =>
        parseIpAddr('[{"ifindex":1,"ifname":"lo","addr_info":[{"family":"inet","local":"127.0.0.1","scope":"host"}]}]'),
      ).message,
    ).toContain('addr_info.0: prefixlen');
  });
  it('brief output (-br) is not what the product runs', () => {
    parseError(() =>
      parseIpAddr('[{"ifname":"lo","operstate":"UNKNOWN","addr_info":[{"local":"127.0.0.1","prefixlen":8}]}]'),
    );
  });
  it('tolerates unknown keys and empty arrays', () => {
    expect(parseIpLink('[]')).toEqual([]);
    expect(parseIpLink(link.replace('"promiscuity":0', '"promiscuity":0,"future_key":{"x":1}'))[0]?.ifname).toBe(
      'eth0',
    );
  });
});

describe('ethtool garbage', () => {
  it('empty output', () => {
    expect(pe(() => parseEthtool('')).line).toBe(1);
    expect(pe(() => parseEthtoolDriver('')).line).toBe(1);
  });
  it('the failure text ethtool prints on stdout for a missing device', () => {
    expect(pe(() => parseEthtool('No data available\n')).line).toBe(1);
  });
  it('module info (ethtool -m) is not settings output', () => {
    const m =
      '        Identifier                                : 0x03 (SFP)\n        Connector                                 : 0x07 (LC)\n';
    expect(pe(() => parseEthtool(m)).line).toBe(1);
  });
  it('a line without a key', () => {
    expect(pe(() => parseEthtool('Settings for eth0:\n\tSpeed: 1000Mb/s\nrandom words\n')).line).toBe(3);
  });
  it('bad values name their line', () => {
    expect(pe(() => parseEthtool('Settings for eth0:\n\tDuplex: Full\n\tSpeed: fast\n')).line).toBe(3);
    expect(pe(() => parseEthtool('Settings for eth0:\n\tLink detected: maybe\n')).line).toBe(2);
    expect(pe(() => parseEthtool('Settings for eth0:\n\tPHYAD: x\n')).line).toBe(2);
    expect(pe(() => parseEthtool('Settings for eth0:\n\tSupported ports: TP\n')).line).toBe(2);
  });
  it('inconsistent indentation', () => {
    expect(pe(() => parseEthtool('Settings for eth0:\n\tSpeed: 1000Mb/s\n    Duplex: Full\n')).line).toBe(3);
  });
  it('ethtool -i garbage', () => {
    expect(pe(() => parseEthtoolDriver('driver: e1000e\nthis is not a key value line\n')).line).toBe(2);
    expect(pe(() => parseEthtoolDriver('version: 1.0\n')).message).toContain('no "driver:" line');
    expect(pe(() => parseEthtoolDriver('driver: x\nsupports-test: perhaps\n')).line).toBe(2);
  });
  it('CRLF and a new key are tolerated', () => {
    const e = parseEthtool('Settings for eth0:\r\n\tSpeed: 2500Mb/s\r\n\tLanes: 1\r\n\tLink detected: yes\r\n');
    expect(e.speed).toBe(2500);
    expect(e.other).toEqual({ Lanes: '1' });
    expect(e.link_detected).toBe(true);
  });
});
