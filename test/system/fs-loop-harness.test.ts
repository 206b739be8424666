/**
 * System tier: the loop-device harness works, and the fs parsers read what the real tools
 * print on a real ext4 filesystem with odd file names. Needs root, losetup, e2fsprogs,
 * xxhash and acl; a missing tool fails the suite (no skips).
 */
import { existsSync, statSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkAclEntry } from '../../handlers/fs/acl';
import { checkCanMount, checkCanUnmount, checkDeviceFree } from '../../handlers/fs/device-free';
import { findmntArgv, parseFindmnt } from '../../handlers/tools/findmnt';
import { parseGetfacl, parseSetfaclTest } from '../../handlers/fs/parse/getfacl';
import { lsblkArgv, parseLsblk } from '../../handlers/tools/lsblk';
import { parseProcSwaps } from '../../handlers/fs/parse/proc-swaps';
import { parseWipefs, wipefsArgv } from '../../handlers/fs/parse/wipefs';
import {
  checkChecksumFile,
  parseChecksumFile,
  parseXxhsumCheck,
  parseXxhsumSums,
} from '../../handlers/fs/parse/xxhsum';
import {
  attachedLoopDevices,
  createLoopDevice,
  exec,
  requireTools,
  run,
  wipeSignatures,
  type LoopDevice,
} from './helpers/loop';

const XXHSUM = '/usr/bin/xxhsum';
const GETFACL = '/usr/bin/getfacl';
const SETFACL = '/usr/bin/setfacl';

/** names that break naive parsers: space, newline, backslash, tab, unicode, `: `, leading dash */
const ODD_NAMES = [
  'plain.txt',
  'with space.txt',
  'new\nline.txt',
  'back\\slash.txt',
  'tab\there',
  'ünïcødé ✓.txt',
  'colon: x',
  '-dash',
];

