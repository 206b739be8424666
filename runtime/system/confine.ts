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
 * Whatever the roots say, a path another area or the host manages is refused (owners.ts).
 */
import { lstatSync } from 'node:fs';
import { isUnder } from '../../handlers/core/paths';
import { resolveExisting } from './files';
import { posix } from 'node:path';
import { SystemRefusal } from './types';

export interface OwnerCheck {
  /** the area whose operation touches the path (`host` for the host's own kinds) */
  area: string;
  /** the roots the path was admitted under (the kind's): a root inside a host directory reaches below it */
  roots: readonly string[];
  /** the operation works on everything below the path too */
  recursive?: boolean;
  /** how a message names a real path (the demo shows paths from its root) */
  show?: (real: string) => string;
}

/** Who manages which path (owners.ts ManagedPaths): why a real path is refused to an area, or null. */
export interface OwnerTable {
  refusal(real: string, c: OwnerCheck): string | null;
}

export interface PathOperand {
  path: string;
  kind: string;
  /** where it sits in argv (rewritten to the resolved path); absent for names read from stdin */
  argvIndex?: number;
  /** the operand must be strictly below a root, never a root itself (mountpoints) */
  strictlyBelow?: boolean;
  /** a file the command reads: a FIFO, socket or device would block it, so it is refused */
  readsFile?: boolean;
  /**
   * the command works on everything below the path too (setfacl -R, a mount hiding the tree):
   * refused when the tree holds a path another owner manages
   */
  recursive?: boolean;
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

export { isUnder };

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
  /** per kind, the area it belongs to (the one that registered it) and its real roots */
  private readonly roots = new Map<string, { area: string; roots: string[] }>();
  /** Per binary, every area's policy: an argv runs when one of them accepts all its operands. */
  private readonly policies = new Map<string, { tool: string; policy: CommandPolicy }[]>();

  /**
   * `binaries` maps tool keys (`mount`) to the configured absolute binaries; `managed` is the
   * host's ownership table (without it, only the roots are checked).
   */
  constructor(
    private readonly binaries: Record<string, string>,
    private readonly managed?: OwnerTable,
  ) {}

  /**
   * Roots of a kind. The kind belongs to `area`: the area that declares it (runtime/host.ts
   * passes it), by default the `<area>.` its name starts with (`fs.mount`), else the host's.
   */
  addRoots(kind: string, roots: readonly string[], area = /^([^.]+)\./.exec(kind)?.[1] ?? 'host'): void {
    const known = this.roots.get(kind);
    if (known && known.area !== area) throw new Error(`path kind ${kind} is registered by ${known.area} and ${area}`);
    this.roots.set(kind, { area, roots: [...(known?.roots ?? []), ...realRoots(roots)] });
  }

  /** Every kind with its area and real roots (the host reports roots reaching other owners' paths). */
  kinds(): { kind: string; area: string; roots: readonly string[] }[] {
    return [...this.roots].map(([kind, k]) => ({ kind, ...k }));
  }

  addPolicy(tool: string, policy: CommandPolicy): void {
    const binary = this.binaries[tool];
    // a tool with no configured binary is not on the allow-list: it cannot run at all
    if (!binary) return;
    this.policies.set(binary, [...(this.policies.get(binary) ?? []), { tool, policy }]);
  }

  rootsOf(kind: string): readonly string[] {
    return this.roots.get(kind)?.roots ?? [];
  }

  private kindOf(kind: string): { area: string; roots: string[] } {
    const k = this.roots.get(kind);
    if (!k) throw new Error(`no roots configured for path kind ${kind}`);
    return k;
  }

  /**
   * One operand: resolved, and refused unless under a root of its kind and not another owner's
   * (`recursive`: nor holding another owner's path below it).
   */
  resolve(path: string, kind: string, strictlyBelow = false, recursive = false): string {
    const { roots } = this.kindOf(kind);
    const real = resolvePath(path);
    if (!roots.some((r) => isUnder(real, r, strictlyBelow))) {
      const shown = real === posix.normalize(path) ? path : `${path} (${real})`;
      throw new SystemRefusal(
        'forbidden',
        `${shown} is outside the ${kind} roots this host allows (${roots.join(', ')})`,
      );
    }
    this.checkOwner(real, kind, { recursive });
    return real;
  }

  /**
   * A real path an operation of `kind` is about to touch: 403 naming the owner when another area
   * or the host manages it (`recursive`: or something below it). Host ops that check their own
   * roots (a walk, a share, a home) call this too, so every area keeps one rule.
   */
  checkOwner(real: string, kind: string, o: { recursive?: boolean; show?: (p: string) => string } = {}): void {
    if (!this.managed) return;
    const k = this.kindOf(kind);
    const why = this.managed.refusal(real, { area: k.area, roots: k.roots, ...o });
    if (why) throw new SystemRefusal('forbidden', why);
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
          const real = this.resolve(o.path, o.kind, o.strictlyBelow, o.recursive);
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
