import { fsSettings, type FsSettings } from '../../handlers/fs/contract';
import { fsOps } from './fs/ops';
import { fsCommandPolicies } from './fs/policies';
import { defineArea } from './types';

/** Filesystem utilities: the bounded explore walk and the checksum-file reader run in the host. */
export default defineArea<FsSettings>({
  name: 'fs',
  settings: fsSettings,
  paths: {
    sbin: { default: '/usr/sbin', kind: 'dir', readOnly: true },
    sbinLegacy: { default: '/sbin', kind: 'dir', readOnly: true },
  },
  // set_permissions with test and no entries lists the current ACLs
  binaries: {
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
  },
  setup: (host) => ({
    ops: fsOps({
      settings: host.settings,
      db: host.db,
      checkOwner: (real, o) => host.checkOwner(real, 'fs.read', o),
    }),
    confine: {
      roots: {
        // device nodes for mkfs, wipefs, mount: whatever /dev holds (lsblk decides what is a disk)
        device: ['/dev'],
        'fs.mount': host.settings.mountRoots,
        'fs.write': host.settings.writeRoots,
        'fs.read': host.settings.readRoots,
      },
      commands: fsCommandPolicies,
    },
  }),
});
