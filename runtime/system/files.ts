import { promises as fsp, constants, readFileSync, realpathSync } from 'node:fs';
import { dirname, basename, join, resolve, sep } from 'node:path';
import { randomBytes } from 'node:crypto';
import type { DirEntry, FileStat, WriteResult } from '../../handlers/core/system';
import { SystemRefusal } from './types';

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
    if (typeof path !== 'string' || !path.startsWith('/')) throw new SystemRefusal('bad_request', 'path must be absolute');
    if (path.includes('\0')) throw new SystemRefusal('bad_request', 'path must not contain NUL');
    if (path.split('/').includes('..')) throw new SystemRefusal('bad_request', 'path must not contain ..');
    const real = await resolveExisting(path);
    const inside = (r: string) => real === r || real.startsWith(r.endsWith(sep) ? r : r + sep);
    const root = this.roots.find((r) => inside(r.path) && (r.writable || !write));
    if (!root) {
      const readOnly = this.roots.some((r) => inside(r.path));
      throw new SystemRefusal('forbidden', readOnly ? `path is read-only for this service: ${path}` : `path is outside the locations this service manages: ${path}`);
    }
    return real;
  }

  async read(path: unknown): Promise<{ content: string | null }> {
    const p = await this.check(path);
    try {
      // Config files are small; the sync read costs microseconds where fs/promises costs four
      // thread-pool round trips per file.
      return { content: readFileSync(p, 'utf8') };
    } catch (e) {
      if (isErrno(e, 'ENOENT')) return { content: null };
      if (isErrno(e, 'EISDIR')) throw new SystemRefusal('conflict', `is a directory: ${path}`);
      throw e;
    }
  }

  backupPathOf(real: string): string {
    return join(this.backupDir, `${real}.prev`);
  }

  async write(path: unknown, content: unknown, opts: { mode?: number; backup?: boolean; exclusive?: boolean }): Promise<WriteResult> {
    if (typeof content !== 'string') throw new SystemRefusal('bad_request', 'content must be a string');
    const p = await this.check(path, true);
    await fsp.mkdir(dirname(p), { recursive: true });
    let previous: Buffer | null = null;
    try {
      previous = await fsp.readFile(p);
    } catch (e) {
      if (!isErrno(e, 'ENOENT')) throw e;
    }
    if (opts.exclusive && previous !== null) throw new SystemRefusal('conflict', `already exists: ${path}`);
    const out: WriteResult = { path: p };
    if (opts.backup && previous !== null) {
      out.backupPath = this.backupPathOf(p);
      await atomicWrite(out.backupPath, previous, 0o600);
    }
    const st = previous !== null ? await fsp.stat(p) : null;
    const mode = opts.mode ?? (st ? st.mode & 0o7777 : 0o644);
    if (opts.exclusive) {
      await atomicCreate(p, Buffer.from(content, 'utf8'), mode, path as string);
      return out;
    }
    await atomicWrite(p, Buffer.from(content, 'utf8'), mode);
    return out;
  }

  /** Put back the version kept by the last write/remove with backup. */
  async restore(path: unknown): Promise<{ restored: boolean }> {
    const p = await this.check(path, true);
    let prev: Buffer;
    try {
      prev = await fsp.readFile(this.backupPathOf(p));
    } catch (e) {
      if (isErrno(e, 'ENOENT')) return { restored: false };
      throw e;
    }
    await atomicWrite(p, prev, 0o644);
    return { restored: true };
  }

  async remove(path: unknown, opts: { backup?: boolean }): Promise<{ removed: boolean; backupPath?: string }> {
    const p = await this.check(path, true);
    let previous: Buffer;
    try {
      previous = await fsp.readFile(p);
    } catch (e) {
      if (isErrno(e, 'ENOENT')) return { removed: false };
      throw e;
    }
    const out: { removed: boolean; backupPath?: string } = { removed: true };
    if (opts.backup) {
      out.backupPath = this.backupPathOf(p);
      await atomicWrite(out.backupPath, previous, 0o600);
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
          type: (d.isFile() ? 'file' : d.isDirectory() ? 'dir' : d.isSymbolicLink() ? 'symlink' : d.isBlockDevice() ? 'block' : 'other') as DirEntry['type'],
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
      const type: FileStat['type'] = s.isFile() ? 'file' : s.isDirectory() ? 'dir' : s.isSymbolicLink() ? 'symlink' : s.isBlockDevice() ? 'block' : 'other';
      return { stat: { type, size: s.size, mode: s.mode, mtimeMs: s.mtimeMs } };
    } catch (e) {
      if (isErrno(e, 'ENOENT')) return { stat: null };
      throw e;
    }
  }
}

/** A complete, fsynced copy of `data` beside `path`, under a temporary name. */
async function writeTemp(path: string, data: Buffer, mode: number): Promise<string> {
  await fsp.mkdir(dirname(path), { recursive: true });
  const tmp = join(dirname(path), `.${basename(path)}.tmp-${randomBytes(6).toString('hex')}`);
  const fh = await fsp.open(tmp, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL, mode);
  try {
    await fh.writeFile(data);
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

export async function atomicWrite(path: string, data: Buffer, mode: number): Promise<void> {
  const tmp = await writeTemp(path, data, mode);
  try {
    await fsp.rename(tmp, path);
  } catch (e) {
    await fsp.unlink(tmp).catch(() => undefined);
    throw e;
  }
  await fsyncDir(dirname(path));
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

/** realpath of the longest existing prefix, with the not-yet-existing rest appended. */
async function resolveExisting(path: string): Promise<string> {
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
