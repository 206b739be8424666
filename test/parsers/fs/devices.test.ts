import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { checkCanMount, checkCanUnmount, checkDeviceFree, type DeviceFacts } from '../../../handlers/fs/device-free';
import { parseProcSwaps } from '../../../handlers/fs/parse/proc-swaps';
import { parseWipefs, wipefsArgv } from '../../../handlers/fs/parse/wipefs';
import { parseFindmnt, type MountEntry } from '../../../handlers/tools/findmnt';
import { flattenLsblk, parseLsblk, type LsblkDevice } from '../../../handlers/tools/lsblk';
import { readFixture } from '../../../runtime/system/fixture-file';
import { parseError } from '../../helpers/parse-error';

const FIXTURES = resolve(import.meta.dirname, '../../../fixtures');
const stdoutOf = (tool: string, name: string) => readFixture(join(FIXTURES, tool, `${name}.yaml`)).stdout;

// lsblk and findmnt themselves (argv, refusals, flattening): test/parsers/tools/

describe('argv builders', () => {
  it('end options with -- before a device', () => {
    expect(wipefsArgv('/dev/loop0').slice(-2)).toEqual(['--', '/dev/loop0']);
    expect(wipefsArgv('/dev/loop0')).toContain('-n'); // never writes
  });
});

describe('parseWipefs / parseProcSwaps', () => {
  it('wipefs: hex offsets, empty output, garbage', () => {
    expect(parseWipefs('')).toEqual([]);
    expect(parseWipefs('{"signatures":[{"device":"sda","offset":"0x1fe","type":"dos"}]}')).toEqual([
      { device: 'sda', offset: 510, type: 'dos', uuid: null, label: null, usage: null },
    ]);
    expect(() => parseWipefs('{"signatures":[{"device":"sda","offset":"far","type":"dos"}]}')).toThrow(/bad offset/);
  });
  it('/proc/swaps: header required, rows checked, names unescaped', () => {
    expect(parseError(() => parseProcSwaps('/dev/sda2 partition 1 0 -2\n')).line).toBe(1);
    expect(
      parseError(() => parseProcSwaps('Filename\tType\tSize\tUsed\tPriority\n/dev/sda2 partition x 0 -2\n')).line,
    ).toBe(2);
    expect(parseProcSwaps('Filename\tType\tSize\tUsed\tPriority\n/a\\011b\\134c file 8 0 -2\n')[0].filename).toBe(
      '/a\tb\\c',
    );
  });
});

// ---- refusal rules -------------------------------------------------------------------------------

const blank = parseLsblk(stdoutOf('lsblk', 'blank-loop')); // /dev/loop1, nothing on it
const partitioned = parseLsblk(stdoutOf('lsblk', 'partitions-mounted-and-swap')); // /dev/loop1 with p1 mounted, p2 swap
const mountedTwice = parseLsblk(stdoutOf('lsblk', 'ext4-mounted-twice')); // /dev/loop0
const allMounts = parseFindmnt(stdoutOf('findmnt', 'all-tree'));
const swaps = parseProcSwaps(stdoutOf('swaps', 'partition-and-file'));
const noSwaps = parseProcSwaps(stdoutOf('swaps', 'none'));

function facts(over: Partial<DeviceFacts>): DeviceFacts {
  return { device: '/dev/loop1', lsblk: blank, mounts: [], swaps: noSwaps, signatures: [], ...over };
}

