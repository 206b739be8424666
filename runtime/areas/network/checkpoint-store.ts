/**
 * The network checkpoint in SQLite (table `network_checkpoints`, migration 6): at most one row.
 *
 * - `open` inserts it as `preparing` (the runtime snapshot, the stored traffic rules the change
 *   names) before the change runs; the unique index on a constant makes a second one fail, which
 *   is the "one pending change at a time" rule, race-free.
 * - `keep` makes it `pending` with its deadline once the change is applied. A network change hands
 *   over its intent: the intent row's kept files and undo steps move here and the intent row goes,
 *   in one transaction, so a kill at any moment leaves the change covered by exactly one of the two
 *   (the journal rolls an open intent back at start; this store, a pending checkpoint at its
 *   deadline).
 * - A `preparing` row found at start belongs to a change that never got applied (its intent, if
 *   any, is rolled back by the host's journal): it is deleted.
 */
import type { SqliteDb } from '../../db/database';
import { SystemRefusal } from '../../system/types';
import type { RuntimeSnapshot } from './runtime-state';

export interface KeptFile {
  path: string;
  /** null: the file did not exist */
  content: string | null;
  mode?: number;
}

export interface StoredRuleRow {
  name: string;
  id: number;
  device: string;
  ip: string;
  rate: number;
  created_at: number;
}

export interface Checkpoint {
  id: number;
  state: 'preparing' | 'pending';
  area: 'network' | 'traffic';
  change: string;
  devices: string[];
  requestId: string | null;
  createdAt: number;
  window: number;
  deadline: number | null;
  runtime: RuntimeSnapshot;
  files: KeptFile[];
  /** undo argv per step, oldest step first (the journal's order) */
  undo: string[][][];
  /** the traffic rules the change named, as stored before it (absent: the rule did not exist) */
  rules: { name: string; row: StoredRuleRow | null }[];
}

interface Row {
  id: number;
  state: 'preparing' | 'pending';
  area: 'network' | 'traffic';
  change: string;
  devices: string;
  request_id: string | null;
  created_at: number;
  window_s: number;
  deadline: number | null;
  runtime: string;
  files: string;
  undo: string;
  rules: string;
}

const fromRow = (r: Row): Checkpoint => ({
  id: r.id,
  state: r.state,
  area: r.area,
  change: r.change,
  devices: JSON.parse(r.devices) as string[],
  requestId: r.request_id,
  createdAt: r.created_at,
  window: r.window_s,
  deadline: r.deadline,
  runtime: JSON.parse(r.runtime) as RuntimeSnapshot,
  files: JSON.parse(r.files) as KeptFile[],
  undo: JSON.parse(r.undo) as string[][][],
  rules: JSON.parse(r.rules) as Checkpoint['rules'],
});

export class CheckpointStore {
  constructor(private readonly db: SqliteDb) {}

  current(): Checkpoint | undefined {
    const r = this.db.prepare('SELECT * FROM network_checkpoints LIMIT 1').get() as Row | undefined;
    return r ? fromRow(r) : undefined;
  }

  open(c: {
    area: Checkpoint['area'];
    change: string;
    devices: string[];
    requestId: string | undefined;
    window: number;
    runtime: RuntimeSnapshot;
    ruleNames: string[];
  }): number {
    const readRule = this.db.prepare('SELECT name, id, device, ip, rate, created_at FROM traffic_rules WHERE name = ?');
    const rules = c.ruleNames.map((name) => ({ name, row: (readRule.get(name) as StoredRuleRow | undefined) ?? null }));
    try {
      const r = this.db
        .prepare(
          `INSERT INTO network_checkpoints (state, area, change, devices, request_id, created_at, window_s, runtime, rules)
           VALUES ('preparing', ?, ?, ?, ?, ?, ?, ?, ?)`,
        )
        .run(
          c.area,
          c.change,
          JSON.stringify(c.devices),
          c.requestId ?? null,
          Date.now(),
          c.window,
          JSON.stringify(c.runtime),
          JSON.stringify(rules),
        );
      return Number(r.lastInsertRowid);
    } catch (e) {
      if ((e as { code?: string }).code === 'SQLITE_CONSTRAINT_UNIQUE') {
        const other = this.current();
        throw new SystemRefusal('conflict', other ? waitingMessage(other) : 'another network change is under way');
      }
      throw e;
    }
  }

  /** `preparing` → `pending`: the intent's files and undo (or the given undo) move here. */
  keep(id: number, deadline: number, from: { intent?: number; undo?: string[][][] }): Checkpoint {
    return this.db.transaction(() => {
      const c = this.current();
      if (!c || c.id !== id || c.state !== 'preparing')
        throw new SystemRefusal('conflict', `network change ${id} is not being applied`);
      let files: KeptFile[] = [];
      let undo = from.undo ?? [];
      if (from.intent !== undefined) {
        const i = this.db
          .prepare("SELECT files, undo FROM intents WHERE id = ? AND area = 'network'")
          .get(from.intent) as { files: string; undo: string } | undefined;
        if (!i) throw new SystemRefusal('conflict', `no open network intent ${from.intent}`);
        files = JSON.parse(i.files) as KeptFile[];
        undo = JSON.parse(i.undo) as string[][][];
        this.db.prepare('DELETE FROM intents WHERE id = ?').run(from.intent);
      }
      this.db
        .prepare("UPDATE network_checkpoints SET state = 'pending', deadline = ?, files = ?, undo = ? WHERE id = ?")
        .run(deadline, JSON.stringify(files), JSON.stringify(undo), id);
      return { ...c, state: 'pending' as const, deadline, files, undo };
    })();
  }

  remove(id: number): boolean {
    return this.db.prepare('DELETE FROM network_checkpoints WHERE id = ?').run(id).changes > 0;
  }

  /** Puts the traffic rules the change named back as they were stored (rows, ids, creation times). */
  restoreRules(c: Checkpoint): void {
    const del = this.db.prepare('DELETE FROM traffic_rules WHERE name = ?');
    const ins = this.db.prepare(
      'INSERT INTO traffic_rules (name, id, device, ip, rate, created_at) VALUES (?, ?, ?, ?, ?, ?)',
    );
    this.db.transaction(() => {
      for (const r of c.rules) {
        del.run(r.name);
        if (r.row) ins.run(r.row.name, r.row.id, r.row.device, r.row.ip, r.row.rate, r.row.created_at);
      }
    })();
  }
}

export function waitingMessage(c: Checkpoint): string {
  return c.state === 'pending' && c.deadline !== null
    ? `network change ${c.id} (${c.change}) is waiting for its confirmation until ${new Date(c.deadline).toISOString()}; confirm it (POST /network/confirm {"id": ${c.id}}) or roll it back (POST /network/rollback) first`
    : `network change ${c.id} (${c.change}) is being applied`;
}
