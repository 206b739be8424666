/**
 * VARS: plain configuration the host hands every route. Paths are absolute; the host points them
 * at the real Debian locations in production and into a private state directory for tests and
 * the demo, so routes never hard-code /etc.
 */
export interface Vars {
  productName: string;
  hostId: string;
  /** Named absolute paths (krb5Conf, krb5ConfD, keytab, networkInterfaces, ...). */
  paths: Record<string, string>;
  /** Absolute paths of the binaries routes may run, keyed by tool name. */
  bin: Record<string, string>;
  /** Area-specific plain settings (e.g. network.listKinds). */
  settings: Record<string, unknown>;
  /** Where the API is mounted (default `/api/v2`; `''` or `/` when an embedder strips its prefix). */
  basePath?: string;
}

export const DEFAULT_BIN: Record<string, string> = {
  ip: '/usr/sbin/ip',
  tc: '/usr/sbin/tc',
  ethtool: '/usr/sbin/ethtool',
  ifup: '/usr/sbin/ifup',
  ifdown: '/usr/sbin/ifdown',
  kinit: '/usr/bin/kinit',
  klist: '/usr/bin/klist',
  kdestroy: '/usr/bin/kdestroy',
  mkfs: '/usr/sbin/mkfs',
  install: '/usr/bin/install',
  mount: '/usr/bin/mount',
  umount: '/usr/bin/umount',
  findmnt: '/usr/bin/findmnt',
  lsblk: '/usr/bin/lsblk',
  wipefs: '/usr/sbin/wipefs',
  blkid: '/usr/sbin/blkid',
  setfacl: '/usr/bin/setfacl',
  getfacl: '/usr/bin/getfacl',
  xxhsum: '/usr/bin/xxhsum',
  sshKeygen: '/usr/bin/ssh-keygen',
  updateCaCertificates: '/usr/sbin/update-ca-certificates',
  systemctl: '/usr/bin/systemctl',
  journalctl: '/usr/bin/journalctl',
  docker: '/usr/bin/docker',
  lctl: '/usr/sbin/lctl',
  lnetctl: '/usr/sbin/lnetctl',
  lfs: '/usr/bin/lfs',
};

export function bin(vars: Vars, tool: keyof typeof DEFAULT_BIN | string): string {
  const p = vars.bin[tool] ?? DEFAULT_BIN[tool];
  if (!p) throw new Error(`no binary configured for ${tool}`);
  return p;
}

export function path(vars: Vars, name: string): string {
  const p = vars.paths[name];
  if (!p) throw new Error(`no path configured for ${name}`);
  return p;
}
