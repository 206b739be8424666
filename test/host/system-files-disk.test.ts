/**
 * The host's file operations on disk (runtime/system/files.ts): what list and stat answer for
 * each kind of entry, the atomic writes (whole, with the mode and owner given, nothing left when
 * they fail), and which leftovers of an interrupted write the start-up cleanup removes.
 * system-files.test.ts: the confined operations' refusals, writes, backups and restores.
 */
import { execFileSync } from 'node:child_process';
import { chmodSync, chownSync, mkdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { ConfinedFiles, atomicWrite, atomicWriteSync, removeStaleTemps } from '../../runtime/system/files';
import { confinedTree, modeOf, namesIn, outcome } from '../helpers/confined-files';

const asRoot = process.getuid?.() === 0;
let dir = '';
let root = '';
let files: ConfinedFiles;
beforeEach(() => ({ dir, root, files } = confinedTree()));

describe('list and stat', () => {
  it('list: entries by name with their type; a missing directory is null, a file is an error', async () => {
    writeFileSync(join(root, 'b'), '');
    mkdirSync(join(root, 'C'));
    symlinkSync('b', join(root, '_'));
    execFileSync('/usr/bin/mkfifo', [join(root, 'a')]);
    // by code unit, upper case first (libuv's scandir sorts the same way, so the host's own sort
    // is a guarantee more than a change anyone would see)
    const more = ['m10', 'z', 'm2', 'A', 'm1', 'y', 'B', 'x'];
    for (const n of more) writeFileSync(join(root, n), '');
    const kinds = [
      { name: 'A', type: 'file' },
      { name: 'B', type: 'file' },
      { name: 'C', type: 'dir' },
      { name: '_', type: 'symlink' },
      { name: 'a', type: 'other' },
      { name: 'b', type: 'file' },
      ...['m1', 'm10', 'm2', 'x', 'y', 'z'].map((name) => ({ name, type: 'file' })),
    ];
    expect(await files.list(join(dir, 'via'))).toEqual({ entries: kinds });
    expect(await files.list(join(root, 'none'))).toEqual({ entries: null });
    expect(await outcome(() => files.list(join(root, 'b')))).toBe('errno ENOTDIR');
  });

  it('stat: type, size, the whole st_mode, mtime; a missing path is null, one below a file an error', async () => {
    writeFileSync(join(root, 'f'), '1234');
    chmodSync(join(root, 'f'), 0o640);
    mkdirSync(join(root, 'd'));
    symlinkSync('gone', join(root, 'dangling'));
    execFileSync('/usr/bin/mkfifo', [join(root, 'p')]);
    const st = statSync(join(root, 'f'));
    expect(await files.stat(join(dir, 'via', 'f'))).toEqual({
      stat: { type: 'file', size: 4, mode: 0o100640, mtimeMs: st.mtimeMs },
    });
    const types = [];
    for (const n of ['d', 'dangling', 'p']) types.push((await files.stat(join(root, n))).stat?.type);
    expect(types).toEqual(['dir', 'symlink', 'other']);
    expect(await files.stat(join(root, 'none'))).toEqual({ stat: null });
    expect(await outcome(() => files.stat(join(root, 'f', 'x')))).toBe('errno ENOTDIR');
  });

  it.runIf(asRoot)('a block device is `block` in both', async () => {
    execFileSync('/usr/bin/mknod', [join(root, 'blk'), 'b', '7', '200']);
    expect((await files.list(root)).entries).toEqual([{ name: 'blk', type: 'block' }]);
    expect((await files.stat(join(root, 'blk'))).stat?.type).toBe('block');
  });
});

describe('atomicWrite and atomicWriteSync', () => {
  it('write whole (a string or a megabyte), with the mode and owner given, parents made', async () => {
    const big = Buffer.alloc(1 << 20, 'ab');
    // the mode given, not what the umask leaves of it
    const umask = process.umask(0o077);
    try {
      atomicWriteSync(join(root, 's', 'n', 's.txt'), 'sync\n', 0o640);
      atomicWriteSync(join(root, 'big'), big, 0o600, { uid: process.getuid!(), gid: process.getgid!() });
      await atomicWrite(join(root, 'a', 'n', 'a.txt'), Buffer.from('async\n'), 0o604);
    } finally {
      process.umask(umask);
    }
    expect([readFileSync(join(root, 's', 'n', 's.txt'), 'utf8'), modeOf(join(root, 's', 'n', 's.txt'))]).toEqual([
      'sync\n',
      0o640,
    ]);
    expect([readFileSync(join(root, 'big')).equals(big), modeOf(join(root, 'big'))]).toEqual([true, 0o600]);
    expect([readFileSync(join(root, 'a', 'n', 'a.txt'), 'utf8'), modeOf(join(root, 'a', 'n', 'a.txt'))]).toEqual([
      'async\n',
      0o604,
    ]);
    expect(namesIn(root)).toEqual(['a', 'big', 's']);
  });

  it.runIf(asRoot)('give the file its owner', async () => {
    atomicWriteSync(join(root, 's'), 's', 0o640, { uid: 65534, gid: 65533 });
    await atomicWrite(join(root, 'a'), Buffer.from('a'), 0o640, { uid: 65533, gid: 65534 });
    expect([statSync(join(root, 's')).uid, statSync(join(root, 's')).gid]).toEqual([65534, 65533]);
    expect([statSync(join(root, 'a')).uid, statSync(join(root, 'a')).gid]).toEqual([65533, 65534]);
    chownSync(join(root, 'a'), 0, 0);
    // ConfinedFiles.write: a replaced file keeps its owner; a new one is the service's
    const f = join(root, 'owned');
    writeFileSync(f, 'old');
    chownSync(f, 65534, 65533);
    await files.write(f, 'new', {});
    await files.write(join(root, 'fresh'), 'x', {});
    expect([statSync(f).uid, statSync(f).gid, statSync(join(root, 'fresh')).uid]).toEqual([65534, 65533, 0]);
  });

  it('a write that fails leaves the target as it was and no temp file', async () => {
    writeFileSync(join(root, 'keep'), 'old');
    mkdirSync(join(root, 'isdir'));
    const bad = { uid: -2, gid: -2 };
    expect(await outcome(() => atomicWrite(join(root, 'keep'), Buffer.from('new'), 0o644, bad))).toBe(
      'errno ERR_OUT_OF_RANGE',
    );
    expect(await outcome(() => atomicWrite(join(root, 'isdir'), Buffer.from('new'), 0o644))).toBe('errno EISDIR');
    expect(await outcome(() => atomicWriteSync(join(root, 'keep'), 'new', 0o644, bad))).toBe('errno ERR_OUT_OF_RANGE');
    expect(await outcome(() => atomicWriteSync(join(root, 'isdir'), 'new', 0o644))).toBe('errno EISDIR');
    expect(readFileSync(join(root, 'keep'), 'utf8')).toBe('old');
    expect(namesIn(root)).toEqual(['isdir', 'keep']);
  });
});

describe('start-up cleanup', () => {
  it('removeStaleTemps: regular files named `.<name>.tmp-<12 hex>` only, each directory once', () => {
    const other = join(dir, 'other');
    mkdirSync(other);
    const stale = [join(root, '.a.conf.tmp-0123456789ab'), join(other, '.b.tmp-abcdefabcdef')];
    const kept = [
      '.a.tmp-0123456789a',
      '.a.tmp-0123456789abc',
      'a.tmp-0123456789ab',
      '..tmp-0123456789ab',
      '.a.tmp-0123456789AB',
      '.a.tmp-012345678xab',
      'x.a.tmp-0123456789ab',
    ].map((n) => join(root, n));
    for (const f of [...stale, ...kept]) writeFileSync(f, 'half');
    mkdirSync(join(root, '.d.tmp-0123456789ab'));
    writeFileSync(join(dir, 'target'), 't');
    symlinkSync(join(dir, 'target'), join(root, '.l.tmp-0123456789ab'));
    expect(removeStaleTemps([join(dir, 'none'), root, other, root])).toEqual(stale);
    expect(namesIn(root)).toEqual(
      [...kept.map((k) => k.slice(root.length + 1)), '.d.tmp-0123456789ab', '.l.tmp-0123456789ab'].sort(),
    );
    expect(readFileSync(join(dir, 'target'), 'utf8')).toBe('t');
  });

  it('removeStaleBackupTemps: the backup writes’ temps at any depth; no backup directory is none', () => {
    expect(new ConfinedFiles([], join(dir, 'no-backups')).removeStaleBackupTemps()).toEqual([]);
    const deep = join(dir, 'backups', 'x', 'y');
    mkdirSync(deep, { recursive: true });
    const stale = [join(deep, '.c.prev.tmp-0123456789ab'), join(deep, '.c.prev.meta.tmp-0123456789ab')];
    const kept = [
      '.c.tmp-0123456789ab',
      'c.prev.tmp-0123456789ab',
      'x.c.prev.tmp-0123456789ab',
      '.c.prev.metax.tmp-0123456789ab',
      '.c.prev',
    ];
    for (const f of [...stale, ...kept.map((k) => join(deep, k))]) writeFileSync(f, 'x');
    expect(files.removeStaleBackupTemps().sort()).toEqual([...stale].sort());
    expect(namesIn(deep)).toEqual([...kept].sort());
  });
});
