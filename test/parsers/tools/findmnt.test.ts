/**
 * `findmnt -J` (handlers/tools/findmnt.ts): the fs routes' mount table and the pod config's one
 * mount point. The recorded outputs (fixtures/findmnt) run against their expected parses in
 * fixtures.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { findmntArgv, parseFindmnt, parseFindmntOne, splitMountOptions } from '../../../handlers/tools/findmnt';
import { parseError } from '../../helpers/parse-error';

describe('findmntArgv', () => {
  it('passes a mountpoint as the argument of --mountpoint', () => {
    expect(findmntArgv({ mountpoint: '/a b' }).slice(-2)).toEqual(['--mountpoint', '/a b']);
  });
});

describe('parseFindmnt', () => {
  it('empty output (rc 1, nothing matched) is no mounts; garbage is refused', () => {
    expect(parseFindmnt('')).toEqual([]);
    parseError(() => parseFindmnt('{"filesystems":[{"target":"/"}]}'));
    expect(() => parseFindmnt('not json\n')).toThrow(/not valid JSON/);
  });
  it('options split on commas outside quotes', () => {
    expect(splitMountOptions('rw,context="system_u:object_r:a,b",noatime')).toEqual([
      'rw',
      'context="system_u:object_r:a,b"',
      'noatime',
    ]);
    expect(splitMountOptions('')).toEqual([]);
  });
});

describe('parseFindmntOne (findmnt -J -o TARGET,SOURCE,FSTYPE --mountpoint P)', () => {
  it('reads one mount (options not asked for: [])', () => {
    expect(parseFindmntOne('{"filesystems":[{"target":"/srv/data","source":"/dev/sdb","fstype":"xfs"}]}')).toEqual({
      target: '/srv/data',
      source: '/dev/sdb',
      sourceDevice: '/dev/sdb',
      fsroot: null,
      fstype: 'xfs',
      options: [],
      parentTarget: null,
    });
  });
  it('answers the last of several mounts on one place (the one seen there)', () => {
    const stacked =
      '{"filesystems":[{"target":"/srv/data","source":"/dev/sdb","fstype":"xfs"},{"target":"/srv/data","source":"/dev/sdc","fstype":"ext4"}]}';
    expect(parseFindmntOne(stacked)).toMatchObject({ source: '/dev/sdc', fstype: 'ext4' });
  });
  it('refuses garbage and no filesystem', () => {
    expect(parseError(() => parseFindmntOne('{"filesystems":')).message).toMatch(/not valid JSON/);
    expect(parseError(() => parseFindmntOne('{"filesystems":[]}')).message).toMatch(/expected a filesystem/);
  });
});
