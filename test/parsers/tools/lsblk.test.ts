/**
 * `lsblk -J` (handlers/tools/lsblk.ts): the fs routes' device tree and the pod config's one
 * device. The recorded outputs (fixtures/lsblk) run against their expected parses in
 * fixtures.test.ts.
 */
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { flattenLsblk, lsblkArgv, parseLsblk, parseLsblkOne } from '../../../handlers/tools/lsblk';
import { readFixture } from '../../../runtime/system/fixture-file';
import { parseError } from '../../helpers/parse-error';

const FIXTURES = resolve(import.meta.dirname, '../../../fixtures');
const stdoutOf = (tool: string, name: string) => readFixture(join(FIXTURES, tool, `${name}.yaml`)).stdout;

describe('lsblkArgv', () => {
  it('ends options with -- before a device', () => {
    expect(lsblkArgv('/dev/loop0').slice(-2)).toEqual(['--', '/dev/loop0']);
  });
});

describe('parseLsblk', () => {
  it('refuses non-JSON, naming the line', () => {
    const e = parseError(() => parseLsblk('{\n  "blockdevices": [\n    oops\n  ]\n}\n'));
    expect(e.line).toBe(3);
    expect(parseError(() => parseLsblk('{\n  "blockdevices": [\n')).line).toBe(3); // cut short
  });
  it('refuses output without the PATH column or with human-readable sizes', () => {
    expect(() => parseLsblk('{"blockdevices":[{"name":"sda","type":"disk"}]}')).toThrow(/PATH column/);
    expect(() => parseLsblk('{"blockdevices":[{"name":"sda","path":"/dev/sda","type":"disk","size":"64M"}]}')).toThrow(
      /-b missing/,
    );
    expect(() => parseLsblk('{"devices":[]}')).toThrow(/blockdevices/);
    expect(() => parseLsblk('')).toThrow(/empty/);
  });
  it('accepts the older singular MOUNTPOINT and "0"/"1" booleans', () => {
    const [d] = parseLsblk(
      '{"blockdevices":[{"name":"sda","path":"/dev/sda","type":"disk","ro":"1","size":"512","mountpoint":"/x"}]}',
    );
    expect(d).toMatchObject({ ro: true, size: 512, mountpoints: ['/x'], children: [] });
  });
  it('flattens the tree parents first', () => {
    const tree = parseLsblk(stdoutOf('lsblk', 'partitions-mounted-and-swap'));
    expect(flattenLsblk(tree).map((d) => d.name)).toEqual(['loop1', 'loop1p1', 'loop1p2']);
  });
});

describe('parseLsblkOne (lsblk -d -o PATH,TYPE,FSTYPE,UUID,MOUNTPOINTS -- DEV)', () => {
  it('reads one device; columns not asked for are null', () => {
    expect(
      parseLsblkOne(
        '{"blockdevices":[{"path":"/dev/sdc","type":"disk","fstype":null,"uuid":null,"mountpoints":[null]}]}',
      ),
    ).toEqual({
      name: null,
      kname: null,
      path: '/dev/sdc',
      majMin: null,
      type: 'disk',
      size: null,
      ro: null,
      fstype: null,
      label: null,
      uuid: null,
      pttype: null,
      pkname: null,
      mountpoints: [],
      children: [],
    });
    // util-linux 2.38: one entry per mount (bind mounts too), `[SWAP]` for active swap
    expect(
      parseLsblkOne(
        '{"blockdevices":[{"path":"/dev/sdd","type":"disk","fstype":"ext4","uuid":"u","mountpoints":["/srv/a","/mnt/b"]}]}',
      ).mountpoints,
    ).toEqual(['/srv/a', '/mnt/b']);
  });
  it('refuses a missing mountpoints list, no device or several', () => {
    // asked for and missing (util-linux < 2.37): not read as "not mounted"
    expect(
      parseError(() => parseLsblkOne('{"blockdevices":[{"path":"/dev/sdc","type":"disk","fstype":null,"uuid":null}]}'))
        .message,
    ).toMatch(/mountpoints/);
    expect(parseError(() => parseLsblkOne('{"blockdevices":[]}')).message).toMatch(/one block device/);
    const two =
      '{"blockdevices":[{"path":"/dev/a","type":"disk","mountpoints":[null]},{"path":"/dev/b","type":"disk","mountpoints":[null]}]}';
    expect(parseError(() => parseLsblkOne(two)).message).toMatch(/one block device/);
  });
});
