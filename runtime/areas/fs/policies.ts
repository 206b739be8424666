/**
 * What each fs command may touch (runtime/system/confine.ts enforces it in the SYSTEM binding).
 * Kinds, their roots declared by the fs area module (runtime/areas/fs.ts): `device` (nodes under
 * /dev), `fs.mount` (mountpoints, strictly below a mount root), `fs.write` (directories created,
 * ACL targets), `fs.read` (files hashed or verified).
 * Operands that reach a whole tree are `recursive`: a mountpoint (a mount hides everything below
 * it, an unmount takes it away) and the target of setfacl/getfacl -R; the host refuses them when
 * the tree holds a path another area manages (runtime/system/owners.ts).
 */
import { operandsAfterDashDash, type CommandPolicy, type PathOperand } from '../../system/confine';

const after = (
  argv: readonly string[],
  kind: string,
  count?: number,
  strictlyBelow = false,
  recursive = false,
): PathOperand[] | string | null => {
  const ops = operandsAfterDashDash(argv);
  if (!ops || ops.length === 0) return null;
  if (count !== undefined && ops.length !== count) return `expected ${count} operand(s) after --, got ${ops.length}`;
  return ops.map((o) => ({ path: o.value, kind, argvIndex: o.index, strictlyBelow, recursive }));
};

/** -R, alone or in a cluster (`-dR`), or --recursive, before the `--` that ends the options */
const hasRecursive = (argv: readonly string[]): boolean => {
  const end = argv.indexOf('--');
  return argv
    .slice(1, end < 0 ? undefined : end)
    .some((a) => a === '--recursive' || (/^-[^-]/.test(a) && a.includes('R')));
};

/** Names xxhsum -c reads from a checksum list (GNU `<hash>  <name>` or BSD `XXH64 (<name>) = <hash>`). */
export function checksumListNames(text: string): string[] | string {
  const names: string[] = [];
  for (const raw of text.split('\n')) {
    if (raw.trim() === '') continue;
    const escaped = raw.startsWith('\\');
    const line = escaped ? raw.slice(1) : raw;
    const m = /^XXH(?:32|64|3|128) \((.*)\) = [0-9a-fA-F]+$/.exec(line) ?? /^[0-9a-fA-F]+ [ *](.*)$/.exec(line);
    if (!m) continue; // xxhsum reports an improperly formatted line and opens nothing for it
    const name = escaped ? m[1].replace(/\\(\\|n)/g, (_, c: string) => (c === 'n' ? '\n' : '\\')) : m[1];
    if (!name.startsWith('/'))
      return `checksum list names a relative path (${JSON.stringify(name)}); only absolute names are verified`;
    names.push(name);
  }
  return names;
}

export const fsCommandPolicies: Record<string, CommandPolicy> = {
  // mount -- <device> <mountpoint> (nothing between the binary and --)
  mount: (argv) => {
    if (argv[1] !== '--') return null;
    const ops = operandsAfterDashDash(argv);
    if (!ops || ops.length !== 2) return 'expected -- <device> <mountpoint>';
    return [
      { path: ops[0].value, kind: 'device', argvIndex: ops[0].index },
      { path: ops[1].value, kind: 'fs.mount', argvIndex: ops[1].index, strictlyBelow: true, recursive: true },
    ];
  },
  umount: (argv) => after(argv, 'fs.mount', 1, true, true),
  mkfs: (argv) => after(argv, 'device', 1),
  wipefs: (argv) => after(argv, 'device', 1),
  install: (argv) => after(argv, 'fs.write', 1),
  setfacl: (argv) => after(argv, 'fs.write', undefined, false, hasRecursive(argv)),
  getfacl: (argv) => after(argv, 'fs.write', undefined, false, hasRecursive(argv)),
  xxhsum: (argv, stdin) => {
    if (argv.includes('-c')) {
      if (operandsAfterDashDash(argv)?.length) return 'xxhsum -c reads its list from stdin only';
      const names = checksumListNames(stdin ?? '');
      return typeof names === 'string' ? names : names.map((path) => ({ path, kind: 'fs.read', readsFile: true }));
    }
    const ops = after(argv, 'fs.read');
    return Array.isArray(ops) ? ops.map((o) => ({ ...o, readsFile: true })) : ops;
  },
};
