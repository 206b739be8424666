import {
  type Dirent,
  promises as fsp,
  closeSync,
  constants,
  fchmodSync,
  fchownSync,
  fstatSync,
  fsyncSync,
  lstatSync,
  mkdirSync,
  openSync,
  readFileSync,
  readdirSync,
  realpathSync,
  renameSync,
  unlinkSync,
  writeSync,
  type Stats,
} from 'node:fs';
import { dirname, basename, join, resolve } from 'node:path';
import { randomBytes } from 'node:crypto';
import type { DirEntry, FileStat, WriteResult } from '../../handlers/core/system';
import { SystemRefusal } from './types';
import { isUnder } from '../../handlers/core/paths';

/**
 * File operations confined to configured locations. A path is checked after resolving symlinks
 * of every existing ancestor, so a link inside an allowed directory cannot lead outside it.
 * Writes are atomic (temp file in the same directory, fsync, rename) and can keep the previous
 * version in a backup directory outside the config tree (a backup beside the file would be
 * picked up by `source interfaces.d/*` or `includedir`).
 */
export interface FileRoot {
  path: string;
  writable: boolean;
}

export class ConfinedFiles {
  private readonly roots: FileRoot[];

  constructor(
    roots: FileRoot[],
    private readonly backupDir: string,
  ) {
    this.roots = roots.map((r) => ({ path: realOrSelf(resolve(r.path)), writable: r.writable }));
  }

  async check(path: unknown, write = false): Promise<string> {
    if (typeof path !== 'string' || !path.startsWith('/'))
      throw new SystemRefusal('bad_request', 'path must be absolute');
    if (path.includes('\0')) throw new SystemRefusal('bad_request', 'path must not contain NUL');
    if (path.split('/').includes('..')) throw new SystemRefusal('bad_request', 'path must not contain ..');
    const real = resolveExisting(path);
    const inside = (r: string) => isUnder(real, r);
    const root = this.roots.find((r) => inside(r.path) && (r.writable || !write));
    if (!root) {
      const readOnly = this.roots.some((r) => inside(r.path));
      throw new SystemRefusal(
        'forbidden',
        readOnly
          ? `path is read-only for this service: ${path}`
          : `path is outside the locations this service manages: ${path}`,
      );
    }
    return real;
  }

  async read(path: unknown): Promise<{ content: string | null }> {
    const p = await this.check(path);
    const data = readRegular(p, path as string);
    return { content: data === null ? null : data.toString('utf8') };
  }

  /** Removes the temp files interrupted atomic writes left in these directories (removeStaleTemps). */
  removeStaleTemps(dirs: readonly string[]): string[] {
    return removeStaleTemps(dirs);
  }

  /**
   * Removes the temp files an interrupted backup left in the backup tree (`.<name>.prev.tmp-<hex>`,
   * `.<name>.prev.meta.tmp-<hex>`); the backups themselves (`<name>.prev`, `.prev.meta`) stay. The
   * tree mirrors the absolute paths it keeps, so it is walked to the bottom, never through a
   * symlink. Run at start, before anything writes.
   */
  removeStaleBackupTemps(): string[] {
    const removed: string[] = [];
    const walk = (dir: string): void => {
      let entries: Dirent[];
      try {
        entries = readdirSync(dir, { withFileTypes: true });
      } catch {
        return;
      }
      for (const e of entries) {
        const p = join(dir, e.name);
        if (e.isDirectory()) walk(p);
        else if (e.isFile() && BACKUP_TEMP_NAME.test(e.name)) {
          try {
            unlinkSync(p);
            removed.push(p);
          } catch {
            // gone already
          }
        }
      }
    };
    walk(this.backupDir);
    return removed;
  }

  backupPathOf(real: string): string {
    return join(this.backupDir, `${real}.prev`);
  }

  async write(
    path: unknown,
    content: unknown,
    opts: { mode?: number; backup?: boolean; exclusive?: boolean },
  ): Promise<WriteResult> {
    if (typeof content !== 'string') throw new SystemRefusal('bad_request', 'content must be a string');
    const p = await this.check(path, true);
    await fsp.mkdir(dirname(p), { recursive: true });
    const previous = readRegular(p, path as string);
    if (opts.exclusive && previous !== null) throw new SystemRefusal('conflict', `already exists: ${path}`);
    const out: WriteResult = { path: p };
    const st = previous !== null ? await fsp.stat(p) : null;
    if (opts.backup && previous !== null && st) {
      out.backupPath = this.backupPathOf(p);
      await this.keep(out.backupPath, previous, st);
    }
    const mode = opts.mode ?? (st ? st.mode & 0o7777 : 0o644);
    if (opts.exclusive) {
      await atomicCreate(p, Buffer.from(content, 'utf8'), mode, path as string);
      return out;
    }
    // a replaced file keeps its owner (the service may not be the only one reading it)
    await atomicWrite(p, Buffer.from(content, 'utf8'), mode, st ? { uid: st.uid, gid: st.gid } : undefined);
    return out;
  }

