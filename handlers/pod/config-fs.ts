/**
 * The filesystems of POST /pod/config: what each given path is (a block device with a filesystem,
 * or a mount point under settings.pod.mountRoots), where the engine's data-root may be, and that a
 * device is not mounted twice (README "Container system configuration").
 */
import { badGateway, conflict, validationFailed } from '../core/errors';
import { isUnder } from '../core/paths';
import type { SystemClient } from '../core/system';
import { bin, path, type Vars } from '../core/vars';
import { parseFindmntOne } from '../tools/findmnt';
import type { FstabEntry } from '../tools/fstab';
import { parseLsblkOne } from '../tools/lsblk';
import { RESOLVE_OP, type PodSettings, type ResolveResult } from './contract';
import { parseBlkidExport } from './parse/blkid';

export const DEFAULT_DATA_ROOT = '/var/lib/docker';

/** realpath on the host (of the longest existing prefix): where a mount or the engine would land. */
export const resolved = async (system: SystemClient, p: string) =>
  (await system.op<ResolveResult>(RESOLVE_OP, { path: p })).real;

export type Fs =
  | { kind: 'block'; spec: string; fstype: string; path: string; uuid: string | null; mountpoints: string[] }
  | { kind: 'mount'; target: string };

/** A block device with a filesystem (lsblk), or a mount point under settings.pod.mountRoots (findmnt). */
export async function checkFs(system: SystemClient, vars: Vars, s: PodSettings, field: string, p: string): Promise<Fs> {
  if (p.startsWith('/dev/')) {
    // MOUNTPOINTS comes from the kernel's mount table (libmount), not udev: it holds without udev too
    const r = await system.exec([bin(vars, 'lsblk'), '-J', '-d', '-o', 'PATH,TYPE,FSTYPE,UUID,MOUNTPOINTS', '--', p]);
    if (r.code !== 0) throw validationFailed(`body.${field}`, `${p} is not a block device`);
    const b = parseLsblkOne(r.stdout);
    let { fstype, uuid } = b;
    if (!fstype) {
      // lsblk reads udev's database; without udev (containers, early boot) only a probe knows
      const probe = await system.exec([bin(vars, 'blkid'), '-p', '-o', 'export', '--', p]);
      const k = probe.code === 0 ? parseBlkidExport(probe.stdout) : {};
      if (k.USAGE === 'filesystem' && k.TYPE) {
        fstype = k.TYPE;
        uuid = k.UUID ?? null;
      }
    }
    if (!fstype)
      throw validationFailed(`body.${field}`, `${p} has no filesystem (make one with POST /fs/make_filesystem)`);
    // both end up in an fstab line: one plain word each
    if (!/^[A-Za-z0-9_.+-]{1,32}$/.test(fstype))
      throw validationFailed(`body.${field}`, `${p}: unexpected filesystem type ${JSON.stringify(fstype)}`);
    const okUuid = uuid && /^[A-Za-z0-9-]{1,64}$/.test(uuid) ? uuid : null;
    const spec = okUuid ? `UUID=${okUuid}` : b.path;
    if (!/^\/dev\/[A-Za-z0-9_./:-]+$/.test(spec) && !spec.startsWith('UUID='))
      throw validationFailed(`body.${field}`, `${p}: unexpected device path ${JSON.stringify(b.path)}`);
    return { kind: 'block', spec, fstype, path: b.path, uuid: okUuid, mountpoints: b.mountpoints };
  }
  // resolved by the host (symlinks followed) and checked before any command sees it
  const real = await resolved(system, p);
  const notUnder = (t: string) =>
    validationFailed(`body.${field}`, `${t} is not under the mount roots (${s.mountRoots.join(', ')})`);
  if (!s.mountRoots.some((root) => isUnder(real, root, true))) throw notUnder(real);
  const r = await system.exec([bin(vars, 'findmnt'), '-J', '-o', 'TARGET,SOURCE,FSTYPE', '--mountpoint', real]);
  if (r.code !== 0)
    throw validationFailed(`body.${field}`, `${p} is neither a block device (/dev/…) nor a mount point`);
  const m = parseFindmntOne(r.stdout);
  if (!s.mountRoots.some((root) => isUnder(m.target, root, true))) throw notUnder(m.target);
  return { kind: 'mount', target: m.target };
}

