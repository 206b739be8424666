import type * as z from 'zod';
import type { Env } from '../../handlers/core/bindings';
import type { Vars } from '../../handlers/core/vars';
import type { HostConfig } from '../config-types';
import type { SqliteDb } from '../db/database';
import type { EventsProducer } from '../events';
import type { CommandPolicy } from '../system/confine';
import type { CommandBackend } from '../system/types';
import type { HostOp, SystemService } from '../system/service';
import type { SecretBox } from '../system/secret-box';
import type { JobRegistry } from '../jobs/registry';

/**
 * A configured location an area reads or writes. The host resolves every path a route touches
 * against these (allow-list): `dir` roots contain what the area manages, `file` paths are single
 * files. `readOnly` locations are never written (the host refuses).
 */
export interface AreaPath {
  /** The real Debian location; tests and the demo move it under a private root. */
  default: string;
  kind: 'file' | 'dir';
  readOnly?: boolean;
}

/** What the host hands an area when it starts: everything is already open and configured. */
export interface AreaHost<S> {
  config: HostConfig;
  /** `settings.<area>` as the area's schema parsed it (defaults applied). */
  settings: S;
  db: SqliteDb;
  env: Env;
  vars: Vars;
  events: EventsProducer;
  system: SystemService;
  hostId: string;
  log(line: string): void;
  /** Opens the secrets routes stored sealed (runtime/system/secret-box.ts). */
  secrets: SecretBox;
  /**
   * For host ops that check a path against the roots of one of the area's `confine.roots`
   * kinds themselves (a walk, a share, a home): 403 naming the owner when the real path belongs
   * to another area or the host; `recursive` (the op reaches everything below): also when such
   * a path lies below it. The rule command operands get (runtime/system/owners.ts).
   */
  checkOwner(real: string, kind: string, o?: { recursive?: boolean; show?: (p: string) => string }): void;
  /** New TLS connections get the certificate now on disk; open ones keep theirs. No-op without TLS. */
  reloadTls(): void;
  /** The long requests run as jobs (runtime/jobs/): their rows, and cancel (false: not running). */
  jobs: { registry: JobRegistry; cancel(id: string, why: string): Promise<boolean> };
}

/** What an area runs on one host: its ops and its start/stop hooks, sharing whatever state they need. */
export interface AreaInstance {
  /**
   * The path kinds the area's commands touch and their roots, and per binary (tool key) the
   * policy finding the path operands; the SYSTEM binding refuses anything outside (confine.ts).
   */
  confine?: { roots?: Record<string, readonly string[]>; commands?: Record<string, CommandPolicy> };
  /** Host operations routes reach with `system.op(name, payload)`; names start with `<area>/`. */
  ops?: Record<string, HostOp>;
  /** After the HTTP server listens (not awaited by start-up: log, never throw). */
  onStart?(): void | Promise<void>;
  /** At shutdown, after in-flight requests finished and before the DB closes. */
  onStop?(): void | Promise<void>;
}

/**
 * One area's host side (see DESIGN.md "Areas plug in"). The host iterates `AREAS` and never names
 * an area; what routes and the host share lives in `handlers/<area>/contract.ts`.
 */
export interface AreaModule<S = unknown> {
  name: string;
  /** Validates `settings.<name>` of the config file at start (absent = `{}`); unknown keys stop the host. */
  settings?: z.ZodType<S, unknown>;
  /** Named locations, merged into `config.paths` (a config file may override each). */
  paths?: Record<string, AreaPath>;
  /** Binaries the area's routes run, merged into the allow-list (`system.binaries` overrides). */
  binaries?: Record<string, string>;
  /** Environment variables the area's routes set on their commands, merged into `system.envAllow`. */
  envAllow?: readonly string[];
  /** CLI commands of the area (`ballast <area> <name> [--config FILE | --demo] ARG…`), run without a server. */
  commands?: Record<string, AreaCommand<S>>;
  /** Called once per host, after the DB and SYSTEM exist and before the server listens. */
  setup?(host: AreaHost<S>): AreaInstance;
}

/** A CLI command of an area: what systemd units run (e.g. the pod check before every start). */
export interface AreaCommand<S> {
  usage: string;
  run(o: {
    args: string[];
    config: HostConfig;
    settings: S;
    /** live processes with the host's allow-list and environment rules (or the demo's replay) */
    backend: CommandBackend;
    err(line: string): void;
  }): Promise<number>;
}

/** Identity helper that keeps the settings type of one area. */
export function defineArea<S>(area: AreaModule<S>): AreaModule<S> {
  return area;
}
