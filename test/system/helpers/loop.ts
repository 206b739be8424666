/**
 * Loop-device harness for the system test tier (and for recording fs fixtures).
 *
 * Each device is backed by a sparse image file in a private temporary directory
 * (mkdtemp, mode 0700), attached with `losetup --find --show`; an optional filesystem is made
 * on it and optionally mounted on a directory inside the same private directory. Nothing of
 * the machine's own disks is touched: every destructive command names the loop device this
 * harness attached, and cleanup only detaches devices whose backing file is our image.
 *
 * Commands run with argv arrays through execFile (never a shell string) under LC_ALL=C, the
 * locale the parsers are written for. A missing tool, or not being root, is a hard error,
 * never a skip: a system test that silently skips proves nothing.
 */
import { execFileSync } from 'node:child_process';
import { accessSync, constants, rmSync } from 'node:fs';
import { mkdir, mkdtemp, open, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export const LOSETUP = '/usr/sbin/losetup';
export const MOUNT = '/usr/bin/mount';
export const UMOUNT = '/usr/bin/umount';
export const FINDMNT = '/usr/bin/findmnt';
export const WIPEFS = '/usr/sbin/wipefs';

/** Debian package per tool, for the error message when one is missing. */
const PACKAGE: Record<string, string> = {
  [LOSETUP]: 'mount',
  [MOUNT]: 'mount',
  [UMOUNT]: 'mount',
  [FINDMNT]: 'util-linux',
  [WIPEFS]: 'util-linux',
  '/usr/sbin/mkfs.ext2': 'e2fsprogs',
  '/usr/sbin/mkfs.ext3': 'e2fsprogs',
  '/usr/sbin/mkfs.ext4': 'e2fsprogs',
  '/usr/sbin/mkfs.xfs': 'xfsprogs',
  '/usr/sbin/mkfs.vfat': 'dosfstools',
  '/usr/sbin/mkfs.msdos': 'dosfstools',
  '/usr/sbin/mkfs.btrfs': 'btrfs-progs',
  '/usr/bin/xxhsum': 'xxhash',
  '/usr/bin/getfacl': 'acl',
  '/usr/bin/setfacl': 'acl',
  '/usr/bin/lsblk': 'util-linux',
  '/usr/bin/partx': 'util-linux',
  '/usr/sbin/mkswap': 'util-linux',
  '/usr/sbin/swapon': 'mount',
  '/usr/sbin/swapoff': 'mount',
};

/** Throws naming every missing binary (and its package). The caller must not skip. */
export function requireTools(...paths: string[]): void {
  const missing = paths.filter((p) => {
    try {
      accessSync(p, constants.X_OK);
      return false;
    } catch {
      return true;
    }
  });
  if (missing.length > 0) {
    const list = missing.map((p) => `${p}${PACKAGE[p] ? ` (Debian package "${PACKAGE[p]}")` : ''}`).join(', ');
    throw new Error(`loop harness: required tool missing or not executable: ${list}`);
  }
}

export function requireRoot(): void {
  if (typeof process.getuid !== 'function' || process.getuid() !== 0) {
    throw new Error('loop harness: must run as root (loop devices, mkfs, mount)');
  }
}

export { exec, run, type ExecOptions, type ExecResult } from './exec';
import { exec, run } from './exec';

/** Default quiet flags so test logs stay readable. */
function defaultMkfsArgs(fsType: string): string[] {
  if (fsType.startsWith('ext') || fsType === 'xfs') return ['-q'];
  return [];
}

export interface LoopOptions {
  /** size of the sparse image in MiB (xfs needs >= 300) */
  sizeMiB: number;
  /** make this filesystem with /usr/sbin/mkfs.<fsType> */
  fsType?: string;
  /** extra mkfs arguments (before the device); default `-q` for ext2/3/4 and xfs */
  mkfsArgs?: string[];
  /** mount the new filesystem (needs fsType) on `<private dir>/<mount or "mnt">` */
  mount?: boolean | string;
  /** `losetup --partscan` (for partition-table scenarios) */
  partscan?: boolean;
}

export interface LoopDevice {
  /** e.g. /dev/loop3 */
  device: string;
  /** the sparse backing file */
  image: string;
  /** the private directory holding image and mountpoint */
  dir: string;
  mountpoint?: string;
  /** unmount everything mounted from the device, detach it, remove the files; safe to call twice */
  cleanup(): Promise<void>;
}

/** loop devices attached by this process, for the exit hook */
const live = new Map<string, string>(); // image -> dir
let exitHookInstalled = false;

function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  // Last resort if a test crashed before cleanup: synchronous, best effort, and still only
  // for devices backed by our own images.
  process.on('exit', () => {
    for (const [image, dir] of live) {
      try {
        for (const dev of attachedSync(image)) {
          for (const target of mountTargetsSync(dev)) {
            try {
              execFileSync(UMOUNT, [target], { stdio: 'ignore' });
            } catch {
              /* keep going */
            }
          }
          execFileSync(LOSETUP, ['-d', dev], { stdio: 'ignore' });
        }
        rmSync(dir, { recursive: true, force: true });
      } catch {
        /* best effort */
      }
    }
  });
}

interface LosetupList {
  loopdevices?: { name: string; 'back-file': string | null }[];
}

function parseLosetupList(stdout: string, image: string): string[] {
  if (stdout.trim() === '') return [];
  const list = JSON.parse(stdout) as LosetupList;
  // back-file may carry " (deleted)" once the image is gone
  return (list.loopdevices ?? [])
    .filter((d) => d['back-file'] === image || d['back-file'] === `${image} (deleted)`)
    .map((d) => d.name);
}

