import { dfsSettings, type DfsSettings } from '../../handlers/dfs/contract';
import { defineArea } from './types';
import { dfsCommandPolicies } from './dfs/policies';

/**
 * Distributed filesystem (Lustre): everything runs as commands (lctl, lnetctl, lfs, mkfs.lustre,
 * zpool/zfs, mount, systemctl) and confined file writes; the host confines its mountpoints.
 */
export default defineArea<DfsSettings>({
  name: 'dfs',
  settings: dfsSettings,
  paths: {
    fstab: { default: '/etc/fstab', kind: 'file' },
    dfsClientMountRoot: { default: '/mnt/lustre', kind: 'dir' },
    dfsTargetMountRoot: { default: '/lustre', kind: 'dir' },
    dfsLnetImportDir: { default: '/var/lib/ballast/lnet', kind: 'dir' },
    dfsFlrConfig: { default: '/etc/lustre/flr-sync.json', kind: 'file' },
  },
  setup: (host) => ({
    confine: {
      roots: {
        'dfs.mount': [
          host.config.paths.dfsClientMountRoot,
          host.config.paths.dfsTargetMountRoot,
          ...host.settings.extraMountRoots,
        ],
      },
      commands: dfsCommandPolicies,
    },
  }),
  binaries: {
    lctl: '/usr/sbin/lctl',
    lnetctl: '/usr/sbin/lnetctl',
    lfs: '/usr/bin/lfs',
    mount: '/usr/bin/mount',
    umount: '/usr/bin/umount',
    install: '/usr/bin/install',
    systemctl: '/usr/bin/systemctl',
    mkfsLustre: '/usr/sbin/mkfs.lustre',
    zpool: '/usr/sbin/zpool',
    zfs: '/usr/sbin/zfs',
  },
});
