/**
 * System tier: the nine fs routes through the Node host (built route bundles, live back end,
 * real tools as root) on loop devices:
 *   make_filesystem  ext4, xfs, ext2 and vfat; refuses a device with a signature unless force, a
 *                    mounted one, one holding partitions and one in use as swap
 *   mount / unmount  real mounts, read back with findmnt; 409 / 404 cases
 *   make_directory   mode/owner/group read back with stat
 *   explore          compared field by field with `find -printf` of the same tree (odd names,
 *                    a block device node, a symlink out of the tree, a filesystem mounted
 *                    inside it)
 *   set_permissions  ACLs set and tested, read back with getfacl
 *   xxhash / verify  generate, verify, then corrupt a file and delete another and verify again
 * Everything lives in private temporary directories and loop devices made by helpers/loop.ts;
 * afterAll turns swap off and the harness unmounts and detaches even when a test failed.
 */
import {
  appendFileSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ExploreAnswer, ExploreEntry, XxhashAnswer, XxhashVerifyAnswer } from '../../handlers/fs/responses';
import { parseFindmnt, findmntArgv } from '../../handlers/tools/findmnt';
import { parseGetfacl } from '../../handlers/fs/parse/getfacl';
import { parseWipefs, wipefsArgv } from '../../handlers/fs/parse/wipefs';
import { defaultConfig, mergeConfig } from '../../runtime/config';
import { backendFor } from '../../runtime/host';
import { makeTestHost, type TestHost } from '../helpers/host';
import { createLoopDevice, exec, requireRoot, requireTools, run, type LoopDevice } from './helpers/loop';
import { errorOf } from '../helpers/answers';

const FIND = '/usr/bin/find';
const GETFACL = '/usr/bin/getfacl';
const XXHSUM = '/usr/bin/xxhsum';
const MKSWAP = '/usr/sbin/mkswap';
const SWAPON = '/usr/sbin/swapon';
const SWAPOFF = '/usr/sbin/swapoff';
const PARTX = '/usr/bin/partx';
const MKNOD = '/usr/bin/mknod';

let t: TestHost;
let work: string;
const loops: LoopDevice[] = [];
const swapsOn: string[] = [];

async function loop(sizeMiB: number): Promise<LoopDevice> {
  const l = await createLoopDevice({ sizeMiB });
  loops.push(l);
  return l;
}
/** `T`: the route's answer type, unknown when the test reads no success answer */
const api = <T = unknown>(path: string, body: unknown) => t.call<T>('POST', `/api/v2/fs/${path}`, { body });
const signatures = async (device: string) => parseWipefs((await run(wipefsArgv(device))).stdout);
const mountsOf = async (device: string) => parseFindmnt((await exec(findmntArgv({ source: device }))).stdout);
const lastEvent = () => {
  // the route's events (the job layer's own jobs.job.finished is not the route's)
  const row = t.host.db
    .prepare("SELECT kind, data FROM events WHERE kind NOT LIKE 'jobs.%' ORDER BY seq DESC LIMIT 1")
    .get() as {
    kind: string;
    data: string;
  };
  return { kind: row.kind, data: JSON.parse(row.data) as Record<string, unknown> };
};

beforeAll(async () => {
  requireRoot();
  requireTools(
    '/usr/sbin/mkfs',
    '/usr/sbin/mkfs.ext4',
    '/usr/sbin/mkfs.xfs',
    '/usr/sbin/mkfs.vfat',
    '/usr/bin/lsblk',
    '/usr/sbin/wipefs',
    '/usr/bin/install',
    '/usr/bin/setfacl',
    GETFACL,
    XXHSUM,
    FIND,
    MKSWAP,
    SWAPON,
    SWAPOFF,
    PARTX,
    MKNOD,
  );
  work = mkdtempSync(join(tmpdir(), 'ballast-fs-system-'));
  const live = backendFor(mergeConfig(defaultConfig(), { system: { ...defaultConfig().system, mode: 'live' } }));
  // the built bundles (dist/), as the host serves them; explore may read only our work dir
  t = await makeTestHost({ backend: live, config: { settings: { fs: { mountRoots: [work] } } } });
  // available_fs and make_filesystem read the helper names from the configured sbin
  for (const type of ['ext4', 'xfs', 'vfat']) writeFileSync(join(t.config.paths.sbin, `mkfs.${type}`), '');
});