function attachedSync(image: string): string[] {
  const out = execFileSync(LOSETUP, ['--list', '--json', '--output', 'NAME,BACK-FILE'], { encoding: 'utf8' });
  return parseLosetupList(out, image);
}

function mountTargetsSync(device: string): string[] {
  try {
    const out = execFileSync(FINDMNT, ['-n', '-l', '-o', 'TARGET', '--source', device], { encoding: 'utf8' });
    return out
      .split('\n')
      .filter((l) => l !== '')
      .reverse();
  } catch {
    return [];
  }
}

/** Loop devices currently backed by `image` (used by tests to prove cleanup worked). */
export async function attachedLoopDevices(image: string): Promise<string[]> {
  const r = await run([LOSETUP, '--list', '--json', '--output', 'NAME,BACK-FILE']);
  return parseLosetupList(r.stdout, image);
}

/** Every mountpoint of `device` (and of its partitions), innermost first. */
async function mountTargets(device: string): Promise<string[]> {
  // findmnt exits 1 with no output when nothing matches
  const r = await exec([FINDMNT, '-J', '-l', '-o', 'TARGET,SOURCE']);
  if (r.code !== 0 || r.stdout.trim() === '') return [];
  const list = JSON.parse(r.stdout) as { filesystems: { target: string; source: string }[] };
  const isOurs = (source: string) => {
    const dev = source.replace(/\[.*\]$/, '');
    return dev === device || dev.startsWith(`${device}p`);
  };
  return list.filesystems
    .filter((f) => isOurs(f.source))
    .map((f) => f.target)
    .reverse();
}

export async function createLoopDevice(opts: LoopOptions): Promise<LoopDevice> {
  requireRoot();
  const tools = [LOSETUP, UMOUNT, FINDMNT];
  const mkfs = opts.fsType ? `/usr/sbin/mkfs.${opts.fsType}` : null;
  if (mkfs) tools.push(mkfs);
  if (opts.mount) tools.push(MOUNT);
  requireTools(...tools);
  if (opts.mount && !opts.fsType) throw new Error('loop harness: mount needs fsType');
  if (!Number.isInteger(opts.sizeMiB) || opts.sizeMiB < 1)
    throw new Error('loop harness: sizeMiB must be a positive integer');

  installExitHook();
  const dir = await mkdtemp(join(tmpdir(), 'ballast-loop-'));
  const image = join(dir, 'disk.img');
  live.set(image, dir);

  let device: string | undefined;
  let mountpoint: string | undefined;
  let cleaned = false;

  const cleanup = async () => {
    if (cleaned) return;
    const errors: string[] = [];
    const devices = await attachedLoopDevices(image).catch((e: Error) => {
      errors.push(e.message);
      return device ? [device] : [];
    });
    for (const dev of devices) {
      for (const target of await mountTargets(dev)) {
        const r = await exec([UMOUNT, target]);
        if (r.code !== 0) errors.push(`umount ${target}: ${r.stderr.trim()}`);
      }
      const r = await exec([LOSETUP, '-d', dev]);
      if (r.code !== 0) errors.push(`losetup -d ${dev}: ${r.stderr.trim()}`);
    }
    // losetup -d is lazy: while anything still holds the device open (another test file's
    // lsblk/wipefs probe, udev) the kernel detaches it a moment later. Wait for that, bounded.
    let still = await attachedLoopDevices(image).catch(() => [] as string[]);
    for (let i = 0; still.length > 0 && i < 50; i++) {
      await new Promise((res) => setTimeout(res, 100));
      still = await attachedLoopDevices(image).catch(() => [] as string[]);
    }
    if (still.length > 0) errors.push(`still attached after 5 s: ${still.join(', ')}`);
    await rm(dir, { recursive: true, force: true }).catch((e: Error) => errors.push(`rm ${dir}: ${e.message}`));
    live.delete(image);
    cleaned = true;
    if (errors.length > 0) throw new Error(`loop harness cleanup failed: ${errors.join('; ')}`);
  };

  try {
    // sparse: ftruncate only sets the size, no blocks are written
    const fh = await open(image, 'wx', 0o600);
    await fh.truncate(opts.sizeMiB * 1024 * 1024);
    await fh.close();

    const attach = [LOSETUP, '--find', '--show', ...(opts.partscan ? ['--partscan'] : []), image];
    device = (await run(attach)).stdout.trim();
    if (!/^\/dev\/loop\d+$/.test(device))
      throw new Error(`losetup printed an unexpected device: ${JSON.stringify(device)}`);

    if (mkfs && opts.fsType) {
      await run([mkfs, ...(opts.mkfsArgs ?? defaultMkfsArgs(opts.fsType)), device]);
    }
    if (opts.mount) {
      mountpoint = join(dir, typeof opts.mount === 'string' ? opts.mount : 'mnt');
      await mkdir(mountpoint, { recursive: true });
      await run([MOUNT, device, mountpoint]);
    }
  } catch (e) {
    await cleanup().catch(() => undefined);
    throw e;
  }

  return { device, image, dir, mountpoint, cleanup };
}

/**
 * `wipefs -a` on a test device. It opens the device exclusively; right after an umount, or while
 * another test file probes block devices, the kernel can answer EBUSY for a moment: retry briefly.
 */
export async function wipeSignatures(device: string): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    const r = await exec([WIPEFS, '-a', '-q', device]);
    if (r.code === 0) return;
    if (!/busy/i.test(r.stderr) || attempt >= 20)
      throw new Error(`wipefs -a ${device} exited ${r.code}: ${r.stderr.trim()}`);
    await new Promise((res) => setTimeout(res, 100));
  }
}