/**
 * A device the fstab line will mount at `target` must not be mounted anywhere else now (it would
 * be mounted twice from the next boot on, two filesystems writing one disk if it is not unmounted),
 * nor be active swap. Mounted at `target` already is the same configuration sent again.
 */
export function refuseMountedElsewhere(field: string, given: string, fs: Fs, target: string): void {
  if (fs.kind !== 'block') return;
  const elsewhere = fs.mountpoints.filter((m) => m !== target);
  if (elsewhere.length === 0) return;
  const where = elsewhere.map((m) => (m === '[SWAP]' ? 'swap' : m));
  throw conflict(
    `${given} is in use: mounted at ${where.join(', ')}; the next boot would mount it twice: unmount it first (POST /fs/unmount), or send that mount point instead of the device`,
    { field: `body.${field}`, device: fs.path, mountpoints: elsewhere },
  );
}

/**
 * After the change, no other fstab line may name the device (by UUID=, /dev/disk/by-uuid/ or its
 * path): the boot would mount it twice. Lines of ours for the same role are replaced, not counted.
 */
export function refuseListedElsewhere(field: string, given: string, fs: Fs, target: string, fstab: FstabEntry[]): void {
  if (fs.kind !== 'block') return;
  const names = new Set([fs.path, fs.spec]);
  if (fs.uuid) names.add(`UUID=${fs.uuid}`).add(`/dev/disk/by-uuid/${fs.uuid}`);
  const other = fstab.find((e) => names.has(e.fs_spec) && e.fs_file !== target);
  if (!other) return;
  throw conflict(
    `${given} is already in fstab (${other.fs_spec} on ${other.fs_file}, line ${other.line + 1}); the next boot would mount it twice`,
    { field: `body.${field}`, device: fs.path, mountpoint: other.fs_file },
  );
}

/**
 * The engine's data-root holds every container's configuration, which the engine trusts at its
 * next start: no pod may reach it. It may not contain, or lie inside, the pods' data (the pod
 * data location, its mount, the bind roots, the source of a bind entry for pod data).
 */
export async function checkApartFromPods(
  system: SystemClient,
  vars: Vars,
  s: PodSettings,
  dataPaths: string[],
  field: string,
  root: string,
): Promise<void> {
  for (const p of [path(vars, 'podData'), s.dataMountpoint, ...s.bindRoots, ...dataPaths]) {
    const real = await resolved(system, p);
    if (isUnder(root, real) || isUnder(real, root))
      throw validationFailed(
        field,
        `data-root ${root} and the pods' data ${real} contain one another: containers could rewrite the engine's own files`,
      );
  }
}

/** A data-root the engine is moved to: /var/lib/docker or strictly under a mount root, resolved. */
export async function checkDataRoot(system: SystemClient, s: PodSettings, root: string): Promise<string> {
  // resolved by the host: a link that leads elsewhere is judged where it leads
  const real = await resolved(system, root);
  if (real !== DEFAULT_DATA_ROOT && !s.mountRoots.some((r) => isUnder(real, r, true))) {
    throw validationFailed(
      'body.configJson.data-root',
      `${root} resolves to ${real}: data-root is ${DEFAULT_DATA_ROOT} or a directory strictly under the mount roots (${s.mountRoots.join(', ')}), never a system directory`,
    );
  }
  return real;
}

/** The engine's daemon.json as an object ({} when absent or empty); 502 when it is not one. */
export async function readDaemonJson(system: SystemClient, file: string): Promise<Record<string, unknown>> {
  const text = await system.readFile(file);
  if (text === null || text.trim() === '') return {};
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    throw badGateway(`${file} is not valid JSON`);
  }
  if (!v || typeof v !== 'object' || Array.isArray(v)) throw badGateway(`${file} is not a JSON object`);
  return v as Record<string, unknown>;
}

/** The spec's podDataMount options: booleans read from the mount options. */
export function mountOptionsOf(ops: string[]): {
  rw: boolean;
  mand: boolean;
  noatime: boolean;
  xattr: boolean;
  posixacl: boolean;
} {
  const has = (o: string) => ops.includes(o);
  return {
    rw: !has('ro'),
    mand: has('mand'),
    noatime: has('noatime'),
    xattr: has('user_xattr') || has('xattr'),
    posixacl: has('acl') || has('posixacl'),
  };
}