describe('loop harness', () => {
  let loop: LoopDevice;

  beforeAll(async () => {
    requireTools(XXHSUM, GETFACL, SETFACL, '/usr/bin/lsblk', '/usr/sbin/wipefs', '/usr/sbin/mkfs.ext4');
    loop = await createLoopDevice({ sizeMiB: 64, fsType: 'ext4', mount: true });
  });

  afterAll(async () => {
    await loop?.cleanup();
  });

  it('attaches a sparse image and mounts the new ext4', async () => {
    expect(loop.device).toMatch(/^\/dev\/loop\d+$/);
    expect(await attachedLoopDevices(loop.image)).toEqual([loop.device]);
    const mounts = parseFindmnt((await exec(findmntArgv({ source: loop.device }))).stdout);
    expect(mounts).toHaveLength(1);
    expect(mounts[0]).toMatchObject({ target: loop.mountpoint, source: loop.device, fstype: 'ext4' });
  });

  it('xxhsum output of odd names parses back to exactly those names', async () => {
    const dir = join(loop.mountpoint as string, 'sums');
    await mkdir(dir);
    for (const [i, name] of ODD_NAMES.entries()) await writeFile(join(dir, name), `content ${i}\n`);
    const paths = ODD_NAMES.map((n) => join(dir, n));

    const gnu = await run([XXHSUM, '--', ...paths]);
    const sums = parseXxhsumSums(gnu.stdout, { fileNames: paths });
    expect(sums.map((s) => s.fileName)).toEqual(paths);
    expect(sums.every((s) => s.algorithm === 'XXH64' && s.hash.length === 16)).toBe(true);

    // the same hashes in BSD form (0.8.1 prints -H3 that way too)
    const tag = await run([XXHSUM, '--tag', '--', ...paths]);
    expect(parseXxhsumSums(tag.stdout, { fileNames: paths })).toEqual(sums);
    const h3 = parseXxhsumSums((await run([XXHSUM, '-H3', '--', ...paths])).stdout, { fileNames: paths });
    expect(h3.map((s) => s.algorithm)).toEqual(paths.map(() => 'XXH3'));

    // verify: a checksum file with absolute names (those without a newline: 0.8.1 cannot read
    // a name with a newline back), one of them wrong, one missing
    const listed = sums.filter((s) => !s.fileName.includes('\n'));
    const lines = listed.map((s, i) => `${i === 1 ? '0000000000000000' : s.hash}  ${s.fileName}`);
    lines.push(`${listed[0].hash}  ${join(dir, 'gone.txt')}`);
    const sumsFile = join(loop.dir, 'check.xxh');
    await writeFile(sumsFile, lines.join('\n') + '\n');
    const file = parseChecksumFile(lines.join('\n') + '\n');
    expect(checkChecksumFile(file)).toEqual({ ok: true });

    const check = await exec([XXHSUM, '-c', '--', sumsFile]);
    expect(check.code).toBe(1);
    const parsed = parseXxhsumCheck(check.stdout, check.stderr, { fileNames: file.entries.map((e) => e.fileName) });
    expect(parsed.counts).toEqual({ ok: listed.length - 1, failed: 1, unreadable: 1, improperlyFormatted: 0 });
    expect(parsed.results.find((r) => r.result === 'FAILED')?.fileName).toBe(listed[1].fileName);
    expect(parsed.results.find((r) => r.result === 'FAILED open or read')).toMatchObject({
      fileName: join(dir, 'gone.txt'),
      line: lines.length,
      reason: 'No such file or directory',
    });
  });

  it('setfacl -m then getfacl -R parses, defaults and escaped names included', async () => {
    const share = join(loop.mountpoint as string, 'share');
    await mkdir(share);
    for (const name of ODD_NAMES) await writeFile(join(share, name), 'x');
    const entries = ['u:nobody:rwx', 'g:users:r-x'].map((e) => checkAclEntry(e));
    const args = entries.map((e) => (e.ok ? e.entry.canonical : 'invalid')).join(',');
    await run([SETFACL, '-m', args, '--', share]);
    await run([SETFACL, '-d', '-m', 'u:nobody:rwx,g:users:rwx', '--', share]);

    const out = await run([GETFACL, '-R', '--', 'share'], { cwd: loop.mountpoint });
    const files = parseGetfacl(out.stdout);
    expect(files.map((f) => f.file).sort()).toEqual(['share', ...ODD_NAMES.map((n) => `share/${n}`)].sort());
    const top = files.find((f) => f.file === 'share');
    expect(top?.entries).toContainEqual({ scope: 'access', tag: 'user', qualifier: 'nobody', perms: 'rwx' });
    expect(top?.entries).toContainEqual({ scope: 'default', tag: 'group', qualifier: 'users', perms: 'rwx' });

    const test = await run([SETFACL, '--test', '-R', '-m', 'g:users:rw', '--', 'share'], { cwd: loop.mountpoint });
    const records = parseSetfaclTest(test.stdout, { root: 'share' });
    expect(records.map((r) => r.path).sort()).toEqual(['share', ...ODD_NAMES.map((n) => `share/${n}`)].sort());
    expect(records.every((r) => r.access?.some((e) => e.qualifier === 'users' && e.perms === 'rw-'))).toBe(true);
  });

  it('the refusal rules see the device as mounted, then free once unmounted', async () => {
    const facts = async () => ({
      device: loop.device,
      lsblk: parseLsblk((await run(lsblkArgv(loop.device))).stdout),
      mounts: parseFindmnt((await exec(findmntArgv())).stdout),
      swaps: parseProcSwaps((await run(['/usr/bin/cat', '/proc/swaps'])).stdout),
      signatures: parseWipefs((await run(wipefsArgv(loop.device))).stdout),
    });
    const mounted = await facts();
    expect(checkDeviceFree(mounted)).toMatchObject({ ok: false, code: 'mounted' });
    expect(checkCanMount({ device: loop.device, mountpoint: '/mnt/elsewhere', mounts: mounted.mounts })).toMatchObject({
      ok: false,
      code: 'already-mounted',
    });
    expect(
      checkCanUnmount({ device: loop.device, mountpoint: loop.mountpoint as string, mounts: mounted.mounts }),
    ).toEqual({ ok: true });

    await run(['/usr/bin/umount', loop.mountpoint as string]);
    const unmounted = await facts();
    // still carries ext4: make_filesystem must refuse it, but for a different reason
    expect(checkDeviceFree(unmounted)).toMatchObject({ ok: false, code: 'signature' });
    expect(checkCanUnmount({ mountpoint: loop.mountpoint as string, mounts: unmounted.mounts })).toMatchObject({
      ok: false,
      code: 'not-mounted',
    });
    await wipeSignatures(loop.device);
    expect(checkDeviceFree(await facts())).toEqual({ ok: true });
  });

  it('cleanup leaves no loop device attached and removes the files', async () => {
    const other = await createLoopDevice({ sizeMiB: 8, fsType: 'ext4', mount: 'data' });
    expect(statSync(other.image).size).toBe(8 * 1024 * 1024);
    await other.cleanup();
    expect(await attachedLoopDevices(other.image)).toEqual([]);
    expect(existsSync(other.dir)).toBe(false);
    await other.cleanup(); // twice is fine
  });
});

describe('loop harness failure', () => {
  it('fails loudly when a tool is missing', () => {
    expect(() => requireTools('/usr/sbin/mkfs.nonexistent')).toThrow(/required tool missing.*mkfs\.nonexistent/);
  });

  it('rejects an unknown filesystem type instead of skipping', async () => {
    await expect(createLoopDevice({ sizeMiB: 8, fsType: 'nonexistent' })).rejects.toThrow(/mkfs\.nonexistent/);
  });
});
