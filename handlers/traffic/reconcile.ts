import type { ClassEntry } from './parse/tc-class';
import type { FilterEntry } from './parse/tc-filter';
import type { QueueEntry } from './parse/tc-qdisc';
import type { StoredRule } from './store';
import {
  FILTER_PREF,
  ROOT_MAJOR,
  classIdFor,
  planClass,
  planEnsureRoot,
  planFilter,
  rateBytesPerSec,
  u32ItemOf,
  type Argv,
} from './plan';
import { parseTcHandle, tcShownRate } from './parse/tc-units';

/**
 * Compare the stored rules (the DB, the source of truth) with what tc shows, and plan the
 * commands that put back whatever is missing or different: after a reboot (tc state is not
 * persistent), or when someone deleted or changed a class/filter by hand.
 *
 * Re-applying uses `replace`, so a half-present rule (class there, filter gone; or a class with
 * the wrong rate) converges in one pass and running the plan twice is harmless.
 *
 * Nothing is deleted: classes/filters under our root that no rule owns are reported as `stale`
 * for the caller (or a human) to decide; a foreign htb root makes its device's rules `skipped`.
 */

/** What tc showed for one device; undefined in the map = the device does not exist. */
export interface DeviceTcState {
  queues: QueueEntry[];
  classes: ClassEntry[];
  filters: FilterEntry[];
}

export interface ReconcileResult {
  /** commands to run, in order (root, then classes, then filters, per device) */
  argv: Argv[];
  /** rules that could not be re-applied, with the reason */
  skipped: { rule: string; device: string; reason: string }[];
  /** our-root objects no stored rule accounts for: left alone, reported */
  stale: { device: string; kind: 'class' | 'filter'; id: string }[];
}

export function reconcile(
  rules: readonly StoredRule[],
  state: Readonly<Record<string, DeviceTcState | undefined>>,
): ReconcileResult {
  const result: ReconcileResult = { argv: [], skipped: [], stale: [] };

  const byDevice = new Map<string, StoredRule[]>();
  for (const r of rules) byDevice.set(r.device, [...(byDevice.get(r.device) ?? []), r]);

  for (const [device, devRules] of [...byDevice].sort(([a], [b]) => a.localeCompare(b))) {
    const tc = state[device];
    if (!tc) {
      for (const r of devRules) result.skipped.push({ rule: r.name, device, reason: `device ${device} not found` });
      continue;
    }
    const root = planEnsureRoot(device, tc.queues);
    if (!root.ok) {
      for (const r of devRules) result.skipped.push({ rule: r.name, device, reason: root.reason });
      continue;
    }
    // A fresh root (argv non-empty) has no classes or filters yet: whatever tc listed under the
    // previous root is gone with it, so every rule is re-applied.
    const fresh = root.argv.length > 0;
    const classes = fresh ? [] : tc.classes;
    const filters = fresh ? [] : tc.filters;
    result.argv.push(...root.argv);

    const ordered = [...devRules].sort((a, b) => a.id - b.id);
    const classCmds: Argv[] = [];
    const filterCmds: Argv[] = [];
    for (const r of ordered) {
      if (!classes.some((c) => classMatches(c, r))) classCmds.push(planClass(r, 'replace'));
      if (!filters.some((f) => filterMatches(f, r))) filterCmds.push(planFilter(r, 'replace'));
    }
    result.argv.push(...classCmds, ...filterCmds);

    // Not fresh means the root was already ours (planEnsureRoot planned nothing), so everything
    // listed under it is ours to account for.
    if (!fresh) {
      const ids = new Set(devRules.map((r) => r.id));
      for (const c of classes) {
        const h = parseTcHandle(c.classid);
        if (h && h.major === ROOT_MAJOR && !ids.has(h.minor))
          result.stale.push({ device, kind: 'class', id: c.classid });
      }
      for (const f of filters) {
        const item = u32ItemOf(f);
        if (item === null || !ids.has(item))
          result.stale.push({ device, kind: 'filter', id: f.handle ?? `${f.kind} pref ${f.pref}` });
      }
    }
  }
  return result;
}

/** Our class for rule r, at the rate r asks for (compared as tc displays it: exact, not approximate). */
export function classMatches(c: ClassEntry, r: StoredRule): boolean {
  const h = parseTcHandle(c.classid);
  if (!h || h.major !== ROOT_MAJOR || h.minor !== r.id) return false;
  const shown = tcShownRate(rateBytesPerSec(r.rate) * 8);
  return c.kind === 'htb' && c.parent === null && c.rate === shown && c.ceil === shown;
}

/** Our filter for rule r: our pref and handle, to r's class, matching exactly `ip dst r.ip/32`. */
export function filterMatches(f: FilterEntry, r: StoredRule): boolean {
  if (u32ItemOf(f) !== r.id) return false;
  const parent = parseTcHandle(f.parent);
  const flow = f.flowid !== undefined ? parseTcHandle(f.flowid) : null;
  const want = parseTcHandle(classIdFor(r.id))!;
  return (
    f.protocol === 'ip' &&
    f.pref === FILTER_PREF &&
    parent !== null &&
    parent.major === ROOT_MAJOR &&
    parent.minor === 0 &&
    flow !== null &&
    flow.major === want.major &&
    flow.minor === want.minor &&
    f.matches.length === 1 &&
    f.matches[0]!.field === 'dst' &&
    f.matches[0]!.address === r.ip &&
    f.matches[0]!.prefix_length === 32
  );
}
