/**
 * Path confinement of commands, enforced by the SYSTEM binding whatever the route sent.
 *
 * Each area declares, per binary it runs, a policy that finds the path operands of an argv (and
 * of the stdin some tools read names from) and says which kind each is (`fs.mount`, `fs.read`,
 * `kerberos.keytab`, …); each kind has configured roots (an allow-list). Every operand is
 * resolved here (realpath of the longest existing prefix, symlinks followed, `.`/`..` folded)
 * and must lie under a root of its kind; the argv that runs carries the resolved path, so a
 * symlink swapped in afterwards cannot redirect it and the audit names the real target. An argv
 * a policy does not recognise is refused: a policy describes the only shapes the product builds.
 */
import { lstatSync } from 'node:fs';
import { resolveExisting } from './files';
import { posix } from 'node:path';
import { SystemRefusal } from './types';

export interface PathOperand {
  path: string;
  kind: string;
  /** where it sits in argv (rewritten to the resolved path); absent for names read from stdin */
  argvIndex?: number;
  /** the operand must be strictly below a root, never a root itself (mountpoints) */
  strictlyBelow?: boolean;
  /** a file the command reads: a FIFO, socket or device would block it, so it is refused */
  readsFile?: boolean;
}

/**
 * The path operands of one argv; a string saying why an argv of this policy's shape is refused;
 * or null when the argv is not one this policy describes (another area's policy may).
 */
export type CommandPolicy = (argv: readonly string[], stdin: string | undefined) => PathOperand[] | string | null;

/** Operands after the first `--` (the product puts every user operand there). */
export function operandsAfterDashDash(argv: readonly string[]): { index: number; value: string }[] | undefined {
  const i = argv.indexOf('--');
  if (i < 0) return undefined;
  return argv.slice(i + 1).map((value, k) => ({ index: i + 1 + k, value }));
}

/**
 * Realpath of an absolute path whose tail may not exist yet (a directory to create): the longest
 * existing prefix is resolved, the rest appended after folding `.` and `..` lexically.
 */
export function resolvePath(p: string): string {
  if (!p.startsWith('/') || p.includes('\0'))
    throw new SystemRefusal('bad_request', `${JSON.stringify(p)} is not an absolute path`);
  return resolveExisting(p);
}

export const isUnder = (p: string, root: string, strictly = false): boolean =>
  root === '/' ? !strictly || p !== '/' : p.startsWith(`${root}/`) || (!strictly && p === root);

/** Roots as real paths, so a root configured through a symlink matches resolved operands. */
export function realRoots(roots: readonly string[]): string[] {
  return roots.map((r) => {
    try {
      return resolvePath(r);
    } catch {
      return r;
    }
  });
}

function refuseSpecialFile(real: string, shown: string): void {
  let st;
  try {
    st = lstatSync(real);
  } catch {
    return; // missing: the command says so
  }
  if (st.isFIFO() || st.isSocket() || st.isCharacterDevice() || st.isBlockDevice()) {
    throw new SystemRefusal('bad_request', `${shown} is not a regular file`);
  }
}

export class PathConfinement {
  private readonly roots = new Map<string, string[]>();
  /** Per binary, every area's policy: an argv runs when one of them accepts all its operands. */
  private readonly policies = new Map<string, { tool: string; policy: CommandPolicy }[]>();

  /** `binaries` maps tool keys (`mount`) to the configured absolute binaries. */
  constructor(private readonly binaries: Record<string, string>) {}

  addRoots(kind: string, roots: readonly string[]): void {
    this.roots.set(kind, [...(this.roots.get(kind) ?? []), ...realRoots(roots)]);
  }

  addPolicy(tool: string, policy: CommandPolicy): void {
    const binary = this.binaries[tool];
    // a tool with no configured binary is not on the allow-list: it cannot run at all
    if (!binary) return;
    this.policies.set(binary, [...(this.policies.get(binary) ?? []), { tool, policy }]);
  }

  rootsOf(kind: string): readonly string[] {
    return this.roots.get(kind) ?? [];
  }

  /** One operand: resolved, and refused unless under a root of its kind. */
  resolve(path: string, kind: string, strictlyBelow = false): string {
    const roots = this.roots.get(kind);
    if (!roots) throw new Error(`no roots configured for path kind ${kind}`);
    const real = resolvePath(path);
    if (!roots.some((r) => isUnder(real, r, strictlyBelow))) {
      const shown = real === posix.normalize(path) ? path : `${path} (${real})`;
      throw new SystemRefusal(
        'forbidden',
        `${shown} is outside the ${kind} roots this host allows (${roots.join(', ')})`,
      );
    }
    return real;
  }

  /** The argv to run: path operands resolved and checked. */
  check(argv: readonly string[], stdin: string | undefined): string[] {
    const entries = this.policies.get(argv[0] ?? '');
    if (!entries) return [...argv];
    const refusals: SystemRefusal[] = [];
    for (const entry of entries) {
      const operands = entry.policy(argv, stdin);
      if (operands === null) continue;
      if (typeof operands === 'string') {
        refusals.push(new SystemRefusal('forbidden', `${entry.tool}: ${operands}`));
        continue;
      }
      try {
        const out = [...argv];
        for (const o of operands) {
          const real = this.resolve(o.path, o.kind, o.strictlyBelow);
          if (o.readsFile) refuseSpecialFile(real, o.path);
          if (o.argvIndex !== undefined) out[o.argvIndex] = real;
        }
        return out;
      } catch (e) {
        if (!(e instanceof SystemRefusal)) throw e;
        refusals.push(e);
      }
    }
    throw (
      refusals[0] ??
      new SystemRefusal('forbidden', `${entries[0].tool}: this host never runs ${entries[0].tool} with these arguments`)
    );
  }
}
