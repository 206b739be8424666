/**
 * The host's confined file operations (runtime/system/files.ts) call by call: which paths are
 * refused and with which code and message, what a write, a backup, a restore and a remove leave
 * on disk (bytes, modes, no temp file). system-files-disk.test.ts: list, stat, the atomic writes
 * themselves (also when they fail) and the start-up cleanup of what an interrupted one left.
 */
import { execFileSync } from 'node:child_process';
import {
  chmodSync,
  existsSync,
  mkdirSync,
  readFileSync,
  statSync,
  symlinkSync,
  unlinkSync,
  watch,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { ConfinedFiles, isErrno, readRegular, removeStaleTemps, resolveExisting } from '../../runtime/system/files';
import { confinedTree, modeOf, namesIn, outcome } from '../helpers/confined-files';

let dir = '';
let root = '';
let files: ConfinedFiles;
beforeEach(() => ({ dir, root, files } = confinedTree()));

describe('check: which paths the operations accept', () => {
  it('refuses a path that is not absolute, has NUL or a `..` part, with bad_request', async () => {
    for (const [path, why] of [
      [5, 'path must be absolute'],
      ['data/a', 'path must be absolute'],
      ['', 'path must be absolute'],
      [`${root}/a\0b`, 'path must not contain NUL'],
      [`${root}/sub/../a`, 'path must not contain ..'],
      [`${root}/..`, 'path must not contain ..'],
    ] as const)
      expect([path, await outcome(() => files.check(path))]).toEqual([path, `bad_request: ${why}`]);
    // `..` only as a whole part: names that merely contain dots are names
    expect(await files.check(`${root}/..a/b..`)).toBe(`${root}/..a/b..`);
  });

  it('answers the real path; outside every root, a sibling sharing the prefix too, is forbidden', async () => {
    symlinkSync('/etc', join(root, 'out'));
    expect(await files.check(join(dir, 'via', 'x', 'y'), true)).toBe(join(root, 'x', 'y'));
    expect(await files.check(root, true)).toBe(root);
    for (const p of [`${root}2/a`, `${root}2`, join(root, 'out', 'passwd'), dir, '/'])
      expect([p, await outcome(() => files.check(p))]).toEqual([
        p,
        `forbidden: path is outside the locations this service manages: ${p}`,
      ]);
  });

  it('a root that does not exist yet is kept as given', async () => {
    const later = new ConfinedFiles([{ path: join(dir, 'later'), writable: true }], join(dir, 'backups'));
    expect(await later.check(join(dir, 'later', 'x'), true)).toBe(join(dir, 'later', 'x'));
    expect(await outcome(() => later.check(join(dir, 'later2', 'x')))).toBe(
      `forbidden: path is outside the locations this service manages: ${join(dir, 'later2', 'x')}`,
    );
  });

  it('a read-only root is read, not written; a writable root inside it is written', async () => {
    const ro = join(dir, 'ro', 'a');
    writeFileSync(ro, 'x');
    expect(await files.read(ro)).toEqual({ content: 'x' });
    expect(await outcome(() => files.check(ro, true))).toBe(`forbidden: path is read-only for this service: ${ro}`);
    expect(await outcome(() => files.write(ro, 'y', {}))).toBe(`forbidden: path is read-only for this service: ${ro}`);
    expect(await outcome(() => files.remove(ro, {}))).toBe(`forbidden: path is read-only for this service: ${ro}`);
    expect(await outcome(() => files.restore(ro))).toBe(`forbidden: path is read-only for this service: ${ro}`);
    expect(readFileSync(ro, 'utf8')).toBe('x');
    await files.write(join(dir, 'ro', 'rw', 'b'), 'z', {});
    expect(readFileSync(join(dir, 'ro', 'rw', 'b'), 'utf8')).toBe('z');
  });

  it('resolveExisting: the longest existing prefix resolved, the rest appended; a link loop throws', () => {
    writeFileSync(join(root, 'plain'), '');
    symlinkSync('loop', join(root, 'loop'));
    expect(resolveExisting(join(dir, 'via', 'new', 'deeper'))).toBe(join(root, 'new', 'deeper'));
    expect(resolveExisting(join(dir, 'via', 'plain', 'x'))).toBe(join(root, 'plain', 'x'));
    expect(resolveExisting(`${dir}/via/../via/a`)).toBe(join(root, 'a'));
    expect(() => resolveExisting(join(root, 'loop', 'x'))).toThrow(/ELOOP/);
    expect([isErrno(new Error('x'), 'ENOENT'), isErrno('ENOENT', 'ENOENT'), isErrno(null, 'ENOENT')]).toEqual([
      false,
      false,
      false,
    ]);
  });
});

describe('read and readRegular', () => {
  it('a missing file, also below a regular file, is null; a directory or a FIFO is refused by its given name', async () => {
    writeFileSync(join(root, 'plain'), 'p\n');
    mkdirSync(join(root, 'sub'));
    execFileSync('/usr/bin/mkfifo', [join(root, 'fifo')]);
    expect(await files.read(join(root, 'none'))).toEqual({ content: null });
    expect(await files.read(join(root, 'plain', 'x'))).toEqual({ content: null });
    expect(await files.read(join(dir, 'via', 'plain'))).toEqual({ content: 'p\n' });
    expect(await outcome(() => files.read(join(dir, 'via', 'sub')))).toBe(`conflict: is a directory: ${dir}/via/sub`);
    expect(await outcome(() => files.read(join(dir, 'via', 'fifo')))).toBe(
      `bad_request: not a regular file: ${dir}/via/fifo`,
    );
  });

  it('maxBytes and check judge the opened file', () => {
    const f = join(root, 'five');
    writeFileSync(f, '12345');
    expect(readRegular(f, 'shown', { maxBytes: 5 })?.toString()).toBe('12345');
    expect(() => readRegular(f, 'shown', { maxBytes: 4 })).toThrow('shown is larger than 4 bytes');
    expect(readRegular(f, 'shown', { check: (st) => (st.size === 5 ? null : 'wrong') })?.toString()).toBe('12345');
    let why = '';
    try {
      readRegular(f, 'shown', { check: (st) => `is ${st.size} bytes` });
    } catch (e) {
      why = `${(e as { code: string }).code}: ${(e as Error).message}`;
    }
    expect(why).toBe('forbidden: shown is 5 bytes');
  });
});

describe('write', () => {
  it('a new file: parents made, 0644 unless told, no temp left; content must be a string', async () => {
    const f = join(dir, 'via', 'a', 'b', 'new.conf');
    expect(await files.write(f, 'één\n', {})).toEqual({ path: join(root, 'a', 'b', 'new.conf') });
    expect([readFileSync(f, 'utf8'), modeOf(f)]).toEqual(['één\n', 0o644]);
    await files.write(join(root, 'secret'), 's', { mode: 0o600 });
    expect(modeOf(join(root, 'secret'))).toBe(0o600);
    expect(namesIn(join(root, 'a', 'b'))).toEqual(['new.conf']);
    expect(await outcome(() => files.write(join(root, 'n'), 5, {}))).toBe('bad_request: content must be a string');
    expect(existsSync(join(root, 'n'))).toBe(false);
  });

  it('a replaced file keeps its mode (special bits too) unless told; exclusive refuses it', async () => {
    const f = join(root, 'kept.conf');
    writeFileSync(f, 'old');
    chmodSync(f, 0o2750);
    await files.write(f, 'new', {});
    expect([readFileSync(f, 'utf8'), modeOf(f)]).toEqual(['new', 0o2750]);
    await files.write(f, 'newer', { mode: 0o640 });
    expect(modeOf(f)).toBe(0o640);
    expect(await outcome(() => files.write(f, 'x', { exclusive: true, backup: true }))).toBe(
      `conflict: already exists: ${f}`,
    );
    // refused before anything is written: no backup of the file it refused to replace
    expect(existsSync(files.backupPathOf(f))).toBe(false);
    expect(await files.write(join(root, 'ex'), 'e', { exclusive: true, mode: 0o604 })).toEqual({
      path: join(root, 'ex'),
    });
    expect([readFileSync(join(root, 'ex'), 'utf8'), modeOf(join(root, 'ex'))]).toEqual(['e', 0o604]);
    expect(namesIn(root)).toEqual(['ex', 'kept.conf']);
  });

  it('goes through a temp file named for the start-up cleanup, then a rename', async () => {
    const seen: string[] = [];
    const w = watch(root, (_e, name) => seen.push(String(name)));
    try {
      await files.write(join(root, 'w.conf'), 'w', {});
      const end = Date.now() + 5000;
      while (!seen.includes('w.conf') && Date.now() < end) await new Promise((r) => setTimeout(r, 20));
    } finally {
      w.close();
    }
    const temps = [...new Set(seen.filter((n) => n !== 'w.conf'))];
    expect(temps).toHaveLength(1);
    expect(temps[0]).toMatch(/^\.w\.conf\.tmp-[0-9a-f]{12}$/);
    expect(removeStaleTemps([root])).toEqual([]);
  });

  it('backup keeps the old bytes (0600) and their mode and owner beside them, outside the tree', async () => {
    const f = join(root, 'b.conf');
    writeFileSync(f, 'old');
    chmodSync(f, 0o640);
    expect(await files.write(join(root, 'fresh'), 'x', { backup: true })).toEqual({ path: join(root, 'fresh') });
    expect(await files.write(f, 'x', {})).toEqual({ path: f });
    writeFileSync(f, 'old');
    const bak = join(dir, 'backups', `${f}.prev`);
    expect(files.backupPathOf(f)).toBe(bak);
    expect(await files.write(f, 'new', { backup: true })).toEqual({ path: f, backupPath: bak });
    expect([readFileSync(bak, 'utf8'), modeOf(bak), modeOf(`${bak}.meta`)]).toEqual(['old', 0o600, 0o600]);
    expect(JSON.parse(readFileSync(`${bak}.meta`, 'utf8'))).toEqual({
      mode: 0o640,
      uid: statSync(f).uid,
      gid: statSync(f).gid,
    });
    expect(namesIn(join(dir, 'backups', root))).toEqual(['b.conf.prev', 'b.conf.prev.meta']);
  });
});

describe('restore and remove', () => {
  it('restore: nothing kept is false; the kept bytes with the kept mode, else the current mode, else 0644', async () => {
    const f = join(root, 'r.conf');
    expect(await files.restore(f)).toEqual({ restored: false });
    writeFileSync(f, 'old');
    chmodSync(f, 0o640);
    await files.write(f, 'new', { backup: true, mode: 0o600 });
    expect(await files.restore(f)).toEqual({ restored: true });
    expect([readFileSync(f, 'utf8'), modeOf(f)]).toEqual(['old', 0o640]);
    // a backup from before modes were kept: the current file's mode, or 0644 without one
    unlinkSync(`${files.backupPathOf(f)}.meta`);
    await files.write(f, 'changed', { mode: 0o604 });
    await files.restore(f);
    expect([readFileSync(f, 'utf8'), modeOf(f)]).toEqual(['old', 0o604]);
    unlinkSync(f);
    await files.restore(f);
    expect([readFileSync(f, 'utf8'), modeOf(f)]).toEqual(['old', 0o644]);
  });

  it('remove: a missing file is false; a backup only when asked; a directory is refused', async () => {
    const f = join(root, 'x.conf');
    expect(await files.remove(f, { backup: true })).toEqual({ removed: false });
    writeFileSync(f, 'x', { mode: 0o640 });
    expect(await files.remove(f, {})).toEqual({ removed: true });
    expect(existsSync(f)).toBe(false);
    expect(existsSync(files.backupPathOf(f))).toBe(false);
    writeFileSync(f, 'y');
    chmodSync(f, 0o640);
    expect(await files.remove(f, { backup: true })).toEqual({ removed: true, backupPath: files.backupPathOf(f) });
    expect([existsSync(f), readFileSync(files.backupPathOf(f), 'utf8')]).toEqual([false, 'y']);
    expect(await files.restore(f)).toEqual({ restored: true });
    expect([readFileSync(f, 'utf8'), modeOf(f)]).toEqual(['y', 0o640]);
    mkdirSync(join(root, 'd'));
    expect(await outcome(() => files.remove(join(root, 'd'), {}))).toBe(`conflict: is a directory: ${root}/d`);
  });
});
