import type { AreaModule, AreaPath } from './types';
import network from './network';
import traffic from './traffic';
import kerberos from './kerberos';
import fs from './fs';
import notification from './notification';
import keys from './keys';
import s3 from './s3';
import certificate from './certificate';
import pod from './pod';
import dfs from './dfs';
import jobs from './jobs';
import health from './health';
import metrics from './metrics';
import audit from './audit';
import tokens from './tokens';

/** Every area the host serves. Adding an area: its module here, its routes under handlers/<area>/. */
export const AREAS: readonly AreaModule<unknown>[] = [
  network,
  traffic,
  kerberos,
  fs,
  notification,
  keys,
  s3,
  certificate,
  pod,
  dfs,
  jobs,
  health,
  metrics,
  audit,
  tokens,
];

/** The named locations of all areas; two areas may name one location only with the same default. */
export function areaPaths(
  areas: readonly AreaModule<unknown>[] = AREAS,
): Record<string, AreaPath & { areas: string[] }> {
  const out: Record<string, AreaPath & { areas: string[] }> = {};
  for (const a of areas) {
    for (const [key, p] of Object.entries(a.paths ?? {})) {
      const prev = out[key];
      if (prev && (prev.default !== p.default || prev.kind !== p.kind)) {
        throw new Error(`areas ${prev.areas.join(', ')} and ${a.name} declare paths.${key} differently`);
      }
      out[key] = prev
        ? { ...prev, readOnly: prev.readOnly && p.readOnly, areas: [...prev.areas, a.name] }
        : { ...p, areas: [a.name] };
    }
  }
  return out;
}

/** The allow-listed binaries the areas bring, merged (the config's `system.binaries` wins). */
export function areaBinaries(areas: readonly AreaModule<unknown>[] = AREAS): Record<string, string> {
  return Object.assign({}, ...areas.map((a) => a.binaries ?? {}));
}
