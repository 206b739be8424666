/**
 * What the dfs area's host side (runtime/areas/dfs.ts) and its routes share: the settings schema
 * (`settings.dfs`) and the names of the configured paths.
 */
import * as z from 'zod';

const ms = (def: number, max: number) => z.number().int().min(100).max(max).default(def);

/**
 * Per-command time limits (milliseconds). A command past its limit answers 504 with what it printed
 * so far. The host caps them too: a command at 10 × `limits.commandTimeoutMs` (300 s by default), a
 * request at `limits.requestTimeoutMs` (120 s): the defaults keep a whole create route (mkfs.lustre
 * + mount) inside the request limit; raise both together.
 */
export const dfsTimeouts = z
  .strictObject({
    /** lctl dl / get_param (procfs reads: fast unless the node is wedged). */
    lctlMs: ms(15_000, 300_000),
    /** lnetctl show/add/del/import/export/configure. */
    lnetctlMs: ms(30_000, 300_000),
    /** lctl ping: LNet's own ping timeout is ~50 s on a dead peer; we stop earlier. */
    pingMs: ms(20_000, 300_000),
    /** One `lfs df --lazy <mount>`: hangs while an OSS is down, so it is bounded per filesystem. */
    lfsDfMs: ms(30_000, 600_000),
    /** zpool / zfs listings. */
    zfsMs: ms(20_000, 300_000),
    /** mkfs.lustre (ZFS dataset creation and property writes). */
    mkfsMs: ms(60_000, 3_600_000),
    /** mount -t lustre (a client mount waits for the MGS; a target mount registers with it). */
    mountMs: ms(45_000, 1_800_000),
    /** systemctl restart of the FLR synchronisation service. */
    systemctlMs: ms(60_000, 600_000),
  })
  .prefault({});
export type DfsTimeouts = z.output<typeof dfsTimeouts>;

export const dfsSettings = z.strictObject({
  timeouts: dfsTimeouts,
  /** The systemd unit that synchronises FLR mirrors; restarted after /dfs/flr/update. */
  flrService: z
    .string()
    .regex(/^[A-Za-z0-9][A-Za-z0-9_.@-]{0,250}\.service$/, 'must be a systemd service unit name ending in .service')
    .default('lustre-flr-sync.service'),
  /** Options of the fstab lines /dfs/fs/mount and the create routes write when persist is true. */
  fstabOptions: z
    .string()
    .regex(/^[A-Za-z0-9_=.,-]{1,200}$/, 'must be comma-separated mount options without spaces')
    .default('defaults,_netdev'),
  /**
   * Directories besides paths.dfsClientMountRoot and paths.dfsTargetMountRoot where this node's
   * Lustre targets are mounted (e.g. an MGS set up by hand at /mnt/mgs), so that create_mgs with
   * reformat may unmount it. The host refuses mount/umount anywhere else.
   */
  extraMountRoots: z.array(z.string().regex(/^\/[^\0]*$/, 'must be an absolute path')).default([]),
});
export type DfsSettings = z.output<typeof dfsSettings>;

/** Keys of `paths` the area declares (runtime/areas/dfs.ts gives the defaults). */
export const DFS_PATHS = {
  /** /etc/fstab: where persist=true writes the mount. */
  fstab: 'fstab',
  /** Client mounts go to <root>/<fsName>. */
  clientMountRoot: 'dfsClientMountRoot',
  /** Server targets (MGT, MDTs, OSTs) are mounted at <root>/<target label>. */
  targetMountRoot: 'dfsTargetMountRoot',
  /** Where /dfs/lnet/import_config writes the temporary YAML file lnetctl imports. */
  lnetImportDir: 'dfsLnetImportDir',
  /** The FLR synchronisation configuration (JSON). */
  flrConfig: 'dfsFlrConfig',
} as const;

export const LNET_IMPORT_FILE = 'lnet-import.yaml';