  /** The backup (0600: it may hold secrets) and, beside it, the original's mode and owner. */
  private async keep(backupPath: string, data: Buffer, st: { mode: number; uid: number; gid: number }): Promise<void> {
    await atomicWrite(backupPath, data, 0o600);
    await atomicWrite(
      `${backupPath}.meta`,
      Buffer.from(JSON.stringify({ mode: st.mode & 0o7777, uid: st.uid, gid: st.gid })),
      0o600,
    );
  }

  /** Put back the version kept by the last write/remove with backup. */
  async restore(path: unknown): Promise<{ restored: boolean }> {
    const p = await this.check(path, true);
    const backup = this.backupPathOf(p);
    const prev = readRegular(backup, backup);
    if (prev === null) return { restored: false };
    // the original's mode and owner, as kept with the backup (older backups: the current file's)
    let meta: { mode: number; uid: number; gid: number } | undefined;
    try {
      meta = JSON.parse(readFileSync(`${backup}.meta`, 'utf8')) as { mode: number; uid: number; gid: number };
    } catch {
      const st = await fsp.stat(p).catch(() => null);
      if (st) meta = { mode: st.mode & 0o7777, uid: st.uid, gid: st.gid };
    }
    await atomicWrite(p, prev, meta?.mode ?? 0o644, meta);
    return { restored: true };
  }

  async remove(path: unknown, opts: { backup?: boolean }): Promise<{ removed: boolean; backupPath?: string }> {
    const p = await this.check(path, true);
    const previous = readRegular(p, path as string);
    if (previous === null) return { removed: false };
    const out: { removed: boolean; backupPath?: string } = { removed: true };
    if (opts.backup) {
      out.backupPath = this.backupPathOf(p);
      await this.keep(out.backupPath, previous, await fsp.stat(p));
    }
    await fsp.unlink(p);
    await fsyncDir(dirname(p));
    return out;
  }

  async list(path: unknown): Promise<{ entries: DirEntry[] | null }> {
    const p = await this.check(path);
    try {
      const dirents = await fsp.readdir(p, { withFileTypes: true });
      const entries = dirents
        .map((d) => ({
          name: d.name,
          type: (d.isFile()
            ? 'file'
            : d.isDirectory()
              ? 'dir'
              : d.isSymbolicLink()
                ? 'symlink'
                : d.isBlockDevice()
                  ? 'block'
                  : 'other') as DirEntry['type'],
        }))
        .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
      return { entries };
    } catch (e) {
      if (isErrno(e, 'ENOENT')) return { entries: null };
      throw e;
    }
  }

  async stat(path: unknown): Promise<{ stat: FileStat | null }> {
    const p = await this.check(path);
    try {
      const s = await fsp.lstat(p);
      const type: FileStat['type'] = s.isFile()
        ? 'file'
        : s.isDirectory()
          ? 'dir'
          : s.isSymbolicLink()
            ? 'symlink'
            : s.isBlockDevice()
              ? 'block'
              : 'other';
      return { stat: { type, size: s.size, mode: s.mode, mtimeMs: s.mtimeMs } };
    } catch (e) {
      if (isErrno(e, 'ENOENT')) return { stat: null };
      throw e;
    }
  }
}

/** What an interrupted atomic write leaves behind (writeTemp's and atomicWriteSync's names). */
const TEMP_NAME = /^\..+\.tmp-[0-9a-f]{12}$/;

/**
 * Removes the temp files an interrupted atomic write leaves (`.<name>.tmp-<hex>`) in these
 * directories; answers what it removed. Run at start, before anything writes.
 */
export function removeStaleTemps(dirs: readonly string[]): string[] {
  const removed: string[] = [];
  for (const dir of new Set(dirs)) {
    let names: string[];
    try {
      names = readdirSync(dir);
    } catch {
      continue;
    }
    for (const name of names) {
      if (!TEMP_NAME.test(name)) continue;
      const p = join(dir, name);
      try {
        if (!lstatSync(p).isFile()) continue;
        unlinkSync(p);
        removed.push(p);
      } catch {
        // gone already, or not ours to remove
      }
    }
  }
  return removed;
}
/** The same, for the backup of a file and its mode/owner record (keep()'s two writes). */
const BACKUP_TEMP_NAME = /^\..+\.prev(\.meta)?\.tmp-[0-9a-f]{12}$/;

/**
 * A regular file's bytes, or null when it does not exist. Anything else (a FIFO, a device, a
 * socket) is refused without blocking: opened non-blocking and without following a last-moment
 * symlink, and the opened inode must be the one lstat saw. `maxBytes` and `check` (why the opened
 * file's stat is refused, or null) judge the file that is read, not the name.
 */
