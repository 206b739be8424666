/**
 * One owner per path (DESIGN.md "Admission"): every location an area declares in its `paths`
 * (as configured) belongs to that area, and the host's state directory, config directory and
 * database belong to the host. Whatever the roots of an area's path kinds say, a path another
 * owner manages is refused to it (403 naming the owner); an operation over a whole tree (a
 * recursive command, a mount, a walk, a share) is also refused when the tree holds one.
 *
 * The most specific managed path decides (`/etc/ballast/s3` is the s3 area's although
 * `/etc/ballast` is the host's). The host's directories are the one exception: they hold what
 * it hands to areas, so a root configured strictly inside one (`/etc/ballast/keytabs`, or a
 * test's or the demo's whole tree under its state directory) reaches what lies below it.
 */
import { dirname } from 'node:path';
import { isUnder, realRoots, type OwnerCheck, type OwnerTable } from './confine';

export type { OwnerCheck };

export const HOST_OWNER = 'host';

export interface ManagedPath {
  /** the real path (resolved at start) */
  path: string;
  /** the areas (or `host`) it belongs to; an area shares a `paths` key only with the same default */
  owners: readonly string[];
  /** what configures it: `paths.<key>`, `stateDir`, … */
  keys: readonly string[];
}

export class ManagedPaths implements OwnerTable {
  readonly entries: readonly ManagedPath[];

  constructor(claims: readonly { path: string; owner: string; key: string }[]) {
    const byPath = new Map<string, { owners: string[]; keys: string[] }>();
    for (const c of claims) {
      const [real] = realRoots([c.path]);
      const e = byPath.get(real) ?? { owners: [], keys: [] };
      if (!e.owners.includes(c.owner)) e.owners.push(c.owner);
      if (!e.keys.includes(c.key)) e.keys.push(c.key);
      byPath.set(real, e);
    }
    this.entries = [...byPath].map(([path, e]) => ({ path, ...e }));
  }

  /** The most specific managed path equal to or above `real`, or null when nobody manages it. */
  ownerOf(real: string): ManagedPath | null {
    let best: ManagedPath | null = null;
    for (const e of this.entries) if (isUnder(real, e.path) && (!best || e.path.length > best.path.length)) best = e;
    return best;
  }

  /** Managed paths strictly below `real` (what a recursive operation or a mount on it reaches). */
  containedIn(real: string): ManagedPath[] {
    return this.entries.filter((e) => isUnder(e.path, real, true));
  }

  /** Why `c.area` may not touch `real`, or null when it may. */
  refusal(real: string, c: OwnerCheck): string | null {
    const show = c.show ?? ((p: string) => p);
    const owner = this.ownerOf(real);
    if (owner && !this.grants(owner, real, c)) {
      return `${show(real)} belongs to ${ownerText(owner)}; the ${c.area} area may not touch it`;
    }
    if (!c.recursive) return null;
    const inside = this.containedIn(real).find((e) => !e.owners.includes(c.area));
    return inside
      ? `${show(real)} contains ${show(inside.path)}, which belongs to ${ownerText(inside)}; the ${c.area} area may not work on it as a whole`
      : null;
  }

  private grants(owner: ManagedPath, real: string, c: OwnerCheck): boolean {
    if (owner.owners.includes(c.area)) return true;
    // a directory of the host's holds what it hands out: a root configured inside it
    return owner.owners.includes(HOST_OWNER) && c.roots.some((r) => isUnder(real, r) && isUnder(r, owner.path, true));
  }

  /**
   * One line per (root kind, managed path) where a configured root reaches what another owner
   * manages: the root contains it, or lies inside one of an area's managed paths. Logged at start.
   */
  rootConflicts(kinds: readonly { kind: string; area: string; roots: readonly string[] }[]): string[] {
    const lines: string[] = [];
    for (const k of kinds) {
      const seen = new Set<string>();
      for (const root of k.roots) {
        for (const e of this.entries) {
          if (e.owners.includes(k.area) || seen.has(e.path)) continue;
          if (isUnder(e.path, root)) {
            seen.add(e.path);
            lines.push(
              `${k.kind} root ${root} contains ${e.path}, which belongs to ${ownerText(e)}: operands at or under it are refused`,
            );
          } else if (isUnder(root, e.path, true) && !e.owners.includes(HOST_OWNER)) {
            seen.add(e.path);
            lines.push(
              `${k.kind} root ${root} lies inside ${e.path}, which belongs to ${ownerText(e)}: every operand under it is refused`,
            );
          }
        }
      }
    }
    return lines;
  }
}

/** `the pod area (paths.podData)`, `the host (stateDir)`, `the pod and s3 areas (paths.podUnitDir, …)` */
function ownerText(e: ManagedPath): string {
  const keys = e.keys.join(', ');
  if (e.owners.length === 1 && e.owners[0] === HOST_OWNER) return `the host (${keys})`;
  return `the ${e.owners.join(' and ')} area${e.owners.length > 1 ? 's' : ''} (${keys})`;
}

/**
 * The ownership table of one host: each area's `paths` as configured, and the host's state
 * directory, config directory and database.
 */
export function managedPathsOf(o: {
  /** `paths` as configured (defaults merged with the config file's overrides) */
  paths: Readonly<Record<string, string>>;
  /** per `paths` key, the areas that declare it (runtime/areas/index.ts areaPaths) */
  declaredBy: Readonly<Record<string, readonly string[]>>;
  stateDir: string;
  configFile: string;
  dbFile: string;
}): ManagedPaths {
  const claims: { path: string; owner: string; key: string }[] = [];
  for (const [key, areas] of Object.entries(o.declaredBy)) {
    const path = o.paths[key];
    if (path) for (const owner of areas) claims.push({ path, owner, key: `paths.${key}` });
  }
  claims.push(
    { path: o.stateDir, owner: HOST_OWNER, key: 'stateDir' },
    { path: dirname(o.configFile), owner: HOST_OWNER, key: 'the config file directory' },
    { path: o.dbFile, owner: HOST_OWNER, key: 'the database' },
  );
  return new ManagedPaths(claims);
}