afterAll(async () => {
  const errors: string[] = [];
  for (const dev of swapsOn) {
    const r = await exec([SWAPOFF, dev]);
    if (r.code !== 0) errors.push(`swapoff ${dev}: ${r.stderr.trim()}`);
  }
  for (const l of loops.reverse()) {
    await exec([PARTX, '-d', l.device]); // partitions added by a test; none is fine
    await l.cleanup().catch((e: Error) => errors.push(e.message));
  }
  await t?.close();
  if (work) rmSync(work, { recursive: true, force: true });
  if (errors.length > 0) throw new Error(errors.join('; '));
});

describe('fs routes on loop devices', () => {
  let ext4: LoopDevice;
  let other: LoopDevice;
  const mnt = () => join(work, 'mnt');
  const inner = () => join(work, 'mnt', 'inner');

  it('make_filesystem: ext4 with options on a blank device; the label is on the disk', async () => {
    ext4 = await loop(64);
    const r = await api('make_filesystem', { device: ext4.device, type: 'ext4', options: ['-L', 'data', '-m', '1'] });
    expect(r.status, r.text).toBe(200);
    expect(typeof r.json).toBe('string');
    expect(r.json).toMatch(/^mke2fs 1\.\d+/);
    expect(r.json).toContain('Creating filesystem with 65536 1k blocks');
    expect(r.json).not.toMatch(/[\b]/);
    const sigs = await signatures(ext4.device);
    expect(sigs.map((s) => [s.type, s.label])).toEqual([['ext4', 'data']]);
    expect(lastEvent()).toEqual({ kind: 'fs.filesystem.created', data: { device: ext4.device, type: 'ext4' } });
  });

  it('make_filesystem: refuses the device now that it carries ext4, and leaves it alone', async () => {
    const r = await api('make_filesystem', { device: ext4.device, type: 'vfat' });
    expect(r.status).toBe(409);
    expect(errorOf(r).details).toEqual({ reason: 'signature' });
    expect(errorOf(r).message).toMatch(/already carries ext4 \(filesystem\) at offset 0x438.*"force": true/);
    expect((await signatures(ext4.device)).map((s) => s.type)).toEqual(['ext4']);
  });

  it('make_filesystem: xfs on a blank device, then ext2 over it with force (mke2fs -F: no xfs left)', async () => {
    other = await loop(320);
    const xfs = await api('make_filesystem', { device: other.device, type: 'xfs', options: ['-L', 'scratch'] });
    expect(xfs.status, xfs.text).toBe(200);
    expect(xfs.json).toMatch(/meta-data=/);
    expect((await signatures(other.device)).map((s) => [s.type, s.label])).toEqual([['xfs', 'scratch']]);

    writeFileSync(join(t.config.paths.sbin, 'mkfs.ext2'), '');
    expect((await api('make_filesystem', { device: other.device, type: 'ext2' })).status).toBe(409);
    const ext2 = await api('make_filesystem', {
      device: other.device,
      type: 'ext2',
      options: ['-L', 'inner', '-q'],
      force: true,
    });
    expect(ext2.status, ext2.text).toBe(200);
    expect((await signatures(other.device)).map((s) => [s.type, s.label])).toEqual([['ext2', 'inner']]);
  });

  it('make_filesystem: a forced xfs on a 96 MiB vfat device is refused before anything is written; the vfat survives', async () => {
    const small = await loop(96);
    const fat = await api('make_filesystem', { device: small.device, type: 'vfat', options: ['-n', 'KEEP'] });
    expect(fat.status, fat.text).toBe(200);
    const before = await signatures(small.device);
    expect(before.map((s) => s.type)).toContain('vfat');
    const r = await api('make_filesystem', { device: small.device, type: 'xfs', force: true });
    expect(r.status, r.text).toBe(409);
    expect(errorOf(r).details).toMatchObject({ reason: 'too-small' });
    expect(await signatures(small.device)).toEqual(before);
  });

  it('make_filesystem: vfat; mounting it works or, without a kernel driver, says so (409)', async () => {
    const fat = await loop(64);
    const r = await api('make_filesystem', { device: fat.device, type: 'vfat', options: ['-n', 'USBKEY', '-F', '32'] });
    expect(r.status, r.text).toBe(200);
    expect(r.json).toMatch(/^mkfs\.fat 4\.2/);
    const sigs = await signatures(fat.device);
    expect([...new Set(sigs.map((s) => s.type))]).toEqual(['vfat']);
    expect(sigs[0].label).toBe('USBKEY');
    mkdirSync(join(work, 'fat'));
    const m = await api('mount', { device: fat.device, mountpoint: join(work, 'fat') });
    // whether the kernel can mount vfat decides the answer; either way it is not a 502
    const kernelHasVfat = /\tvfat$/m.test(readFileSync('/proc/filesystems', 'utf8'));
    if (kernelHasVfat) {
      expect(m.status, m.text).toBe(200);
      expect((await api('unmount', { mountpoint: join(work, 'fat') })).status).toBe(200);
    } else {
      expect(m.status).toBe(409);
      expect(errorOf(m).message).toBe(
        `cannot mount ${fat.device} on ${join(work, 'fat')}: this kernel cannot mount that filesystem type (no driver loaded)`,
      );
    }
  });

  it('mount: mounts ext4 on an existing directory; findmnt agrees', async () => {
    mkdirSync(mnt());
    const r = await api('mount', { device: ext4.device, mountpoint: mnt() });
    expect(r.status, r.text).toBe(200);
    expect(r.json).toBe(`Mounted ${ext4.device} on ${mnt()}`);
    expect((await mountsOf(ext4.device)).map((m) => [m.target, m.fstype])).toEqual([[mnt(), 'ext4']]);
    expect(lastEvent()).toEqual({ kind: 'fs.filesystem.mounted', data: { device: ext4.device, mountpoint: mnt() } });
  });

  it('refuses: mkfs on the mounted device (even forced), mounting it twice, a missing mountpoint or device', async () => {
    const mkfs = await api('make_filesystem', { device: ext4.device, type: 'ext4', force: true });
    expect(mkfs.status).toBe(409);
    expect(errorOf(mkfs).details).toEqual({ reason: 'mounted' });
    mkdirSync(join(work, 'elsewhere'));
    const twice = await api('mount', { device: ext4.device, mountpoint: join(work, 'elsewhere') });
    expect(twice.status).toBe(409);
    expect(errorOf(twice).details).toEqual({ reason: 'already-mounted' });
    const noDir = await api('mount', { device: other.device, mountpoint: join(work, 'no-such-dir') });
    expect(noDir.status).toBe(404);
    expect(errorOf(noDir).message).toBe(
      `cannot mount ${other.device} on ${join(work, 'no-such-dir')}: the mountpoint does not exist`,
    );
    expect(
      (await api('mount', { device: '/dev/ballast-no-such-device', mountpoint: join(work, 'elsewhere') })).status,
    ).toBe(404);
    expect(await mountsOf(other.device)).toEqual([]);
  });

  it('mount refuses system directories however they are named (dot segments, symlinks): 403, nothing mounted', async () => {
    symlinkSync('/etc', join(work, 'etclink'));
    symlinkSync('/usr/sbin', join(work, 'sbinlink'));
    for (const mountpoint of [
      '/etc',
      '/etc/.',
      '/./etc',
      '/usr/.',
      '/usr/sbin',
      '/etc/ssh',
      '/root',
      '/var/lib/ballast',
      '/sbin',
      join(work, 'etclink'),
      join(work, 'sbinlink'),
      '/',
    ]) {
      const r = await api('mount', { device: other.device, mountpoint });
      expect([r.status, mountpoint]).toEqual([403, mountpoint]);
      expect(errorOf(r).code).toBe('forbidden');
    }
    expect(await mountsOf(other.device)).toEqual([]);
    const audited = t.host.db.prepare("SELECT argv FROM audit_log WHERE argv LIKE '%mount%'").all() as {
      argv: string;
    }[];
    expect(
      audited
        .map((a) => JSON.parse(a.argv) as string[])
        .filter((a) => a[0].endsWith('/mount') && !a.at(-1)!.startsWith(work)),
    ).toEqual([]);
  });

  it('paths outside the roots never reach a command: setfacl, install -d, xxhsum on /etc/shadow are 403 and the file is unchanged', async () => {
    const before = await exec(['/usr/bin/getfacl', '-p', '--', '/etc/shadow']);
    const beforeStat = statSync('/etc/shadow');
    const acl = await api('set_permissions', { path: '/etc/shadow', acls: ['u:nobody:rwx'] });
    expect([acl.status, errorOf(acl).code]).toEqual([403, 'forbidden']);
    const viaLink = await api('set_permissions', { path: join(work, 'etclink', 'shadow'), acls: ['u:nobody:rwx'] });
    expect([viaLink.status, errorOf(viaLink).code]).toEqual([403, 'forbidden']);
    const dir = await api('make_directory', { destination: '/etc/shadow' });
    expect([dir.status, errorOf(dir).code]).toEqual([403, 'forbidden']);
    const hash = await api('xxhash', { filenames: ['/etc/shadow'] });
    expect([hash.status, errorOf(hash).code]).toEqual([403, 'forbidden']);
    expect((await exec(['/usr/bin/getfacl', '-p', '--', '/etc/shadow'])).stdout).toBe(before.stdout);
    expect(statSync('/etc/shadow').mtimeMs).toBe(beforeStat.mtimeMs);
    const audited = t.host.db.prepare('SELECT argv FROM audit_log').all() as { argv: string }[];
    expect(audited.filter((a) => a.argv.includes('/etc/shadow'))).toEqual([]);
  });

  it('make_filesystem: refuses a device holding partitions, and one in use as swap', async () => {
    const parted = await loop(64);
    // an MBR with two partitions (no sfdisk on the reference box), made known with partx
    const mbr = Buffer.alloc(512);
    for (const [off, type, lba, sectors] of [
      [446, 0x83, 2048, 32768],
      [462, 0x82, 34816, 65536],
    ]) {
      mbr[off + 4] = type;
      mbr.writeUInt32LE(lba, off + 8);
      mbr.writeUInt32LE(sectors, off + 12);
    }
    mbr[510] = 0x55;
    mbr[511] = 0xaa;
    writeFileSync(parted.image, mbr, { flag: 'r+' });
    await run([PARTX, '-a', parted.device]);
    const held = await api('make_filesystem', { device: parted.device, type: 'ext4', force: true });
    expect(held.status).toBe(409);
    expect(errorOf(held).details).toEqual({ reason: 'in-use' });
    expect(errorOf(held).message).toContain(
      `${parted.device} holds other devices: ${parted.device}p1 (part), ${parted.device}p2 (part)`,
    );

    const swap = await loop(16);
    await run([MKSWAP, swap.device]);
    await run([SWAPON, swap.device]);
    swapsOn.push(swap.device);
    const r = await api('make_filesystem', { device: swap.device, type: 'ext4', force: true });
    expect(r.status).toBe(409);
    expect(errorOf(r)).toMatchObject({
      details: { reason: 'swap' },
      message: `cannot create a filesystem on ${swap.device}: ${swap.device} is in use as swap`,
    });
    await run([SWAPOFF, swap.device]);
    swapsOn.pop();
  });

  it('make_directory: install -d with mode, owner and group; stat agrees', async () => {
    const dest = join(mnt(), 'share', 'new dir');
    const r = await api('make_directory', {
      destination: dest,
      options: ['-m', '2750', '-o', 'nobody', '-g', 'nogroup'],
    });
    expect(r.status, r.text).toBe(200);
    expect(r.json).toEqual({ destination: dest });
    const st = lstatSync(dest);
    expect(st.isDirectory()).toBe(true);
    expect((st.mode & 0o7777).toString(8)).toBe('2750');
    expect(st.uid).toBe(65534);
    expect(st.gid).toBe(65534);
    const bad = await api('make_directory', { destination: join(mnt(), 'x'), options: ['-o', 'ballast-no-such-user'] });
    expect(bad.status).toBe(400);
    expect(errorOf(bad).message).toBe('no such user "ballast-no-such-user"');
  });

  it('explore: the same entries and fields as find -printf on the same tree; no way out through a symlink', async () => {
    const root = mnt();
    const names = [
      'plain.txt',
      'with space.txt',
      'back\\slash',
      'tab\there',
      'ünïcødé ✓',
      'colon: x',
      '-dash',
      ' lead',
    ];
    mkdirSync(join(root, 'data', 'a', 'b', 'c'), { recursive: true });
    names.forEach((n, i) => writeFileSync(join(root, 'data', n), 'x'.repeat(i * 1000)));
    for (let i = 0; i < 40; i++) writeFileSync(join(root, 'data', 'a', `f${i}`), String(i));
    writeFileSync(join(root, 'data', 'a', 'b', 'c', 'deep.txt'), 'deep');
    symlinkSync('/etc', join(root, 'data', 'to-etc'));
    await run([MKNOD, join(root, 'data', 'blockdev'), 'b', '7', '250']);
    // a second filesystem (the ext2) mounted inside the tree: listed, not entered (oneFileSystem default)
    mkdirSync(inner());
    const innerMount = await api('mount', { device: other.device, mountpoint: inner() });
    expect(innerMount.status, innerMount.text).toBe(200);
    writeFileSync(join(inner(), 'on-ext2.txt'), 'v');

    // one walk first: reading a directory the first time moves its atime (relatime)
    await api('explore', { fs_path: root });
    const r = await api<ExploreAnswer>('explore', { fs_path: root });
    expect(r.status, r.text).toBe(200);

    const FIELDS = ['%p', '%D', '%i', '%n', '%U', '%G', '%m', '%y', '%s', '%b', '%T@', '%C@'];
    const out = (
      await run([FIND, root, '-xdev', '-mindepth', '1', '-printf', `${FIELDS.join('\\0')}\\0`])
    ).stdout.split('\0');
    out.pop();
    const found = new Map<string, string[]>();
    for (let i = 0; i < out.length; i += FIELDS.length) found.set(out[i], out.slice(i + 1, i + FIELDS.length));

    const flat: ExploreEntry[] = [];
    const walk = (l: ExploreEntry[]) => l.forEach((e) => (flat.push(e), walk(e.children)));
    walk(r.json.files);
    // -xdev lists the mountpoint itself but not what is below it, like explore
    expect(flat.map((e) => e.path).sort()).toEqual([...found.keys()].sort());
    expect(r.json.total).toBe(found.size);
    const TYPE: Record<string, (e: ExploreEntry) => boolean> = {
      f: (e) => e.isFile,
      d: (e) => e.isDirectory,
      l: (e) => e.isSymbolicLink,
      b: (e) => e.isBlockDevice,
    };
    for (const e of flat) {
      const [dev, ino, nlink, uid, gid, perm, type, size, blocks, mtime, ctime] = found.get(e.path)!;
      expect([e.dev, e.ino, e.nlink, e.uid, e.gid, e.mode & 0o7777, e.size, e.blocks], e.path).toEqual([
        Number(dev),
        Number(ino),
        Number(nlink),
        Number(uid),
        Number(gid),
        parseInt(perm, 8),
        Number(size),
        Number(blocks),
      ]);
      expect(TYPE[type]?.(e), `${e.path} is ${type}`).toBe(true);
      expect(Math.abs(e.mtimeMs - Number(mtime) * 1000), e.path).toBeLessThan(0.01);
      expect(Math.abs(e.ctimeMs - Number(ctime) * 1000), e.path).toBeLessThan(0.01);
      expect(e.mtime).toBe(new Date(e.mtimeMs).toISOString());
      expect(e.name).toBe(e.path.slice(e.path.lastIndexOf('/') + 1));
      expect(e.file_num).toBe(e.children.length);
    }
    const byPath = new Map(flat.map((e) => [e.path, e]));
    expect(byPath.get(join(root, 'data', 'to-etc'))).toMatchObject({ isSymbolicLink: true, children: [] });
    expect(flat.some((e) => e.path.startsWith('/etc') || e.path.includes('to-etc/'))).toBe(false);
    expect(byPath.get(join(root, 'data', 'blockdev'))).toMatchObject({
      isBlockDevice: true,
      rdev: lstatSync(join(root, 'data', 'blockdev')).rdev,
    });
    expect(byPath.get(inner())).toMatchObject({ isDirectory: true, children: [], truncated: true });
    expect(byPath.get(join(root, 'data', 'a'))?.file_num).toBe(41);
    expect(r.json).toMatchObject({ truncated: true, truncatedBy: ['device'], errors: [] });

    // crossing into the ext2 on request
    const across = await api<ExploreAnswer>('explore', { fs_path: root, oneFileSystem: false });
    const innerEntry = (across.json.files as ExploreEntry[]).find((e) => e.name === 'inner')!;
    expect(innerEntry.children.map((c) => c.name)).toEqual(['lost+found', 'on-ext2.txt']);
    expect(across.json.truncated).toBe(false);
  });

  it('set_permissions: sets ACLs (and default ACLs recursively) that getfacl reads back; test changes nothing', async () => {
    const share = join(mnt(), 'share');
    const getfacl = async (p: string) => parseGetfacl((await run([GETFACL, '-p', '--', p])).stdout)[0];

    const set = await api('set_permissions', { path: share, acls: ['u:nobody:rwx', 'g:users:r-x'] });
    expect(set.status, set.text).toBe(200);
    const acl = await getfacl(share);
    expect(acl.entries).toContainEqual({ scope: 'access', tag: 'user', qualifier: 'nobody', perms: 'rwx' });
    expect(acl.entries).toContainEqual({ scope: 'access', tag: 'group', qualifier: 'users', perms: 'r-x' });
    expect(lastEvent()).toEqual({ kind: 'fs.acl.updated', data: { path: share, defaults: false } });

    const defaults = await api('set_permissions', {
      path: share,
      acl: ['u:nobody:rx'],
      defaults: true,
      recursive: true,
    });
    expect(defaults.status, defaults.text).toBe(200);
    const sub = await getfacl(join(share, 'new dir'));
    expect(sub.entries).toContainEqual({ scope: 'default', tag: 'user', qualifier: 'nobody', perms: 'r-x' });

    const before = (await run([GETFACL, '-p', '-R', '--', share])).stdout;
    const test = await api('set_permissions', { path: share, acls: ['g:users:rwx'], recursive: true, test: true });
    expect(test.status, test.text).toBe(200);
    expect(test.json).toContain(`${share}: `);
    expect(test.json).toContain(`${share}/new dir: `);
    expect(test.json).toMatch(/g:users:rwx/);
    expect((await run([GETFACL, '-p', '-R', '--', share])).stdout).toBe(before);

    const unknown = await api('set_permissions', { path: share, acls: ['u:nobody:r', 'u:ballast-no-such-user:rwx'] });
    expect(unknown.status).toBe(400);
    expect(errorOf(unknown).message).toBe(
      'ACL entry "u:ballast-no-such-user:rwx" was refused by setfacl (unknown user or group?)',
    );
    expect((await api('set_permissions', { path: join(mnt(), 'nope'), acls: ['u:nobody:r'] })).status).toBe(404);
  });

  it('xxhash then xxhash_verify; corrupt one file and delete another: results, not errors', async () => {
    const dir = join(mnt(), 'data');
    const files = [
      'plain.txt',
      'with space.txt',
      'back\\slash',
      'tab\there',
      'ünïcødé ✓',
      'colon: x',
      '-dash',
      ' lead',
    ].map((n) => join(dir, n));
    const gen = await api<XxhashAnswer>('xxhash', { fileNames: files, options: ['-H2'] });
    expect(gen.status, gen.text).toBe(200);
    // each hash as xxhsum computes it for that file alone
    for (const [i, f] of files.entries()) {
      const alone = (await run([XXHSUM, '-H2', '--', f])).stdout;
      expect(gen.json.sums[i]).toEqual({ hash: alone.slice(0, 32), fileName: f });
    }

    const sums = join(work, 'data.xxh');
    writeFileSync(
      sums,
      gen.json.sums.map((s: { hash: string; fileName: string }) => `${s.hash}  ${s.fileName}\n`).join(''),
    );
    const ok = await api('xxhash_verify', { checksumFile: sums });
    expect(ok.status, ok.text).toBe(200);
    expect(ok.json).toEqual({ results: files.map((fileName) => ({ fileName, result: 'OK' })), verified: true });

    appendFileSync(files[1], 'corrupted');
    rmSync(files[3]);
    const bad = await api<XxhashVerifyAnswer>('xxhash_verify', { checksumFile: sums });
    expect(bad.status, bad.text).toBe(200);
    expect(bad.json.verified).toBe(false);
    expect(bad.json.results).toEqual(
      files.map((fileName, i) => ({ fileName, result: i === 1 ? 'FAILED' : i === 3 ? 'FAILED open or read' : 'OK' })),
    );

    writeFileSync(
      join(work, 'relative.xxh'),
      `${gen.json.sums[0].hash}  ${files[0]}\n${gen.json.sums[0].hash}  data/plain.txt\n`,
    );
    const rel = await api('xxhash_verify', { checksumFile: join(work, 'relative.xxh') });
    expect(rel.status).toBe(400);
    expect(errorOf(rel).message).toBe(
      `checksum file ${join(work, 'relative.xxh')}: line 2: file name "data/plain.txt" is not an absolute path`,
    );

    const missing = await api('xxhash', { filenames: [files[0], files[3]] });
    expect(missing.status).toBe(404);
    expect(errorOf(missing).details).toEqual({ files: [{ fileName: files[3], reason: 'No such file or directory' }] });
  });

  it('unmount: inner then outer, the second without device (the message names it); then 409 and 404', async () => {
    const i = await api('unmount', { device: other.device, mountpoint: inner() });
    expect(i.status, i.text).toBe(200);
    expect(i.json).toBe(`Unmounted ${other.device} from ${inner()}`);
    const o = await api('unmount', { mountpoint: mnt() });
    expect(o.status, o.text).toBe(200);
    expect(o.json).toBe(`Unmounted ${ext4.device} from ${mnt()}`);
    expect(lastEvent()).toEqual({ kind: 'fs.filesystem.unmounted', data: { device: ext4.device, mountpoint: mnt() } });
    expect(await mountsOf(ext4.device)).toEqual([]);
    expect(await mountsOf(other.device)).toEqual([]);

    const again = await api('unmount', { mountpoint: mnt() });
    expect(again.status).toBe(409);
    expect(errorOf(again).details).toEqual({ reason: 'not-mounted' });
    expect((await api('unmount', { mountpoint: join(work, 'no-such-dir') })).status).toBe(404);
  });
});
