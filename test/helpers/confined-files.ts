import { mkdirSync, readdirSync, statSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { ConfinedFiles } from '../../runtime/system/files';
import { privateDir } from './tmp';

/**
 * A private tree for the file-operation tests (system-files*.test.ts): `root` (<dir>/data, given
 * to ConfinedFiles through the symlink <dir>/via) writable, its sibling `<dir>/data2` outside
 * every root, <dir>/ro read-only with <dir>/ro/rw writable inside it, backups in <dir>/backups.
 */
export function confinedTree(): { dir: string; root: string; files: ConfinedFiles } {
  const dir = privateDir('system-files');
  const root = join(dir, 'data');
  for (const d of [root, `${root}2`, join(dir, 'ro'), join(dir, 'ro', 'rw')]) mkdirSync(d, { recursive: true });
  symlinkSync(root, join(dir, 'via'));
  const files = new ConfinedFiles(
    [
      { path: join(dir, 'via'), writable: true },
      { path: join(dir, 'ro'), writable: false },
      { path: join(dir, 'ro', 'rw'), writable: true },
    ],
    join(dir, 'backups'),
  );
  return { dir, root, files };
}

/** `code: message` of a SystemRefusal, `errno CODE` of a system error, or `ok`. */
export async function outcome(f: () => unknown): Promise<string> {
  try {
    await f();
    return 'ok';
  } catch (e) {
    const x = e as { name?: string; code?: string; message: string };
    return x.name === 'SystemRefusal' ? `${x.code}: ${x.message}` : `errno ${x.code}`;
  }
}

export const modeOf = (p: string): number => statSync(p).mode & 0o7777;

/** The directory's names, sorted: a temp file a write left shows here. */
export const namesIn = (d: string): string[] => readdirSync(d).sort();
