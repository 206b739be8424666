/**
 * What the Lustre routes may touch with mount, umount and install (runtime/system/confine.ts):
 * mountpoints strictly below the client and target mount roots (kind `dfs.mount`). The mount
 * source is a ZFS dataset or `<nid>:/<fsname>`, never a path: the routes validate it strictly.
 */
import { operandsAfterDashDash, type CommandPolicy } from '../../system/confine';

const belowMountRoots = (argv: readonly string[]) => {
  const ops = operandsAfterDashDash(argv);
  if (!ops || ops.length !== 1) return null;
  return [{ path: ops[0].value, kind: 'dfs.mount', argvIndex: ops[0].index, strictlyBelow: true }];
};

export const dfsCommandPolicies: Record<string, CommandPolicy> = {
  // mount -t lustre (the listing) | mount -t lustre -- <source> <mountpoint>
  mount: (argv) => {
    if (argv[1] !== '-t' || argv[2] !== 'lustre') return null;
    if (argv.length === 3) return [];
    const ops = operandsAfterDashDash(argv);
    if (argv[3] !== '--' || !ops || ops.length !== 2) return 'expected mount -t lustre -- <source> <mountpoint>';
    if (ops[0].value.startsWith('/')) return 'a Lustre mount source is a dataset or <nid>:/<fsname>, not a path';
    return [{ path: ops[1].value, kind: 'dfs.mount', argvIndex: ops[1].index, strictlyBelow: true }];
  },
  umount: belowMountRoots,
  // install -d -m 0755 -- <mountpoint>
  install: (argv) => (argv[1] === '-d' ? belowMountRoots(argv) : null),
};
