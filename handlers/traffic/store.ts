import * as z from 'zod';
import type { D1Database } from '../core/bindings';
import { conflict } from '../core/errors';
import { TrafficPlanError, nextFreeId } from './plan';
import { RESERVED_ID } from './names';
import { storedRule, type StoredRule } from './stored-rule';

/**
 * The rules as the DB keeps them (table `traffic_rules`, migration 1: name PRIMARY KEY,
 * id UNIQUE). The DB is the source of truth; tc state is derived from it and re-derived after
 * a reboot or a hand edit (reconcile.ts).
 *
 * Rules are listed in creation order (created_at, then id), so a new rule appears last even
 * when it reuses a freed id, and removing one leaves the others where they were.
 */

export { storedRule, type StoredRule } from './stored-rule';

const Rows = z.array(storedRule);

export async function listRules(db: D1Database): Promise<StoredRule[]> {
  const r = await db.prepare('SELECT name, id, device, ip, rate FROM traffic_rules ORDER BY created_at, id').all();
  // A row that does not validate was written by something else than these routes: a 500 that
  // names the cause in the log beats planning tc commands from it.
  return Rows.parse(r.results);
}

export async function findRule(db: D1Database, name: string): Promise<StoredRule | null> {
  const row = await db
    .prepare('SELECT name, id, device, ip, rate FROM traffic_rules WHERE name = ?')
    .bind(name)
    .first();
  return row === null ? null : storedRule.parse(row);
}

/** How many attempts reserveRule makes when other creates keep taking the id it picked. */
const RESERVE_ATTEMPTS = 16;

/**
 * Store a new rule under the smallest free id, atomically, BEFORE any tc command runs.
 *
 * Why first: the row is the reservation. Two concurrent creates read the same free id, but the
 * UNIQUE(id) constraint lets only one INSERT through; the other sees `changes = 0` and picks
 * again. So no two rules ever share an id (or an htb class / u32 item), across devices too, and
 * no tc command runs for an id that is not ours. The caller deletes the row if applying fails.
 *
 * `alsoTaken`: ids of classes/filters already under our root on the device (leftovers of a
 * half-finished destroy, or made by hand), which a new rule must not land on.
 *
 * `ON CONFLICT DO NOTHING` (rather than catching an exception) because the D1 API does not
 * promise an error shape that says which constraint failed; a duplicate name is told apart by
 * looking the name up.
 */
export async function reserveRule(
  db: D1Database,
  rule: Omit<StoredRule, 'id'>,
  alsoTaken: Iterable<number>,
  now: number = Date.now(),
): Promise<number> {
  const avoid = [...alsoTaken];
  for (let attempt = 0; attempt < RESERVE_ATTEMPTS; attempt++) {
    const used = await db.prepare('SELECT id FROM traffic_rules').all<{ id: number }>();
    let id: number;
    try {
      id = nextFreeId([RESERVED_ID, ...used.results.map((r) => String(r.id))], avoid);
    } catch (e) {
      if (e instanceof TrafficPlanError) throw conflict(e.message);
      throw e;
    }
    const r = await db
      .prepare(
        'INSERT INTO traffic_rules (name, id, device, ip, rate, created_at) VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING',
      )
      .bind(rule.name, id, rule.device, rule.ip, rule.rate, now)
      .run();
    if (r.meta.changes === 1) return id;
    if (await findRule(db, rule.name)) throw duplicateName(rule.name);
    // Someone else took `id` between our SELECT and INSERT: look again.
  }
  throw new Error(`could not reserve a traffic rule id after ${RESERVE_ATTEMPTS} attempts`);
}

export const duplicateName = (name: string) => conflict(`a traffic rule named ${name} already exists`);

/** Delete exactly this rule (name and id), so a stale caller never removes a newer namesake. */
export async function deleteRule(db: D1Database, rule: Pick<StoredRule, 'name' | 'id'>): Promise<boolean> {
  const r = await db.prepare('DELETE FROM traffic_rules WHERE name = ? AND id = ?').bind(rule.name, rule.id).run();
  return r.meta.changes === 1;
}

export async function rulesOnDevice(db: D1Database, device: string): Promise<number> {
  const n = await db
    .prepare('SELECT COUNT(*) AS n FROM traffic_rules WHERE device = ?')
    .bind(device)
    .first<number>('n');
  return n ?? 0;
}
