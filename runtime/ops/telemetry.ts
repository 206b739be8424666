/**
 * What a host knows about itself for its operators: its metrics, its health, its version and the
 * permission areas a token may name. One per host, found by the host's database (like the audit
 * writer of db/audit.ts), so the areas that serve them (runtime/areas/health.ts, metrics.ts,
 * tokens.ts) reach them without the host naming an area.
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import type { SqliteDb } from '../db/database';
import { HostHealth, type HealthSources } from './health';
import { HostMetrics, type MetricsSources } from './metrics';

export interface HostTelemetry {
  metrics: HostMetrics;
  health: HostHealth;
  version: string;
  /** the areas a token's permission may name (the manifest's; the host sets them once it read it) */
  permissionAreas: readonly string[];
}

const byDb = new WeakMap<SqliteDb, HostTelemetry>();

export interface TelemetryOptions extends Omit<MetricsSources & HealthSources, 'version' | 'startedAt'> {
  distDir: string;
  startedAt?: number;
}

export function createTelemetry(o: TelemetryOptions): HostTelemetry {
  const version = packageVersion(o.distDir);
  const t: HostTelemetry = {
    metrics: new HostMetrics(o),
    health: new HostHealth({ ...o, version, startedAt: o.startedAt ?? Date.now() }),
    version,
    permissionAreas: [],
  };
  byDb.set(o.db, t);
  return t;
}

/** The telemetry of the host that owns this database (undefined: a database no host serves). */
export function telemetryOf(db: SqliteDb): HostTelemetry | undefined {
  return byDb.get(db);
}

export function forgetTelemetry(db: SqliteDb): void {
  const t = byDb.get(db);
  t?.metrics.registry.clear();
  byDb.delete(db);
}

/** The version in the package.json above the build directory (the repo's, or the installed package's). */
export function packageVersion(distDir: string): string {
  let dir = resolve(distDir);
  for (;;) {
    const file = join(dir, 'package.json');
    if (existsSync(file)) {
      try {
        return String((JSON.parse(readFileSync(file, 'utf8')) as { version?: string }).version ?? '0.0.0');
      } catch {
        return '0.0.0';
      }
    }
    if (dirname(dir) === dir) return '0.0.0';
    dir = dirname(dir);
  }
}