export function readRegular(
  real: string,
  shown: string,
  o: { maxBytes?: number; check?: (st: Stats) => string | null } = {},
): Buffer | null {
  let before;
  try {
    before = lstatSync(real);
  } catch (e) {
    if (isErrno(e, 'ENOENT') || isErrno(e, 'ENOTDIR')) return null;
    throw e;
  }
  if (before.isDirectory()) throw new SystemRefusal('conflict', `is a directory: ${shown}`);
  if (!before.isFile()) throw new SystemRefusal('bad_request', `not a regular file: ${shown}`);
  const fd = openSync(real, constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOFOLLOW);
  try {
    const st = fstatSync(fd);
    if (!st.isFile() || st.ino !== before.ino || st.dev !== before.dev)
      throw new SystemRefusal('conflict', `${shown} changed while it was being read`);
    if (o.maxBytes !== undefined && st.size > o.maxBytes)
      throw new SystemRefusal('bad_request', `${shown} is larger than ${o.maxBytes} bytes`);
    const why = o.check?.(st);
    if (why) throw new SystemRefusal('forbidden', `${shown} ${why}`);
    return readFileSync(fd);
  } finally {
    closeSync(fd);
  }
}

/** A complete, fsynced copy of `data` beside `path`, under a temporary name. */
async function writeTemp(
  path: string,
  data: Buffer,
  mode: number,
  owner?: { uid: number; gid: number },
): Promise<string> {
  await fsp.mkdir(dirname(path), { recursive: true });
  const tmp = join(dirname(path), `.${basename(path)}.tmp-${randomBytes(6).toString('hex')}`);
  const fh = await fsp.open(tmp, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL, mode);
  try {
    await fh.writeFile(data);
    if (owner) await fh.chown(owner.uid, owner.gid);
    await fh.chmod(mode);
    await fh.sync();
  } catch (e) {
    await fsp.unlink(tmp).catch(() => undefined);
    throw e;
  } finally {
    await fh.close();
  }
  return tmp;
}

export async function atomicWrite(
  path: string,
  data: Buffer,
  mode: number,
  owner?: { uid: number; gid: number },
): Promise<void> {
  const tmp = await writeTemp(path, data, mode, owner);
  try {
    await fsp.rename(tmp, path);
  } catch (e) {
    await fsp.unlink(tmp).catch(() => undefined);
    throw e;
  }
  await fsyncDir(dirname(path));
}

/**
 * atomicWrite for callers that must finish before anything else runs (an area's recovery at
 * start, before the server reads what it restores): the same temp name, so an interrupted one is
 * removed the same way (removeStaleTemps).
 */
export function atomicWriteSync(
  path: string,
  data: Buffer | string,
  mode: number,
  owner?: { uid: number; gid: number },
): void {
  mkdirSync(dirname(path), { recursive: true });
  const tmp = join(dirname(path), `.${basename(path)}.tmp-${randomBytes(6).toString('hex')}`);
  const fd = openSync(tmp, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, mode);
  try {
    const buf = typeof data === 'string' ? Buffer.from(data, 'utf8') : data;
    for (let off = 0; off < buf.length;) off += writeSync(fd, buf, off, buf.length - off);
    if (owner) fchownSync(fd, owner.uid, owner.gid);
    fchmodSync(fd, mode);
    fsyncSync(fd);
  } catch (e) {
    closeSync(fd);
    unlinkQuietly(tmp);
    throw e;
  }
  closeSync(fd);
  try {
    renameSync(tmp, path);
  } catch (e) {
    unlinkQuietly(tmp);
    throw e;
  }
  const dir = openSync(dirname(path), 'r');
  try {
    fsyncSync(dir);
  } finally {
    closeSync(dir);
  }
}

function unlinkQuietly(p: string): void {
  try {
    unlinkSync(p);
  } catch {
    // already gone
  }
}

/** Like atomicWrite, but the final name must not exist: the file appears complete or not at all. */
async function atomicCreate(path: string, data: Buffer, mode: number, shown: string): Promise<void> {
  const tmp = await writeTemp(path, data, mode);
  try {
    // link() fails atomically on an existing name, where check-then-rename would let racers both win
    await fsp.link(tmp, path);
  } catch (e) {
    if (isErrno(e, 'EEXIST')) throw new SystemRefusal('conflict', `already exists: ${shown}`);
    throw e;
  } finally {
    await fsp.unlink(tmp).catch(() => undefined);
  }
  await fsyncDir(dirname(path));
}

async function fsyncDir(dir: string): Promise<void> {
  const fh = await fsp.open(dir, 'r');
  try {
    await fh.sync();
  } finally {
    await fh.close();
  }
}

/**
 * realpath of the longest existing prefix, with the not-yet-existing rest appended (a directory
 * or file about to be created). Shared by the file operations and command confinement.
 */
export function resolveExisting(path: string): string {
  const parts = resolve(path).split('/').filter(Boolean);
  for (let i = parts.length; i >= 0; i--) {
    const head = '/' + parts.slice(0, i).join('/');
    try {
      const real = realpathSync.native(head);
      return resolve(real, ...parts.slice(i));
    } catch (e) {
      if (!isErrno(e, 'ENOENT') && !isErrno(e, 'ENOTDIR')) throw e;
    }
  }
  return resolve(path);
}

function realOrSelf(p: string): string {
  try {
    return realpathSync(p);
  } catch {
    return p;
  }
}

export function isErrno(e: unknown, code: string): boolean {
  return typeof e === 'object' && e !== null && (e as { code?: string }).code === code;
}
