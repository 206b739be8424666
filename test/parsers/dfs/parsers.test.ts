/**
 * The dfs parsers beyond the upstream samples: the quirks FORMATS.md documents, each asserted on
 * its own, and garbage or truncated input answered with a ParseError naming the parser and line.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseLctlDl, toDeviceRecord } from '../../../handlers/dfs/parse/lctl-dl';
import { parseGetParam } from '../../../handlers/dfs/parse/get-param';
import { parseLctlPing } from '../../../handlers/dfs/parse/lctl-ping';
import { parseLfsDf } from '../../../handlers/dfs/parse/lfs-df';
import {
  parseExport,
  parseGlobalShow,
  parseNetShow,
  parsePeerShow,
  parseStatsShow,
} from '../../../handlers/dfs/parse/lnetctl';
import { parseMkfsLustre } from '../../../handlers/dfs/parse/mkfs-lustre';
import { parseLustreMounts } from '../../../handlers/dfs/parse/mount';
import { parseZfsList, parseZpoolList, parseZpoolStatus } from '../../../handlers/dfs/parse/zfs';
import { parseFlrConfig } from '../../../handlers/dfs/flr';
import { isNid, isMgsSpec } from '../../../handlers/dfs/names';
import { parseError } from '../../helpers/parse-error';
import { repo } from './samples';

const sample = (p: string) => readFileSync(join(repo, 'fixtures', 'lustre', p), 'utf8');

describe('lctl dl', () => {
  it('splits on whitespace whatever the index alignment, and reads -t NIDs on osc/mdc only', () => {
    const d = parseLctlDl('   0 UP mgc MGC10.0.0.1@tcp abc 5\n10 UP osc fs-OST000a-osc-ffff88 uu 4 10.0.0.7@o2ib2\n');
    expect(d.map((x) => [x.index, x.nid])).toEqual([
      [0, undefined],
      [10, '10.0.0.7@o2ib2'],
    ]);
    expect(toDeviceRecord(d[1])).toEqual({
      status: 'UP',
      type: 'osc',
      name: 'fs-OST000a-osc-ffff88',
      short_name: 'OST000a',
      uuid: 'uu',
      ref_count: '4',
      index: 10,
      filesystem: 'fs',
      nid: '10.0.0.7@o2ib2',
    });
  });
  it("unglues a refcount from a 36-character UUID (the manual's copy error)", () => {
    const [d] = parseLctlDl(sample('lctl-dl/manual-1.8-era-device_list-mgs-mds-client.txt')).slice(1, 2);
    expect([d.uuid, d.refcount]).toEqual(['1f45bb57-d9be-2ddb-c0b0-5431a4922670', 5]);
  });
  it('keeps duplicate indices of the hand-edited fixture', () => {
    expect(
      parseLctlDl(sample('lctl-dl/iml-2.5.0-ldiskfs-oss-HANDEDITED.txt')).filter((x) => x.index === 7),
    ).toHaveLength(2);
  });
  it('refuses garbage', () => {
    expect(parseError(() => parseLctlDl('  0 UP mgc MGC\n')).line).toBe(1);
    expect(parseError(() => parseLctlDl('  0 XX mgc a b 1\n')).message).toMatch(/unknown device status/);
    expect(parseError(() => parseLctlDl('  0 UP osc a b 1 notanid\n')).message).toMatch(/not a NID/);
    expect(parseError(() => parseLctlDl('<html>\n')).parser).toBe('lctl dl');
  });
});

describe('lctl get_param', () => {
  it('reads single-line, multi-line (name= then lines) and continued (health_check) values', () => {
    const p = parseGetParam(
      'a.b=1\nmgs.MGS.filesystems=\nfs1\nfs2\nhealth_check=device x reported unhealthy\nNOT HEALTHY\nc=2\n',
    );
    expect(p).toEqual([
      { name: 'a.b', value: '1' },
      { name: 'mgs.MGS.filesystems', value: 'fs1\nfs2' },
      { name: 'health_check', value: 'device x reported unhealthy\nNOT HEALTHY' },
      { name: 'c', value: '2' },
    ]);
  });
  it('refuses garbage', () => {
    expect(parseError(() => parseGetParam('no equals here\n')).line).toBe(1);
  });
});

describe('lctl ping', () => {
  it('reads NIDs on any whitespace, the ids-listed tail, failures', () => {
    expect(parseLctlPing('12345-0@lo 12345-11.11.11.34@o2ib\n').nids).toEqual(['0@lo', '11.11.11.34@o2ib']);
    expect(parseLctlPing('12345-0@lo\n1 out of 1 ids listed\n').nids).toEqual(['0@lo']);
    expect(parseLctlPing('failed to ping 10.0.0.1@tcp: Input/output error\n').failures).toEqual([
      { nid: '10.0.0.1@tcp', error: 'Input/output error' },
    ]);
  });
  it('refuses garbage', () => {
    expect(parseError(() => parseLctlPing('12345-notanid\n')).line).toBe(1);
  });
});

describe('lfs df', () => {
  it('reads both summary spellings', () => {
    expect(parseLfsDf(sample('lfs-df/prodfeng-2.8-lfs-df-h-filesystem-summary-with-space.txt'))[0].summary?.total).toBe(
      '14.0G',
    );
    expect(parseLfsDf(sample('lfs-df/gmagklaras-lfs-df-h-1mdt-1ost.txt'))[0].summary?.total).toBe('180.2G');
  });
  it('reads hex UUID vs decimal index, error and inactive rows, flags, -i, collapsed columns, several filesystems', () => {
    const az = parseLfsDf(sample('lfs-df/ddn-exascaler-cloud-az-lfs-df-24ost.txt'))[0];
    expect(az.rows.find((r) => r.uuid === 'exacloud-OST000a_UUID')?.targetIndex).toBe(10);
    expect(az.summary).toMatchObject({ total: '12706795008', used: '30348', available: '12577522452' });
    const man = parseLfsDf(sample('lfs-df/lustre-man-lfs-df-hv-inactive-degraded-readonly.txt'))[0];
    expect(man.rows.map((r) => r.flags ?? r.error ?? '')).toEqual(['', '', 'D', 'DR', 'inactive device', '']);
    expect(parseLfsDf(sample('lfs-df/manual-lfs-df-i-mdt-out-of-inodes.txt'))[0].mode).toBe('inodes');
    expect(parseLfsDf(sample('lfs-df/nersc-pytokio-lfs-df-cray-4fs.txt'))).toHaveLength(4);
    expect(parseLfsDf(sample('lfs-df/gmagklaras-lfs-df-h-HANGS-oss-down.txt'))[0].summary).toBeUndefined();
  });
  it('refuses garbage', () => {
    expect(parseError(() => parseLfsDf('hello\n')).message).toMatch(/before any UUID header/);
    expect(
      parseError(() =>
        parseLfsDf('UUID 1K-blocks Used Available Use% Mounted on\nfs-OST0000_UUID 1 2 x 5% /m[OST:0]\n'),
      ).line,
    ).toBe(2);
    expect(
      parseError(() => parseLfsDf('UUID 1K-blocks Used Available Use% Mounted on\nfs-OST0000_UUID 1 2 3 5 /m[OST:0]\n'))
        .message,
    ).toMatch(/percentage/);
  });
});

describe('lnetctl', () => {
  it('parses duplicated show: blocks (LNet down) leniently', () => {
    expect(parseExport(sample('lnetctl-export/lustre-collector-export-LNET-DOWN-errors.yaml')).errors).toHaveLength(5);
    expect(
      parseNetShow(
        'show:\n    - net:\n          errno: -100\n          descr: "cannot get networks: Network is down"\n',
      ),
    ).toEqual({
      networks: [],
      errors: [{ section: 'net', errno: -100, descr: 'cannot get networks: Network is down' }],
    });
  });
  it('reads Multi-Rail True/False, peers as nid lists (--backup), global key drift, stats', () => {
    expect(
      parsePeerShow(
        sample('lnetctl-export/lustre-tests-sanity-lnet-expected-export-backup-2-peers.yaml'),
      ).peers[0].peer_ni.map((n) => n.nid),
    ).toEqual(['1.1.1.1@tcp', '2.2.2.2@tcp', '4.4.4.4@tcp', '3.3.3.3@o2ib', '5@gni']);
    expect(parseGlobalShow(sample('lnetctl-global-show/gmagklaras-global-show-REINDENTED.yaml')).max_interfaces).toBe(
      200,
    );
    expect(parseStatsShow(sample('lnetctl-stats-show/lustrefs-exporter-stats-show.yaml')).drop_length).toBe(4832);
    const mr = parseNetShow(sample('lnetctl-net-show/lustrefs-exporter-net-show-v4-tcp-multirail.yaml')).networks[1];
    expect(mr.local_ni_s.map((n) => n.interfaces)).toEqual([{ '0': 'mlxen0' }, { '0': 'mlxen1' }]);
  });
  it('refuses garbage', () => {
    expect(parseError(() => parseNetShow('net: [oops\n')).parser).toBe('lnetctl net show');
    expect(parseError(() => parseNetShow('    indented first\nnot a key line\n')).line).toBe(2);
    expect(parseError(() => parseNetShow('net:\n    - local NI(s): []\n')).message).toMatch(/net type/);
    expect(parseError(() => parseGlobalShow('peer: []\n')).message).toMatch(/no global/);
    expect(parseError(() => parseStatsShow('statistics:\n    a: x\n')).message).toMatch(/not a number/);
  });
});

describe('mkfs.lustre', () => {
  it('reads flags, an index, empty or comma-led mount options, two mkfs_cmd lines, properties', () => {
    const o = parseMkfsLustre(sample('mkfs.lustre/gmagklaras-mkfs-ldiskfs-ost.txt'));
    expect([o.target, o.index, o.flags, o.flagNames, o.mountOpts]).toEqual([
      'DIAS:OST0001',
      1,
      0x62,
      ['OST', 'first_time', 'update'],
      ',errors=remount-ro',
    ]);
    const z = parseMkfsLustre(sample('mkfs.lustre/cn-notes-2.15.1-mkfs-zfs-mgs-mdt-o2ib-acl.txt'));
    expect([z.flags, z.dataset, z.properties.svname, z.parameters.map((p) => p.key)]).toEqual([
      0x1065,
      'metapool/mdt',
      'lustre1:MDT0000',
      ['mgsnode', 'failover.node'],
    ]);
  });
  it('refuses garbage', () => {
    expect(parseError(() => parseMkfsLustre('mkfs.lustre: Unable to mount\n')).message).toMatch(/Permanent disk data/);
    expect(parseError(() => parseMkfsLustre('Permanent disk data:\nTarget: x\n')).message).toMatch(/unexpected target/);
  });
});

describe('zpool / zfs / mount listings', () => {
  it('reads old and new zpool list columns, spares, import listings', () => {
    expect(parseZpoolList(sample('zpool/prodfeng-2.8-zpool-list-old-columns.txt')).map((r) => r.health)).toEqual([
      'ONLINE',
      'ONLINE',
    ]);
    const st = parseZpoolStatus(sample('zpool/prodfeng-2.15-zpool-status-draid-and-mirror.txt'));
    expect(st.map((p) => p.pool)).toEqual(['datapool', 'metapool']);
    expect(st[0].config.find((v) => v.section === 'spares')).toEqual({
      name: 'draid1-0-0',
      depth: 1,
      state: 'AVAIL',
      section: 'spares',
    });
  });
  it('reads client and server mounts, failover MGS nodes', () => {
    expect(
      parseLustreMounts('10.0.0.1@tcp,10.1.0.1@o2ib:10.0.0.2@tcp:/fs on /mnt/a b type lustre (rw,flock)\n'),
    ).toEqual([
      {
        spec: '10.0.0.1@tcp,10.1.0.1@o2ib:10.0.0.2@tcp:/fs',
        mountpoint: '/mnt/a b',
        options: ['rw', 'flock'],
        fsname: 'fs',
        mgs: [['10.0.0.1@tcp', '10.1.0.1@o2ib'], ['10.0.0.2@tcp']],
      },
    ]);
  });
  it('refuses garbage', () => {
    expect(parseError(() => parseZpoolList('NAME SIZE\nx 1\n')).message).toMatch(/ALLOC/);
    expect(parseError(() => parseZfsList('NAME USED AVAIL REFER MOUNTPOINT\na b\n')).line).toBe(2);
    expect(parseError(() => parseZpoolStatus('  pool: p\n state: ONLINE\nconfig:\n\n\tp  WEIRD 0 0 0\n')).line).toBe(5);
    expect(parseError(() => parseLustreMounts('/dev/sda1 on / type ext4 (rw)\n')).line).toBe(1);
  });
});

describe('names and the FLR file', () => {
  it('accepts the NIDs of the spec and nothing else', () => {
    for (const n of ['10.0.0.1@tcp', '192.168.1.2@o2ib1', '0@lo', '5@gni']) expect(isNid(n), n).toBe(true);
    for (const n of [
      '10.0.0.256@tcp',
      '10.0.0.1@eth0',
      '1@lo',
      '10.0.0.1',
      '@tcp',
      '10.0.0.1@tcp ',
      '01.0.0.1@tcp',
      '5@tcp',
    ])
      expect(isNid(n), n).toBe(false);
    expect(isMgsSpec('10.0.0.1@tcp:10.0.0.2@tcp')).toBe(true);
    expect(isMgsSpec('10.0.0.1@tcp:/x')).toBe(false);
  });
  it('refuses an FLR file that is not the configuration', () => {
    expect(parseError(() => parseFlrConfig('max_history_size=1')).message).toBe(
      'flr config: line 1: output is not valid JSON',
    );
    const e = parseError(() => parseFlrConfig('{"max_history_size":1,"run_interval":1,"directories":[],"x":1}'));
    expect([e.parser, e.message]).toEqual(['flr config', 'flr config: unexpected JSON: (root): Unrecognized key: "x"']);
    expect(parseError(() => parseFlrConfig('{"max_history_size":"x","run_interval":1,"directories":[]}')).message).toBe(
      'flr config: unexpected JSON: max_history_size: Invalid input: expected number, received string',
    );
  });
});

describe('the lnetctl YAML renderer', () => {
  it('renders what net show would print, and reads back the same networks', async () => {
    const { renderLnetYaml } = await import('../../../handlers/dfs/render/lnet-yaml');
    const cfg = {
      net: [
        { 'net type': 'lo', 'local NI(s)': [{ nid: '0@lo', status: 'up' as const }] },
        {
          'net type': 'o2ib1',
          'local NI(s)': [
            {
              nid: '192.168.1.2@o2ib1',
              status: 'up' as const,
              interfaces: { '0': 'ib0' },
              'lnd tunables': null,
              'health stats': { 'health value': 1000 },
            },
          ],
        },
      ],
    };
    const y = renderLnetYaml(cfg);
    expect(y).toBe(
      'net:\n    - net type: lo\n      local NI(s):\n          - nid: 0@lo\n            status: up\n    - net type: o2ib1\n      local NI(s):\n          - nid: 192.168.1.2@o2ib1\n            status: up\n            interfaces:\n                0: ib0\n            lnd tunables:\n            health stats:\n                health value: 1000\n',
    );
    const back = parseNetShow(y).networks;
    expect(back.map((n) => [n.net_type, n.local_ni_s.map((x) => [x.nid, x.interfaces, x.detail])])).toEqual([
      ['lo', [['0@lo', undefined, {}]]],
      [
        'o2ib1',
        [['192.168.1.2@o2ib1', { '0': 'ib0' }, { 'lnd tunables': null, 'health stats': { 'health value': 1000 } }]],
      ],
    ]);
  });
});
