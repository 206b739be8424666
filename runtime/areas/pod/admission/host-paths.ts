/**
 * Host paths in a compose model: every file or directory compose reads or binds (bind volumes,
 * bind-typed named volumes, env files, secret and config files, build contexts) must resolve
 * under the pod's own data directory or settings.pod.bindRoots. The stored file carries each one
 * resolved (absolute, symlinks followed), so a later check can tell when a path was swapped.
 */
import { isAbsolute, resolve } from 'node:path';
import { isUnder, realRoots } from '../../../system/confine';
import { resolveExisting } from '../../../system/files';

/**
 * store: a client's file, relative paths taken from the pod directory and rewritten resolved;
 * verify: the stored file again before a start, each path must still resolve to itself;
 * engine: the compose tool's model of a stored or candidate file (already absolute).
 */
export type PathMode = 'store' | 'verify' | 'engine';

export interface Bind {
  real: string;
  writable: boolean;
  at: string;
}

export class HostPaths {
  readonly binds: Bind[] = [];
  private readonly roots: string[];

  constructor(
    private readonly podDir: string,
    bindRoots: readonly string[],
    private readonly mode: PathMode,
    private readonly issue: (path: string, message: string) => void,
  ) {
    this.roots = realRoots([podDir, ...bindRoots]);
  }

  /** The path to keep in the model, or undefined after an issue. */
  check(at: string, value: unknown, what: string): string | undefined {
    if (typeof value !== 'string' || value === '') {
      this.issue(at, `${what} must be a path`);
      return undefined;
    }
    if (value.startsWith('~')) {
      this.issue(at, `${what} ${value}: ~ paths are not allowed; use a path in the pod directory`);
      return undefined;
    }
    if (value.includes('\0')) {
      this.issue(at, `${what} holds a NUL byte`);
      return undefined;
    }
    if (this.mode !== 'store' && !isAbsolute(value)) {
      this.issue(at, `${what} ${value} is not absolute in a stored compose file (update the pod to rewrite it)`);
      return undefined;
    }
    const real = resolveExisting(isAbsolute(value) ? value : resolve(this.podDir, value));
    if (!this.roots.some((r) => isUnder(real, r))) {
      // where it leads is not said: POST /pod/{name}/test answers a read token, which may not map the host
      this.issue(at, `${what} ${value} is outside the pod's data directory ${this.podDir} and settings.pod.bindRoots`);
      return undefined;
    }
    if (this.mode === 'verify' && real !== value) {
      this.issue(at, `${what} ${value} resolves to ${real} now: a link was put in its path since the pod was admitted`);
      return undefined;
    }
    return real;
  }

  /** A host path compose binds into a container; writable binds may not hold another bind. */
  bind(at: string, value: unknown, writable: boolean, what = 'bind source'): string | undefined {
    const real = this.check(at, value, what);
    if (real !== undefined) this.binds.push({ real, writable, at });
    return real;
  }

  /**
   * A container that can write a directory can swap anything below it for a symlink, which the
   * engine follows at the next start: no bind may lie strictly inside a writable one.
   */
  nestedBinds(): void {
    for (const outer of this.binds) {
      if (!outer.writable) continue;
      for (const inner of this.binds)
        if (inner.real !== outer.real && isUnder(inner.real, outer.real, true))
          this.issue(
            inner.at,
            `${inner.real} lies inside ${outer.real}, which ${outer.at} binds writable: a container could replace it with a link before the next start (bind it read-only, or bind only one of them)`,
          );
    }
  }
}
