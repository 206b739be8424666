/**
 * Records the fs-area fixtures on this machine (Debian 12, as root):
 *
 *   npx vite-node test/tools/fs/record-fixtures.ts
 *
 * Everything happens on loop devices made by test/system/helpers/loop.ts: an ext4 filesystem
 * mounted at the fixed path ROOT (so argv in the fixtures is stable across recordings) holds
 * files with odd names (space, newline, backslash, tab, CR, unicode, `: `, `) = `, leading
 * dash/space) and ACLs with default entries; further devices carry a partition table, swap,
 * xfs and vfat. Each invocation is written with runtime/system/fixture-file.ts's writeFixture
 * and read back to prove stdout/stderr survive byte for byte.
 *
 * This writes only the `.yaml` fixtures. Expected parses (`.expected.json`) are drafted by
 * test/tools/fs/draft-expected.ts and reviewed by hand (fixtures/REVIEW.md); re-recording changes
 * UUIDs, so review the drafts again after running this and update that record.
 */
import { deepStrictEqual } from 'node:assert';
import { chmod, mkdir, open, rm, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { readFixture, writeFixture, type Fixture } from '../../../runtime/system/fixture-file';
import { createLoopDevice, exec, requireTools, run, type ExecResult, type LoopDevice } from '../../system/helpers/loop';
import { findmntArgv } from '../../../handlers/tools/findmnt';
import { lsblkArgv } from '../../../handlers/tools/lsblk';
import { wipefsArgv } from '../../../handlers/fs/parse/wipefs';

const FIXTURES = resolve(import.meta.dirname, '../../../fixtures');
/** fixed mountpoint of the recording filesystem, so fixture argv does not change per run */
const ROOT = '/tmp/ballast-fixtures';
const DATA = `${ROOT}/data`;
const SUMS = `${ROOT}/sums`;
const SHARE = `${ROOT}/share`;

const XXHSUM = '/usr/bin/xxhsum';
const GETFACL = '/usr/bin/getfacl';
const SETFACL = '/usr/bin/setfacl';
const CAT = '/usr/bin/cat';

const today = new Date().toISOString().slice(0, 10);
let versions = '';

async function packageVersions(): Promise<string> {
  const r = await run([
    '/usr/bin/dpkg-query',
    '-W',
    '-f',
    '${Package} ${Version}\n',
    'xxhash',
    'acl',
    'util-linux',
    'e2fsprogs',
    'xfsprogs',
    'dosfstools',
  ]);
  const kernel = (await run(['/usr/bin/uname', '-r'])).stdout.trim();
  return `Debian 12, kernel ${kernel}, ${r.stdout.trim().split('\n').join(', ')}`;
}

const written: string[] = [];

async function record(
  tool: string,
  name: string,
  argv: string[],
  /** scenario: set when another fixture has the same argv, so the base replay set stays unambiguous */
  opts: { cwd?: string; note?: string; expectCode?: number; scenario?: string } = {},
): Promise<ExecResult> {
  const r = await exec(argv, { cwd: opts.cwd });
  if (opts.expectCode !== undefined && r.code !== opts.expectCode) {
    throw new Error(`${name}: expected exit ${opts.expectCode}, got ${r.code}: ${r.stderr}`);
  }
  const where = opts.cwd ? ` cwd ${opts.cwd};` : '';
  const fixture: Fixture = {
    source:
      `recorded ${today} by test/tools/fs/record-fixtures.ts as root on a loop device (${versions}); LC_ALL=C;${where} ${opts.note ?? ''}`.trim(),
    argv,
    code: r.code,
    stdout: r.stdout,
    stderr: r.stderr,
    ...(opts.scenario ? { scenario: opts.scenario } : {}),
  };
  const file = join(FIXTURES, tool, `${name}.yaml`);
  writeFixture(file, fixture);
  const back = readFixture(file);
  deepStrictEqual(
    { argv: back.argv, code: back.code, stdout: back.stdout, stderr: back.stderr },
    { argv, code: r.code, stdout: r.stdout, stderr: r.stderr },
    `${file} does not round-trip`,
  );
  written.push(file);
  return r;
}

/** content of each file decides its hash; keep it fixed so hashes are stable across recordings */
const FILES: Record<string, string> = {
  'a.txt': 'hello\n',
  'file with spaces.txt': 'spaces\n',
  'new\nline.txt': 'newline\n',
  'back\\slash.txt': 'backslash\n',
  'tab\there.txt': 'tab\n',
  'cr\rname.txt': 'carriage return\n',
  'ünïcødé ✓.txt': 'unicode\n',
  'colon: x.txt': 'colon\n',
  'paren) = x.txt': 'bsd confusion\n',
  '-dash.txt': 'dash\n',
  ' lead.txt': 'leading space\n',
};
const ODD = Object.keys(FILES).map((n) => `${DATA}/${n}`);
const A = `${DATA}/a.txt`;
const SP = `${DATA}/file with spaces.txt`;

async function recordXxhsum(): Promise<void> {
  await mkdir(DATA);
  await mkdir(SUMS);
  for (const [n, content] of Object.entries(FILES)) await writeFile(join(DATA, n), content);

  // generate: every algorithm, GNU and BSD, plain and odd names
  await record('xxhsum', 'h1-default', [XXHSUM, '--', A, SP], { expectCode: 0 });
  for (const h of ['0', '1', '2', '3']) {
    await record('xxhsum', `h${h}-two-files`, [XXHSUM, `-H${h}`, '--', A, SP], { expectCode: 0 });
    await record('xxhsum', `tag-h${h}-two-files`, [XXHSUM, `-H${h}`, '--tag', '--', A, SP], { expectCode: 0 });
  }
  await record('xxhsum', 'little-endian-gnu', [XXHSUM, '--little-endian', '--', A], {
    expectCode: 0,
    note: 'GNU form does not say little endian; the parse cannot know',
  });
  await record('xxhsum', 'little-endian-tag-h2', [XXHSUM, '-H2', '--little-endian', '--tag', '--', A], {
    expectCode: 0,
  });
  await record('xxhsum', 'odd-names-h1', [XXHSUM, '--', ...ODD], {
    expectCode: 0,
    note: '0.8.1 prints names raw: the newline name breaks its line, the CR stays inside it',
  });
  await record('xxhsum', 'odd-names-h2', [XXHSUM, '-H2', '--', ...ODD], { expectCode: 0 });
  await record('xxhsum', 'odd-names-tag-h3', [XXHSUM, '-H3', '--tag', '--', ...ODD], { expectCode: 0 });
  await record('xxhsum', 'odd-names-tag-h0', [XXHSUM, '-H0', '--tag', '--', ...ODD], { expectCode: 0 });
  await record('xxhsum', 'missing-file', [XXHSUM, '--', A, `${DATA}/gone.txt`, SP], {
    expectCode: 1,
    note: 'the unreadable file is skipped and reported on stderr',
  });
  await record('xxhsum', 'directory', [XXHSUM, '--', DATA], { expectCode: 1 });

  // checksum files, then -c
  const h1 = (await run([XXHSUM, '--', A, SP])).stdout;
  const [ha, hs] = h1.split('\n').map((l) => l.slice(0, 16));
  const h3 = (await run([XXHSUM, '-H3', '--', A])).stdout.trim();
  const h2 = (await run([XXHSUM, '-H2', '--tag', '--', SP])).stdout.trim();
  const h0 = (await run([XXHSUM, '-H0', '--', A])).stdout.trim();
  const odd = ODD.filter((p) => !p.includes('\n'));
  const oddSums = (await run([XXHSUM, '--', ...odd])).stdout;

  const files: Record<string, string> = {
    'all-ok.xxh': `${ha}  ${A}\n${hs}  ${SP}\n`,
    'one-failed.xxh': `${ha}  ${A}\n${'0'.repeat(16)}  ${SP}\n`,
    'missing.xxh': `${ha}  ${A}\n${ha}  ${DATA}/gone.txt\n`,
    'improper.xxh': `# comment\n\n${ha}  ${A}\nnot a checksum line\n\\${ha}  ${A}\nXXH3_${'0'.repeat(16)}  ${A}\n`,
    'none-proper.xxh': 'garbage\nmore garbage\n',
    'bsd-mixed.xxh': `${h3}\n${h2}\n${h0}\n${ha} *${A}\n`,
    'odd-names.xxh': oddSums,
    'mixed-results.xxh': `${ha}  ${A}\n${'f'.repeat(16)}  ${SP}\n${ha}  ${DATA}/gone.txt\nbroken\n`,
  };
  for (const [n, text] of Object.entries(files)) await writeFile(join(SUMS, n), text);

  await record('xxhsum', 'check-all-ok', [XXHSUM, '-c', '--', `${SUMS}/all-ok.xxh`], { expectCode: 0 });
  await record('xxhsum', 'check-one-failed', [XXHSUM, '-c', '--', `${SUMS}/one-failed.xxh`], { expectCode: 1 });
  await record('xxhsum', 'check-one-failed-quiet', [XXHSUM, '-q', '-c', '--', `${SUMS}/one-failed.xxh`], {
    expectCode: 1,
  });
  await record('xxhsum', 'check-one-failed-status', [XXHSUM, '--status', '-c', '--', `${SUMS}/one-failed.xxh`], {
    expectCode: 1,
  });
  await record('xxhsum', 'check-missing-file', [XXHSUM, '-c', '--', `${SUMS}/missing.xxh`], { expectCode: 1 });
  await record('xxhsum', 'check-improper', [XXHSUM, '-c', '--', `${SUMS}/improper.xxh`], {
    expectCode: 0,
    note: 'improper lines alone give rc 0; 0.8.1 counts the comment, the blank line, the \\-escaped and the XXH3_ lines as improper',
  });
  await record('xxhsum', 'check-improper-warn', [XXHSUM, '--warn', '-c', '--', `${SUMS}/improper.xxh`], {
    expectCode: 0,
  });
  await record('xxhsum', 'check-improper-strict', [XXHSUM, '--strict', '-c', '--', `${SUMS}/improper.xxh`], {
    expectCode: 1,
  });
  await record('xxhsum', 'check-none-proper', [XXHSUM, '-c', '--', `${SUMS}/none-proper.xxh`], { expectCode: 1 });
  await record('xxhsum', 'check-bsd-mixed', [XXHSUM, '-c', '--', `${SUMS}/bsd-mixed.xxh`], { expectCode: 0 });
  await record('xxhsum', 'check-odd-names', [XXHSUM, '-c', '--', `${SUMS}/odd-names.xxh`], {
    expectCode: 0,
    note: 'names without a newline only: 0.8.1 cannot read one back',
  });
  await record('xxhsum', 'check-mixed-results', [XXHSUM, '--warn', '-c', '--', `${SUMS}/mixed-results.xxh`], {
    expectCode: 1,
  });
  await record('xxhsum', 'check-no-such-sums-file', [XXHSUM, '-c', '--', `${SUMS}/nonexistent.xxh`], { expectCode: 1 });
}

async function recordAcls(): Promise<void> {
  await mkdir(SHARE);
  await mkdir(`${SHARE}/sub`);
  for (const n of [
    'file.txt',
    'with space.txt',
    'new\nline',
    'back\\slash',
    'tab\there',
    'ünïcødé',
    'colon: x',
    '-dash',
  ]) {
    await writeFile(join(SHARE, n), 'x\n');
  }
  await writeFile(`${SHARE}/masked.txt`, 'x\n');
  await run([SETFACL, '-m', 'u:nobody:rwx,g:users:r-x,u:12345:r', '--', SHARE]);
  await run([SETFACL, '-d', '-m', 'u:nobody:rwx,g:users:rwx', '--', SHARE]);
  await run([SETFACL, '-m', 'u:daemon:rw', '--', `${SHARE}/with space.txt`]);
  await run([SETFACL, '-m', 'u:nobody:rwx,g:users:rw,m::r', '--', `${SHARE}/masked.txt`]);
  await mkdir(`${ROOT}/flagged`);
  await chmod(`${ROOT}/flagged`, 0o3775);
  await writeFile(`${ROOT}/setuid`, '#!/bin/true\n');
  await chmod(`${ROOT}/setuid`, 0o4755);

  const c = { cwd: ROOT };
  await record('getfacl', 'dir-with-defaults', [GETFACL, '--', 'share'], c);
  await record('getfacl', 'recursive-relative', [GETFACL, '-R', '--', 'share'], {
    ...c,
    note: 'files in directory order (not sorted)',
  });
  await record('getfacl', 'recursive-absolute', [GETFACL, '-R', '--', SHARE], {
    note: 'getfacl strips the leading / and warns on stderr',
  });
  await record('getfacl', 'recursive-absolute-p', [GETFACL, '-R', '-p', '--', SHARE]);
  await record('getfacl', 'omit-header', [GETFACL, '-c', '--', 'share', 'share/file.txt'], c);
  await record('getfacl', 'effective-restricted', [GETFACL, '--', 'share/masked.txt'], c);
  await record('getfacl', 'effective-all', [GETFACL, '-e', '--', 'share/masked.txt'], c);
  await record('getfacl', 'effective-none', [GETFACL, '-E', '--', 'share/masked.txt'], c);
  await record('getfacl', 'numeric', [GETFACL, '-n', '--', 'share'], c);
  await record('getfacl', 'flags-setgid-sticky', [GETFACL, '--', 'flagged', 'setuid'], c);
  await record(
    'getfacl',
    'escaped-names',
    [GETFACL, '--', 'share/new\nline', 'share/back\\slash', 'share/tab\there', 'share/ünïcødé', 'share/colon: x'],
    c,
  );
  await record('getfacl', 'tabular-unsupported', [GETFACL, '-t', '--', 'share'], {
    ...c,
    note: 'the parser refuses -t output on purpose',
  });
  await record('getfacl', 'missing', [GETFACL, '--', 'missing'], { ...c, expectCode: 1 });

  await record('setfacl', 'test-m-file', [SETFACL, '--test', '-m', 'u:daemon:rw', '--', 'share/file.txt'], c);
  await record('setfacl', 'test-R-m', [SETFACL, '--test', '-R', '-m', 'g:users:rwX', '--', 'share'], {
    ...c,
    note: 'paths are not escaped: the newline name splits its record over two lines',
  });
  await record('setfacl', 'test-d-m', [SETFACL, '--test', '-d', '-m', 'g:users:rwx', '--', 'share'], c);
  await record('setfacl', 'test-x', [SETFACL, '--test', '-x', 'u:nobody', '--', 'share'], c);
  await record('setfacl', 'test-k', [SETFACL, '--test', '-k', '--', 'share'], c);
  await record('setfacl', 'test-b', [SETFACL, '--test', '-b', '--', 'share'], {
    ...c,
    note: '-b empties the default ACL too: an empty default side after a changed access side',
  });
  await record('setfacl', 'test-absolute', [SETFACL, '--test', '-m', 'o::r', '--', SHARE]);
  await record('setfacl', 'error-unknown-user', [SETFACL, '-m', 'u:nosuchuser:rwx', '--', 'share'], {
    ...c,
    expectCode: 2,
  });
  await record('setfacl', 'error-bad-perms', [SETFACL, '-m', 'u:nobody:rwz', '--', 'share'], { ...c, expectCode: 2 });
  await record('setfacl', 'error-incomplete', [SETFACL, '-m', 'u:nobody', '--', 'share'], { ...c, expectCode: 2 });
  await record('setfacl', 'error-missing-file', [SETFACL, '-m', 'u:nobody:r', '--', 'missing'], {
    ...c,
    expectCode: 1,
  });
  await record('setfacl', 'error-malformed', [SETFACL, '-x', 'user:', '--', 'share'], { ...c, expectCode: 1 });
  await record('setfacl', 'error-default-on-file', [SETFACL, '-d', '-m', 'u:nobody:r', '--', 'share/file.txt'], c);
  await record('setfacl', 'success-silent', [SETFACL, '-m', 'u:nobody:r', '--', 'share/file.txt'], {
    ...c,
    expectCode: 0,
  });
}

/** an MBR with a 16 MiB Linux partition and a 32 MiB swap partition (no sfdisk on this box) */
async function writeMbr(image: string): Promise<void> {
  const b = Buffer.alloc(512);
  const entry = (off: number, type: number, lba: number, sectors: number) => {
    b[off + 4] = type;
    b.writeUInt32LE(lba, off + 8);
    b.writeUInt32LE(sectors, off + 12);
  };
  b.writeUInt32LE(0x5ba11a57, 440); // disk identifier
  entry(446, 0x83, 2048, 32768);
  entry(462, 0x82, 34816, 65536);
  b[510] = 0x55;
  b[511] = 0xaa;
  const fh = await open(image, 'r+');
  await fh.write(b, 0, 512, 0);
  await fh.close();
}

async function recordDevices(main: LoopDevice): Promise<void> {
  const dev = main.device;
  // a second mount of the same ext4 on a path with a space, nested under ROOT
  const spaced = `${ROOT}/mnt space`;
  await mkdir(spaced);
  await run(['/usr/bin/mount', dev, spaced]);
  await record('lsblk', 'ext4-mounted-twice', lsblkArgv(dev), { note: 'FSTYPE stays null: no udev on this box' });
  await record('findmnt', 'source-mounted-twice', findmntArgv({ source: dev }));
  await record('findmnt', 'mountpoint-with-space', findmntArgv({ mountpoint: spaced }));
  await record('findmnt', 'no-match', findmntArgv({ mountpoint: `${ROOT}/data` }), {
    expectCode: 1,
    note: 'nothing mounted there: no output, rc 1',
  });
  await record('findmnt', 'all-tree', findmntArgv(), { note: 'the whole mount table of the recording VM' });
  await record('findmnt', 'all-list', [...findmntArgv(), '-l']);
  await record('wipefs', 'ext4', wipefsArgv(dev));
  await run(['/usr/bin/umount', spaced]);

  const blank = await createLoopDevice({ sizeMiB: 64 });
  try {
    await record('lsblk', 'blank-loop', lsblkArgv(blank.device));
    await record('wipefs', 'blank', wipefsArgv(blank.device), { note: 'no signatures' });
    await record('wipefs', 'default-columns-blank', ['/usr/sbin/wipefs', '-n', '-J', '--', blank.device]);

    await writeMbr(blank.image);
    await run(['/usr/bin/partx', '-a', blank.device]);
    await run(['/usr/sbin/mkfs.ext4', '-q', '-L', 'part1', `${blank.device}p1`]);
    await run(['/usr/sbin/mkswap', '-L', 'swap2', `${blank.device}p2`]);
    await record('wipefs', 'dos-partition-table', wipefsArgv(blank.device), { scenario: 'partitioned-loop' });
    await record('wipefs', 'default-columns-dos', ['/usr/sbin/wipefs', '-n', '-J', '--', blank.device], {
      scenario: 'partitioned-loop',
    });
    await record('wipefs', 'swap-partition', wipefsArgv(`${blank.device}p2`));
    const p1 = `${blank.dir}/p1 mnt`;
    await mkdir(p1);
    await run(['/usr/bin/mount', `${blank.device}p1`, p1]);
    await run(['/usr/sbin/swapon', `${blank.device}p2`]);
    // a swap file whose name needs escaping in /proc/swaps
    const swapFile = `${ROOT}/swap file`;
    const fh = await open(swapFile, 'wx', 0o600);
    await fh.write(Buffer.alloc(8 * 1024 * 1024));
    await fh.close();
    await run(['/usr/sbin/mkswap', swapFile]);
    await run(['/usr/sbin/swapon', swapFile]);
    try {
      await record('lsblk', 'partitions-mounted-and-swap', lsblkArgv(blank.device), {
        note: 'p1 mounted at a private path with a space, p2 active swap',
        scenario: 'partitioned-loop',
      });
      await record('swaps', 'partition-and-file', [CAT, '/proc/swaps'], {
        note: 'the product reads /proc/swaps as a file; argv is how it was captured',
        scenario: 'swap-active',
      });
    } finally {
      await run(['/usr/sbin/swapoff', swapFile]);
      await run(['/usr/sbin/swapoff', `${blank.device}p2`]);
      await rm(swapFile);
    }
    await record('swaps', 'none', [CAT, '/proc/swaps'], { note: 'no active swap: header only' });
    await run(['/usr/bin/umount', p1]);
    await run(['/usr/bin/partx', '-d', blank.device]);
  } finally {
    await blank.cleanup();
  }

  const xfs = await createLoopDevice({ sizeMiB: 320, fsType: 'xfs', mkfsArgs: ['-q', '-L', 'scratch'] });
  try {
    await record('wipefs', 'xfs', wipefsArgv(xfs.device), { scenario: 'xfs-loop' });
  } finally {
    await xfs.cleanup();
  }
  const vfat = await createLoopDevice({ sizeMiB: 64, fsType: 'vfat', mkfsArgs: ['-n', 'USBKEY'] });
  try {
    await record('wipefs', 'vfat', wipefsArgv(vfat.device), {
      note: 'FAT carries three signatures',
      scenario: 'vfat-loop',
    });
  } finally {
    await vfat.cleanup();
  }
}

async function main(): Promise<void> {
  requireTools(
    XXHSUM,
    GETFACL,
    SETFACL,
    '/usr/bin/lsblk',
    '/usr/bin/findmnt',
    '/usr/sbin/wipefs',
    '/usr/bin/partx',
    '/usr/sbin/mkswap',
    '/usr/sbin/swapon',
    '/usr/sbin/swapoff',
    '/usr/sbin/mkfs.ext4',
    '/usr/sbin/mkfs.xfs',
    '/usr/sbin/mkfs.vfat',
  );
  versions = await packageVersions();
  const main = await createLoopDevice({ sizeMiB: 64, fsType: 'ext4' });
  try {
    await mkdir(ROOT, { recursive: false });
    await run(['/usr/bin/mount', main.device, ROOT]);
    await recordXxhsum();
    await recordAcls();
    await recordDevices(main);
  } finally {
    await main.cleanup();
    await rm(ROOT, { recursive: true, force: true });
  }
  console.log(`wrote ${written.length} fixtures:\n${written.join('\n')}`);
}

await main();
