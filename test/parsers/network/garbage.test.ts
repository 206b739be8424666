/**
 * ip addr/ethtool parsers given truncated, foreign or malformed input throw ParseError naming the
 * parser and the line (or the record), never return a half-parsed success. ip link: see
 * test/parsers/tools/ip-link.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { parseError } from '../../helpers/parse-error';
import { parseIpAddr } from '../../../handlers/network/parse/ip-addr';
import { parseEthtool, parseEthtoolDriver } from '../../../handlers/network/parse/ethtool';

const pe = parseError;

describe('ip-addr garbage', () => {
  it('empty output', () => {
    expect(pe(() => parseIpAddr('\n')).message).toMatch(/^ip-addr: line 1: empty output/);
  });
  it('wrong types', () => {
    expect(
      pe(() =>
        parseIpAddr('[{"ifindex":1,"ifname":"lo","addr_info":[{"family":"inet","local":"127.0.0.1","scope":"host"}]}]'),
      ).message,
    ).toContain('record 0 (lo): addr_info.0.prefixlen: ');
  });
  it('brief output (-br) is not what the product runs', () => {
    parseError(() =>
      parseIpAddr('[{"ifname":"lo","operstate":"UNKNOWN","addr_info":[{"local":"127.0.0.1","prefixlen":8}]}]'),
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