describe('checkDeviceFree', () => {
  it('a blank device with no signature is free', () => {
    expect(checkDeviceFree(facts({ mounts: allMounts }))).toEqual({ ok: true });
  });

  it('refuses a mounted device (recorded: the same ext4 mounted twice)', () => {
    const r = checkDeviceFree(facts({ device: '/dev/loop0', lsblk: mountedTwice, mounts: allMounts }));
    expect(r).toEqual({
      ok: false,
      code: 'mounted',
      reason: '/dev/loop0 is mounted at "/tmp/ballast-fixtures/mnt space", "/tmp/ballast-fixtures"',
    });
  });

  it('refuses a device findmnt sees mounted even when lsblk does not say so', () => {
    const m: MountEntry = {
      target: '/srv/x',
      source: '/dev/loop1',
      sourceDevice: '/dev/loop1',
      fsroot: null,
      fstype: 'ext4',
      options: [],
      parentTarget: null,
    };
    expect(checkDeviceFree(facts({ mounts: [m] }))).toMatchObject({ ok: false, code: 'mounted' });
  });

  it('refuses a disk holding partitions, naming them and what they are used for', () => {
    const r = checkDeviceFree(facts({ lsblk: partitioned, swaps }));
    expect(r).toMatchObject({ ok: false, code: 'in-use' });
    if (!r.ok) {
      expect(r.reason).toContain('/dev/loop1p1 (part), /dev/loop1p2 (part)');
      expect(r.reason).toContain('/dev/loop1p2 is swap');
    }
  });

  it('refuses active swap, from /proc/swaps or lsblk', () => {
    const p2 = flattenLsblk(partitioned).find((d) => d.name === 'loop1p2') as LsblkDevice;
    expect(checkDeviceFree(facts({ device: '/dev/loop1p2', lsblk: [p2], swaps }))).toMatchObject({
      ok: false,
      code: 'swap',
    });
    const p2NoLsblkMark = { ...p2, mountpoints: [] };
    expect(checkDeviceFree(facts({ device: '/dev/loop1p2', lsblk: [p2NoLsblkMark], swaps }))).toMatchObject({
      ok: false,
      code: 'swap',
    });
  });

  it('refuses a device carrying a filesystem or partition-table signature', () => {
    const dos = parseWipefs(stdoutOf('wipefs', 'dos-partition-table'));
    expect(checkDeviceFree(facts({ signatures: dos }))).toEqual({
      ok: false,
      code: 'signature',
      reason: '/dev/loop1 already carries dos (partition-table) at offset 0x1fe',
    });
    const ext4 = parseWipefs(stdoutOf('wipefs', 'ext4'));
    expect(checkDeviceFree(facts({ signatures: ext4 }))).toMatchObject({ ok: false, code: 'signature' });
    const withFstype = [{ ...blank[0], fstype: 'xfs' }];
    expect(checkDeviceFree(facts({ lsblk: withFstype }))).toMatchObject({
      ok: false,
      code: 'signature',
      reason: '/dev/loop1 already carries xfs',
    });
  });

  it('refuses unknown, read-only and optical devices', () => {
    expect(checkDeviceFree(facts({ device: '/dev/sdz' }))).toMatchObject({ ok: false, code: 'not-a-block-device' });
    expect(checkDeviceFree(facts({ device: '/dev/disk/by-id/x' }))).toMatchObject({
      ok: false,
      code: 'not-a-block-device',
    });
    expect(checkDeviceFree(facts({ lsblk: [{ ...blank[0], ro: true }] }))).toMatchObject({
      ok: false,
      code: 'read-only',
    });
    expect(checkDeviceFree(facts({ lsblk: [{ ...blank[0], type: 'rom' }] }))).toMatchObject({
      ok: false,
      code: 'not-writable',
    });
  });

  it('finds a partition named inside a disk tree', () => {
    const p1 = checkDeviceFree(facts({ device: '/dev/loop1p1', lsblk: partitioned }));
    expect(p1).toMatchObject({ ok: false, code: 'mounted' });
  });
});

describe('checkCanMount / checkCanUnmount', () => {
  const mounts = parseFindmnt(stdoutOf('findmnt', 'source-mounted-twice'));

  // system paths are the host's to refuse: mountpoints must lie below settings.fs.mountRoots
  it('mount: refuses a busy mountpoint and an already mounted device', () => {
    expect(
      checkCanMount({ device: '/dev/loop9', mountpoint: '/tmp/ballast-fixtures/mnt space/', mounts }),
    ).toMatchObject({ ok: false, code: 'mountpoint-busy' });
    expect(checkCanMount({ device: '/dev/loop0', mountpoint: '/srv/new', mounts })).toMatchObject({
      ok: false,
      code: 'already-mounted',
    });
    expect(checkCanMount({ device: '/dev/loop9', mountpoint: '/srv/new', mounts })).toEqual({ ok: true });
  });

  it('unmount: refuses what is not mounted, another device and submounts', () => {
    expect(checkCanUnmount({ mountpoint: '/srv/none', mounts })).toMatchObject({ ok: false, code: 'not-mounted' });
    expect(
      checkCanUnmount({ mountpoint: '/tmp/ballast-fixtures/mnt space', device: '/dev/loop9', mounts }),
    ).toMatchObject({ ok: false, code: 'device-mismatch' });
    expect(checkCanUnmount({ mountpoint: '/tmp/ballast-fixtures', mounts })).toMatchObject({
      ok: false,
      code: 'has-submounts',
    });
    expect(checkCanUnmount({ mountpoint: '/tmp/ballast-fixtures/mnt space', device: '/dev/loop0', mounts })).toEqual({
      ok: true,
    });
  });
});
