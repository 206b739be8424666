/**
 * Route tier: make_filesystem, make_directory, mount and unmount against the replay back end.
 * Each test asserts the exact argv the route ran (and that nothing destructive ran when it
 * refused), the answer, and the fs.* event. Tool outputs are recorded ones where they exist
 * (fixtures/lsblk, findmnt, wipefs) and small constructed ones otherwise.
 */
import { writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import makeDirectory from '../../handlers/fs/routes/make-directory';
import makeFilesystem from '../../handlers/fs/routes/make-filesystem';
import mount from '../../handlers/fs/routes/mount';
import unmount from '../../handlers/fs/routes/unmount';
import { findmntArgv } from '../../handlers/tools/findmnt';
import { lsblkArgv } from '../../handlers/tools/lsblk';
import { wipefsArgv } from '../../handlers/fs/parse/wipefs';
import { AREAS } from '../../runtime/areas/index';
import { readFixture, type Fixture } from '../../runtime/system/fixture-file';
import { createHost } from '../../runtime/host';
import { fixture, distDir, makeTestConfig, makeTestHost, type TestHost } from '../helpers/host';
import { SwitchableReplay } from './fs-helpers';
import { errorOf } from '../helpers/answers';

const FIXTURES = resolve(import.meta.dirname, '../../fixtures');
const recorded = (tool: string, name: string): Fixture => readFixture(join(FIXTURES, tool, `${name}.yaml`));

let t: TestHost;
const backend = new SwitchableReplay();

beforeAll(async () => {
  t = await makeTestHost({ routes: [makeFilesystem, makeDirectory, mount, unmount], backend });
  for (const f of ['mkfs.ext4', 'mkfs.xfs', 'mkfs.vfat']) writeFileSync(join(t.config.paths.sbin, f), '');
});
afterAll(() => t.close());

/** Exactly these fixtures (and no recorded calls) from here on. */
const use = (...fixtures: Fixture[]) => backend.use(fixtures);
const argvs = () => backend.calls().map((c) => c.argv);

async function events(): Promise<{ kind: string; data: Record<string, unknown> }[]> {
  // the route's events (the job layer's own jobs.job.finished is not the route's)
  const rows = t.host.db.prepare("SELECT kind, data FROM events WHERE kind NOT LIKE 'jobs.%' ORDER BY seq").all() as {
    kind: string;
    data: string;
  }[];
  return rows.map((r) => ({ kind: r.kind, data: JSON.parse(r.data) as Record<string, unknown> }));
}
let eventsBefore = 0;
beforeEach(async () => {
  eventsBefore = (await events()).length;
});
const newEvents = async () => (await events()).slice(eventsBefore);

// ---- constructed tool outputs ------------------------------------------------------------------

interface Dev {
  name: string;
  type?: string;
  mountpoints?: (string | null)[];
  fstype?: string | null;
  size?: number;
  children?: Dev[];
}
function lsblkJson(...devs: Dev[]): string {
  const node = (d: Dev): Record<string, unknown> => ({
    name: d.name,
    kname: d.name,
    path: `/dev/${d.name}`,
    'maj:min': '8:16',
    type: d.type ?? 'disk',
    size: d.size ?? 1073741824,
    ro: false,
    fstype: d.fstype ?? null,
    label: null,
    uuid: null,
    pttype: null,
    pkname: null,
    mountpoints: d.mountpoints ?? [null],
    ...(d.children ? { children: d.children.map(node) } : {}),
  });
  return JSON.stringify({ blockdevices: devs.map(node) }, null, 3) + '\n';
}
const lsblk = (device: string, ...devs: Dev[]) => fixture(lsblkArgv(device), lsblkJson(...devs));
const notBlock = (device: string) =>
  fixture(lsblkArgv(device), '{\n   "blockdevices": [\n\n   ]\n}\n', {
    code: 32,
    stderr: `lsblk: ${device}: not a block device\n`,
  });

function findmntJson(mounts: { target: string; source: string; fstype?: string }[]): string {
  const [root, ...rest] = [{ target: '/', source: '/dev/vda', fstype: 'ext4' }, ...mounts];
  const fs = (m: { target: string; source: string; fstype?: string }) => ({
    target: m.target,
    source: m.source,
    fstype: m.fstype ?? 'ext4',
    options: 'rw,relatime',
  });
  return JSON.stringify({ filesystems: [{ ...fs(root), children: rest.map(fs) }] }, null, 3) + '\n';
}
const findmnt = (...mounts: { target: string; source: string; fstype?: string }[]) =>
  fixture(findmntArgv(), findmntJson(mounts));
const wipefsNone = (device: string) => fixture(wipefsArgv(device), '{\n   "signatures": [\n\n   ]\n}\n');
const MKFS = '/usr/sbin/mkfs';

// ---- make_filesystem -----------------------------------------------------------------------------

describe('POST /fs/make_filesystem', () => {
  // mke2fs 1.47.0 output recorded on a 64 MiB loop device (this box, LC_ALL=C, stdout a pipe):
  // the version banner goes to stderr, the progress counters are drawn with backspaces
  const MKE2FS_STDOUT =
    'Discarding device blocks:     0/65536\b\b\b\b\b\b\b\b\b\b\b           \b\b\b\b\b\b\b\b\b\b\bdone                            \n' +
    'Creating filesystem with 65536 1k blocks and 16384 inodes\n' +
    'Filesystem UUID: 492b8f5f-6f6c-4f39-a774-c824a3c9c8c5\n' +
    'Superblock backups stored on blocks: \n\t8193, 24577, 40961, 57345\n\n' +
    'Allocating group tables: 0/8\b\b\b   \b\b\bdone                            \n' +
    'Writing inode tables: 0/8\b\b\b   \b\b\bdone                            \n' +
    'Creating journal (4096 blocks): done\n' +
    'Writing superblocks and filesystem accounting information: 0/8\b\b\b   \b\b\bdone\n\n';
  const MKE2FS_STDERR = 'mke2fs 1.47.0 (5-Feb-2023)\n';

  it('formats a free device: lsblk, findmnt, wipefs -n, then mkfs -t <type> <options> -- <device>; answers the output', async () => {
    use(
      recorded('lsblk', 'blank-loop'),
      findmnt(),
      recorded('wipefs', 'blank'),
      fixture([MKFS, '-t', 'ext4', '-L', 'data', '-m', '1', '--', '/dev/loop1'], MKE2FS_STDOUT, {
        stderr: MKE2FS_STDERR,
      }),
    );
    const r = await t.call('POST', '/api/v2/fs/make_filesystem', {
      body: { device: '/dev/loop1', type: 'ext4', options: ['-L', 'data', '-m', '1'] },
    });
    expect(r.status, r.text).toBe(200);
    expect(r.json).toBe(
      'mke2fs 1.47.0 (5-Feb-2023)\n' +
        'Discarding device blocks: done\n' +
        'Creating filesystem with 65536 1k blocks and 16384 inodes\n' +
        'Filesystem UUID: 492b8f5f-6f6c-4f39-a774-c824a3c9c8c5\n' +
        'Superblock backups stored on blocks:\n\t8193, 24577, 40961, 57345\n\n' +
        'Allocating group tables: done\n' +
        'Writing inode tables: done\n' +
        'Creating journal (4096 blocks): done\n' +
        'Writing superblocks and filesystem accounting information: done\n\n',
    );
    expect(argvs()).toEqual([
      lsblkArgv('/dev/loop1'),
      findmntArgv(),
      wipefsArgv('/dev/loop1'),
      [MKFS, '-t', 'ext4', '-L', 'data', '-m', '1', '--', '/dev/loop1'],
    ]);
    expect(await newEvents()).toEqual([
      { kind: 'fs.filesystem.created', data: { device: '/dev/loop1', type: 'ext4' } },
    ]);
  });

  it('refuses a mounted device (409) and runs no mkfs', async () => {
    use(
      recorded('lsblk', 'ext4-mounted-twice'),
      findmnt({ target: '/tmp/ballast-fixtures', source: '/dev/loop0' }),
      recorded('wipefs', 'ext4'),
    );
    const r = await t.call('POST', '/api/v2/fs/make_filesystem', {
      body: { device: '/dev/loop0', type: 'ext4', force: true },
    });
    expect(r.status).toBe(409);
    expect(errorOf(r).code).toBe('conflict');
    expect(errorOf(r).message).toBe(
      'cannot create a filesystem on /dev/loop0: /dev/loop0 is mounted at "/tmp/ballast-fixtures/mnt space", "/tmp/ballast-fixtures"',
    );
    expect(errorOf(r).details).toEqual({ reason: 'mounted' });
    expect(argvs().some((a) => a[0] === MKFS || a.includes('-a'))).toBe(false);
  });

  it('refuses a device holding partitions (one mounted, one swap), even with force', async () => {
    use(recorded('lsblk', 'partitions-mounted-and-swap'), findmnt(), wipefsNone('/dev/loop1'));
    const r = await t.call('POST', '/api/v2/fs/make_filesystem', {
      body: { device: '/dev/loop1', type: 'ext4', force: true },
    });
    expect(r.status).toBe(409);
    expect(errorOf(r).details).toEqual({ reason: 'in-use' });
    expect(errorOf(r).message).toMatch(
      /holds other devices: \/dev\/loop1p1 \(part\), \/dev\/loop1p2 \(part\).*loop1p2 is swap/,
    );
  });

  it('refuses a device in use as swap', async () => {
    use(lsblk('/dev/sdc', { name: 'sdc', mountpoints: ['[SWAP]'] }), findmnt(), wipefsNone('/dev/sdc'));
    const r = await t.call('POST', '/api/v2/fs/make_filesystem', {
      body: { device: '/dev/sdc', type: 'ext4', force: true },
    });
    expect(r.status).toBe(409);
    expect(errorOf(r)).toMatchObject({
      message: 'cannot create a filesystem on /dev/sdc: /dev/sdc is in use as swap',
      details: { reason: 'swap' },
    });
  });

  it('refuses a device with a signature unless force; with force mkfs overwrites it with its own flag (nothing wiped first)', async () => {
    const ext4 = recorded('wipefs', 'ext4');
    const loop0 = fixture(lsblkArgv('/dev/loop0'), lsblkJson({ name: 'loop0', type: 'loop' }));
    use(loop0, findmnt(), ext4);
    const refused = await t.call('POST', '/api/v2/fs/make_filesystem', { body: { device: '/dev/loop0', type: 'xfs' } });
    expect(refused.status).toBe(409);
    expect(errorOf(refused).message).toBe(
      'cannot create a filesystem on /dev/loop0: /dev/loop0 already carries ext4 (filesystem) at offset 0x438 (send "force": true to overwrite it)',
    );
    expect(errorOf(refused).details).toEqual({ reason: 'signature' });

    const mkfs = [MKFS, '-t', 'xfs', '-f', '--', '/dev/loop0'];
    use(loop0, findmnt(), ext4, fixture(mkfs, 'meta-data=/dev/loop0 isize=512 agcount=4\n'));
    const forced = await t.call('POST', '/api/v2/fs/make_filesystem', {
      body: { device: '/dev/loop0', type: 'xfs', force: true },
    });
    expect(forced.status, forced.text).toBe(200);
    expect(forced.json).toBe('meta-data=/dev/loop0 isize=512 agcount=4\n');
    expect(argvs().slice(-2)).toEqual([wipefsArgv('/dev/loop0'), mkfs]);
    expect(argvs().some((a) => a.includes('-a') && a[0].endsWith('wipefs'))).toBe(false);
  });

  it('a device too small for the type is a 409 before any probe or write, forced or not', async () => {
    const small = fixture(lsblkArgv('/dev/loop1'), lsblkJson({ name: 'loop1', type: 'loop', size: 96 * 1024 * 1024 }));
    use(small, findmnt());
    const before = argvs().length;
    const r = await t.call('POST', '/api/v2/fs/make_filesystem', {
      body: { device: '/dev/loop1', type: 'xfs', force: true },
    });
    expect(r.status).toBe(409);
    expect(errorOf(r).details).toEqual({ reason: 'too-small', size: 96 * 1024 * 1024, minimum: 300_000_000 });
    expect(
      argvs()
        .slice(before)
        .map((a) => a[0].split('/').pop()),
    ).toEqual(['lsblk', 'findmnt']);
  });

  it('resolves a /dev/disk/by-id link through lsblk and formats the node it names', async () => {
    const link = '/dev/disk/by-id/ata-DISK_SERIAL';
    use(
      lsblk(link, { name: 'sdc' }),
      findmnt(),
      wipefsNone('/dev/sdc'),
      fixture([MKFS, '-t', 'vfat', '-n', 'USB', '--', '/dev/sdc'], 'mkfs.fat 4.2 (2021-01-31)\n'),
    );
    const r = await t.call('POST', '/api/v2/fs/make_filesystem', {
      body: { device: link, type: 'vfat', options: ['-n', 'USB'] },
    });
    expect(r.status, r.text).toBe(200);
    expect(r.json).toBe('mkfs.fat 4.2 (2021-01-31)\n');
    expect(argvs()[2]).toEqual(wipefsArgv('/dev/sdc'));
  });

  it('404 for something that is not a block device', async () => {
    use(notBlock('/dev/nope'));
    const r = await t.call('POST', '/api/v2/fs/make_filesystem', { body: { device: '/dev/nope', type: 'ext4' } });
    expect(r.status).toBe(404);
    expect(errorOf(r).message).toBe('/dev/nope is not a block device (or does not exist)');
  });

  it('400 for input it will not run: unknown type, type not installed, options outside the whitelist, a force flag, a non-/dev path', async () => {
    use();
    const bad = async (body: unknown) => errorOf(await t.call('POST', '/api/v2/fs/make_filesystem', { body }));
    expect((await bad({ device: '/dev/sdb', type: 'zfs' })).issues![0].path).toBe('body.type');
    expect(await bad({ device: '/dev/sdb', type: 'btrfs' })).toMatchObject({
      message: 'filesystem type btrfs is not available on this box (see GET /fs/available_fs)',
      issues: [{ path: 'body.type', message: 'mkfs.btrfs is not installed' }],
    });
    expect((await bad({ device: '/dev/sdb', type: 'ext4', options: ['-F'] })).issues).toEqual([
      { path: 'body.options', message: expect.stringMatching(/^option "-F" is not allowed for ext4/) },
    ]);
    expect((await bad({ device: '/dev/sdb', type: 'ext4', options: ['-Ldata'] })).issues![0].message).toBe(
      'option "-Ldata": give the option and its value as two elements, e.g. ["-L", "data"]',
    );
    expect((await bad({ device: '/dev/sdb', type: 'ext4', options: ['-d', '/etc'] })).issues![0].message).toMatch(
      /not allowed/,
    );
    expect((await bad({ device: '/srv/disk.img', type: 'ext4' })).issues).toEqual([
      { path: 'body.device', message: 'must be a device path under /dev/' },
    ]);
    expect((await bad({ device: 'sdb', type: 'ext4' })).issues![0].path).toBe('body.device');
    expect((await bad({ device: '/dev/sdb', type: 'ext4', forse: true })).code).toBe('validation_failed');
    expect(argvs()).toEqual([]);
  });

  it('needs fs:manage', async () => {
    const tok = await t.token(['fs:read']);
    const r = await t.call('POST', '/api/v2/fs/make_filesystem', {
      body: { device: '/dev/sdb', type: 'ext4' },
      token: tok,
    });
    expect(r.status).toBe(403);
  });
});

// ---- make_directory ------------------------------------------------------------------------------

describe('POST /fs/make_directory', () => {
  const INSTALL = '/usr/bin/install';

  it('runs install -d with canonical mode/owner/group options and echoes the destination', async () => {
    const argv = [INSTALL, '-d', '-m', '0750', '-o', 'backup', '-g', '100', '--', '/srv/data/new dir'];
    use(fixture(argv, ''));
    const r = await t.call('POST', '/api/v2/fs/make_directory', {
      body: { destination: '/srv/data/new dir', options: ['--mode', '0750', '-o', 'backup', '--group', '100'] },
    });
    expect(r.status, r.text).toBe(200);
    expect(r.json).toEqual({ destination: '/srv/data/new dir' });
    expect(argvs()).toEqual([argv]);
    expect(await newEvents()).toEqual([{ kind: 'fs.directory.created', data: { destination: '/srv/data/new dir' } }]);
  });

  it('without options: install -d -- <destination>', async () => {
    use(fixture([INSTALL, '-d', '--', '/srv/x'], ''));
    expect((await t.call('POST', '/api/v2/fs/make_directory', { body: { destination: '/srv/x' } })).status).toBe(200);
    expect(argvs()).toEqual([[INSTALL, '-d', '--', '/srv/x']]);
  });

  it('refuses options other than mode, owner and group, joined forms, bad values and relative paths', async () => {
    use();
    const bad = async (body: unknown) => errorOf(await t.call('POST', '/api/v2/fs/make_directory', { body })).issues!;
    expect(await bad({ destination: '/srv/x', options: ['-D'] })).toEqual([
      { path: 'body.options', message: 'option "-D" is not allowed (allowed: -m/--mode, -o/--owner, -g/--group)' },
    ]);
    expect((await bad({ destination: '/srv/x', options: ['--mode=0750'] }))[0].message).toMatch(/two elements/);
    expect((await bad({ destination: '/srv/x', options: ['-m', 'u+rwx'] }))[0].message).toMatch(/octal mode/);
    expect((await bad({ destination: '/srv/x', options: ['-o', '-rf'] }))[0].message).toMatch(
      /user name or numeric uid/,
    );
    expect((await bad({ destination: '/srv/x', options: ['-m', '0750', '--mode', '0700'] }))[0].message).toBe(
      'option "--mode" is given twice',
    );
    expect((await bad({ destination: 'srv/x' }))[0]).toEqual({
      path: 'body.destination',
      message: 'must be an absolute path',
    });
    expect((await bad({ destination: '/srv/../etc' }))[0]).toEqual({
      path: 'body.destination',
      message: 'must not contain ..',
    });
    expect(argvs()).toEqual([]);
  });

  it('maps install refusals: unknown owner 400, an existing file 409', async () => {
    use(
      fixture([INSTALL, '-d', '-o', 'nosuch', '--', '/srv/x'], '', {
        code: 1,
        stderr: "install: invalid user 'nosuch'\n",
      }),
      fixture([INSTALL, '-d', '--', '/srv/file'], '', {
        code: 1,
        stderr: "install: cannot create directory '/srv/file': File exists\n",
      }),
    );
    const owner = await t.call('POST', '/api/v2/fs/make_directory', {
      body: { destination: '/srv/x', options: ['-o', 'nosuch'] },
    });
    expect(owner.status).toBe(400);
    expect(errorOf(owner).message).toBe('no such user "nosuch"');
    const file = await t.call('POST', '/api/v2/fs/make_directory', { body: { destination: '/srv/file' } });
    expect(file.status).toBe(409);
    expect(errorOf(file).message).toBe('/srv/file (or one of its parents) exists and is not a directory');
    expect(await newEvents()).toEqual([]);
  });
});

// ---- mount / unmount -----------------------------------------------------------------------------

describe('POST /fs/mount', () => {
  const MOUNT = '/usr/bin/mount';

  it('mounts: lsblk, findmnt, then mount -- <device> <mountpoint>; answers a message; emits', async () => {
    use(lsblk('/dev/sdc', { name: 'sdc' }), findmnt(), fixture([MOUNT, '--', '/dev/sdc', '/srv/scratch'], ''));
    const r = await t.call('POST', '/api/v2/fs/mount', { body: { device: '/dev/sdc', mountpoint: '/srv/scratch/' } });
    expect(r.status, r.text).toBe(200);
    expect(r.json).toBe('Mounted /dev/sdc on /srv/scratch');
    expect(argvs()).toEqual([lsblkArgv('/dev/sdc'), findmntArgv(), [MOUNT, '--', '/dev/sdc', '/srv/scratch']]);
    expect(await newEvents()).toEqual([
      { kind: 'fs.filesystem.mounted', data: { device: '/dev/sdc', mountpoint: '/srv/scratch' } },
    ]);
  });

  it('UUID=, PARTUUID=, LABEL= sources: blkid resolves them to one device; none 404, several 409 (issue 12 item 6)', async () => {
    const BLKID = '/usr/sbin/blkid';
    const blkid = (tag: string) => [BLKID, '-c', '/dev/null', '-t', tag, '-o', 'device'];
    const uuid = 'UUID=0f3c1f2e-7a1b-4c55-9d6e-1a2b3c4d5e6f';
    use(
      fixture(blkid(uuid), '/dev/sdc\n'),
      lsblk('/dev/sdc', { name: 'sdc' }),
      findmnt(),
      fixture([MOUNT, '--', '/dev/sdc', '/srv/scratch'], ''),
    );
    const r = await t.call('POST', '/api/v2/fs/mount', { body: { device: uuid, mountpoint: '/srv/scratch' } });
    expect(r.status, r.text).toBe(200);
    expect(r.json as unknown).toBe(`Mounted ${uuid} (/dev/sdc) on /srv/scratch`);
    expect(argvs()).toEqual([
      blkid(uuid),
      lsblkArgv('/dev/sdc'),
      findmntArgv(),
      [MOUNT, '--', '/dev/sdc', '/srv/scratch'],
    ]);
    expect(await newEvents()).toEqual([
      { kind: 'fs.filesystem.mounted', data: { device: '/dev/sdc', mountpoint: '/srv/scratch' } },
    ]);

    use(fixture(blkid('LABEL=backup'), '/dev/sdb1\n/dev/sdc1\n'));
    const amb = await t.call('POST', '/api/v2/fs/mount', {
      body: { device: 'LABEL=backup', mountpoint: '/srv/scratch' },
    });
    expect(amb.status).toBe(409);
    expect(amb.json as unknown).toMatchObject({
      error: {
        message: 'LABEL=backup is ambiguous: /dev/sdb1, /dev/sdc1 all have it; give the device path',
        details: { reason: 'ambiguous-source', devices: ['/dev/sdb1', '/dev/sdc1'] },
      },
    });

    use(fixture(blkid('PARTUUID=abcd-01'), '', { code: 2 }));
    const none = await t.call('POST', '/api/v2/fs/mount', {
      body: { device: 'PARTUUID=abcd-01', mountpoint: '/srv/scratch' },
    });
    expect([none.status, (none.json as { error: { message: string } }).error.message]).toEqual([
      404,
      'no block device has PARTUUID=abcd-01',
    ]);
    expect(argvs().filter((a) => a[0] === MOUNT)).toEqual([]);

    // anything else is a 400 before any command: no quoting, options or other tags
    use();
    for (const device of ['UUID=', 'LABEL=-x', 'LABEL=a b', 'TYPE=ext4', 'LABEL="x"', 'uuid=abc', 'UUID=xyz']) {
      const b = await t.call('POST', '/api/v2/fs/mount', { body: { device, mountpoint: '/srv/scratch' } });
      expect([device, b.status]).toEqual([device, 400]);
    }
    expect(argvs()).toEqual([]);
  });

  it('409 when the device is already mounted, or something is mounted on the mountpoint', async () => {
    use(lsblk('/dev/sdb', { name: 'sdb' }), findmnt({ target: '/srv/data', source: '/dev/sdb', fstype: 'xfs' }));
    const twice = await t.call('POST', '/api/v2/fs/mount', { body: { device: '/dev/sdb', mountpoint: '/srv/other' } });
    expect(twice.status).toBe(409);
    expect(errorOf(twice).message).toBe(
      'cannot mount /dev/sdb on /srv/other: /dev/sdb is already mounted at "/srv/data"',
    );
    expect(errorOf(twice).details).toEqual({ reason: 'already-mounted' });

    use(lsblk('/dev/sdc', { name: 'sdc' }), findmnt({ target: '/srv/data', source: '/dev/sdb', fstype: 'xfs' }));
    const busy = await t.call('POST', '/api/v2/fs/mount', { body: { device: '/dev/sdc', mountpoint: '/srv/data' } });
    expect(busy.status).toBe(409);
    expect(errorOf(busy).details).toEqual({ reason: 'mountpoint-busy' });
    expect(argvs().some((a) => a[0] === MOUNT)).toBe(false);
  });

  it('403 for a mountpoint outside the mount roots (an allow-list), before any command runs', async () => {
    const before = argvs().length;
    for (const mountpoint of ['/etc', '/etc/.', '/./etc', '/usr/sbin', '/srv', '/']) {
      const r = await t.call('POST', '/api/v2/fs/mount', { body: { device: '/dev/sdc', mountpoint } });
      expect([r.status, mountpoint]).toEqual([403, mountpoint]);
      expect(errorOf(r).message).toMatch(
        / is outside the fs\.mount roots this host allows \(\/mnt, \/srv, \/media, \/data\)$/,
      );
    }
    expect(argvs().slice(before)).toEqual([]);
  });

  it('404 for a missing device, and for a missing mountpoint (mount says so)', async () => {
    use(notBlock('/dev/sdz'));
    expect(
      (await t.call('POST', '/api/v2/fs/mount', { body: { device: '/dev/sdz', mountpoint: '/srv/x' } })).status,
    ).toBe(404);

    use(
      lsblk('/dev/sdc', { name: 'sdc' }),
      findmnt(),
      fixture([MOUNT, '--', '/dev/sdc', '/srv/nope'], '', {
        code: 32,
        stderr:
          'mount: /srv/nope: mount point does not exist.\n       dmesg(1) may have more information after failed mount system call.\n',
      }),
    );
    const r = await t.call('POST', '/api/v2/fs/mount', { body: { device: '/dev/sdc', mountpoint: '/srv/nope' } });
    expect(r.status).toBe(404);
    expect(errorOf(r)).toMatchObject({
      code: 'not_found',
      message: 'cannot mount /dev/sdc on /srv/nope: the mountpoint does not exist',
      details: { stderr: 'mount: /srv/nope: mount point does not exist.' },
    });
    expect(await newEvents()).toEqual([]);
  });

  it('409 for a device without a filesystem mount recognises; 502 naming the command for anything else', async () => {
    use(
      lsblk('/dev/sdc', { name: 'sdc' }),
      findmnt(),
      fixture([MOUNT, '--', '/dev/sdc', '/srv/x'], '', {
        code: 32,
        stderr:
          'mount: /srv/x: wrong fs type, bad option, bad superblock on /dev/sdc, missing codepage or helper program, or other error.\n',
      }),
    );
    const r = await t.call('POST', '/api/v2/fs/mount', { body: { device: '/dev/sdc', mountpoint: '/srv/x' } });
    expect(r.status).toBe(409);
    expect(errorOf(r).message).toBe(
      'cannot mount /dev/sdc on /srv/x: the device holds no filesystem that can be mounted',
    );

    use(
      lsblk('/dev/sdc', { name: 'sdc' }),
      findmnt(),
      fixture([MOUNT, '--', '/dev/sdc', '/srv/x'], '', { code: 1, stderr: 'mount: /srv/x: permission denied.\n' }),
    );
    const other = await t.call('POST', '/api/v2/fs/mount', { body: { device: '/dev/sdc', mountpoint: '/srv/x' } });
    expect(other.status).toBe(502);
    expect(errorOf(other)).toMatchObject({
      code: 'command_failed',
      details: { command: [MOUNT, '--', '/dev/sdc', '/srv/x'], exitCode: 1 },
    });
  });
});

describe('POST /fs/unmount', () => {
  const UMOUNT = '/usr/bin/umount';
  const target = (path: string) => ['/usr/bin/findmnt', '-J', '-o', 'TARGET', '--target', path];

  it('without device: unmounts, and the message names the device that was mounted (never "undefined")', async () => {
    use(findmnt({ target: '/srv/data', source: '/dev/sdb', fstype: 'xfs' }), fixture([UMOUNT, '--', '/srv/data'], ''));
    const r = await t.call('POST', '/api/v2/fs/unmount', { body: { mountpoint: '/srv/data' } });
    expect(r.status, r.text).toBe(200);
    expect(r.json).toBe('Unmounted /dev/sdb from /srv/data');
    expect(r.json).not.toMatch(/undefined/);
    expect(argvs()).toEqual([findmntArgv(), [UMOUNT, '--', '/srv/data']]);
    expect(await newEvents()).toEqual([
      { kind: 'fs.filesystem.unmounted', data: { device: '/dev/sdb', mountpoint: '/srv/data' } },
    ]);
  });

  it('with device: checks it is what is mounted there', async () => {
    use(
      lsblk('/dev/sdb', { name: 'sdb' }),
      findmnt({ target: '/srv/data', source: '/dev/sdb' }),
      fixture([UMOUNT, '--', '/srv/data'], ''),
    );
    const r = await t.call('POST', '/api/v2/fs/unmount', { body: { device: '/dev/sdb', mountpoint: '/srv/data' } });
    expect(r.json).toBe('Unmounted /dev/sdb from /srv/data');

    use(lsblk('/dev/sdc', { name: 'sdc' }), findmnt({ target: '/srv/data', source: '/dev/sdb' }));
    const wrong = await t.call('POST', '/api/v2/fs/unmount', { body: { device: '/dev/sdc', mountpoint: '/srv/data' } });
    expect(wrong.status).toBe(409);
    expect(errorOf(wrong).message).toBe('cannot unmount /srv/data: "/srv/data" holds /dev/sdb, not /dev/sdc');
    expect(argvs().some((a) => a[0] === UMOUNT)).toBe(false);
  });

  it('409 when not mounted, 404 when the mountpoint does not exist (findmnt --target)', async () => {
    use(findmnt(), fixture(target('/srv/empty'), '{"filesystems": [{"target": "/"}]}\n'));
    const notMounted = await t.call('POST', '/api/v2/fs/unmount', { body: { mountpoint: '/srv/empty' } });
    expect(notMounted.status).toBe(409);
    expect(errorOf(notMounted)).toMatchObject({
      message: 'cannot unmount /srv/empty: "/srv/empty" is not mounted',
      details: { reason: 'not-mounted' },
    });

    use(findmnt(), fixture(target('/srv/nope'), '', { code: 1 }));
    const missing = await t.call('POST', '/api/v2/fs/unmount', { body: { mountpoint: '/srv/nope' } });
    expect(missing.status).toBe(404);
    expect(errorOf(missing).message).toBe('/srv/nope does not exist');
  });

  it('refuses a system mountpoint (403) and one with filesystems below it (409); a busy one is 409', async () => {
    use(findmnt());
    expect((await t.call('POST', '/api/v2/fs/unmount', { body: { mountpoint: '/' } })).status).toBe(403);
    use(findmnt({ target: '/srv/data', source: '/dev/sdb' }, { target: '/srv/data/inner', source: '/dev/sdc' }));
    const below = await t.call('POST', '/api/v2/fs/unmount', { body: { mountpoint: '/srv/data' } });
    expect(below.status).toBe(409);
    expect(errorOf(below).details).toEqual({ reason: 'has-submounts' });
    use(
      findmnt({ target: '/srv/data', source: '/dev/sdb' }),
      fixture([UMOUNT, '--', '/srv/data'], '', { code: 32, stderr: 'umount: /srv/data: target is busy.\n' }),
    );
    const busy = await t.call('POST', '/api/v2/fs/unmount', { body: { mountpoint: '/srv/data' } });
    expect(busy.status).toBe(409);
    expect(errorOf(busy).message).toMatch(/^cannot unmount \/srv\/data: the filesystem is busy/);
    expect(await newEvents()).toEqual([]);
  });
});

// ---- the device root -----------------------------------------------------------------------------

describe('the device root (/dev) is declared by the fs area module, not the host', () => {
  it('a host without the fs area has no device root: the host adds none itself', async () => {
    const { config } = makeTestConfig();
    const host = await createHost({
      config,
      distDir,
      routes: [],
      areas: AREAS.filter((a) => a.name !== 'fs'),
      backend: new SwitchableReplay(),
      log: () => undefined,
    });
    try {
      await expect(host.system.handle('resolve', { path: '/dev/sdc', kind: 'device' })).rejects.toThrow(
        'no roots configured for path kind device',
      );
    } finally {
      await host.close();
    }
  });

  it('with it, mkfs on a node under /dev runs and one outside /dev is refused before anything runs', async () => {
    expect(await t.host.system.handle('resolve', { path: '/dev/sdc', kind: 'device' })).toEqual({ path: '/dev/sdc' });
    const inDev = [MKFS, '-t', 'ext4', '--', '/dev/sdc'];
    use(fixture(inDev, ''));
    expect(await t.host.system.handle('exec', { argv: inDev })).toMatchObject({ code: 0 });
    expect(argvs()).toEqual([inDev]);

    const outside = join(t.root, 'srv', 'disk.img');
    use();
    await expect(t.host.system.handle('exec', { argv: [MKFS, '-t', 'ext4', '--', outside] })).rejects.toMatchObject({
      status: 403,
      message: expect.stringMatching(/is outside the device roots this host allows \(\/dev\)$/),
    });
    expect(argvs()).toEqual([]);
  });
});
