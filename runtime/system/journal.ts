/**
 * The intent journal: what a multi-step change is about to do, written before its first change
 * and removed after its last, so that a host killed in between (kill -9, power loss) puts the
 * box back as it was when it starts again: files old, runtime state old, never a mix.
 *
 * A route opens an intent naming the files it will write (the host reads and keeps their current
 * bytes, mode and owner itself), records each runtime step's undo commands *before* running the
 * step (undoing a step that never ran fails harmlessly and is ignored during recovery), and closes
 * the intent when the change is complete or has been rolled back by the route itself.
 */
import type { SqliteDb } from '../db/database';
import type { ConfinedFiles } from './files';
import { SystemRefusal } from './types';

interface KeptFile {
  path: string;
  /** null: the file did not exist */
  content: string | null;
  mode?: number;
}

export interface RecoveredIntent {
  id: number;
  area: string;
  requestId: string | null;
  files: string[];
  undone: string[][];
  failed: { step: string; error: string }[];
}

export class IntentJournal {
  private readonly insert;
  private readonly select;
  private readonly remove;
  private readonly addUndo;

  constructor(
    private readonly db: SqliteDb,
    private readonly files: ConfinedFiles,
  ) {
    this.insert = db.prepare('INSERT INTO intents (area, request_id, started_at, files) VALUES (?, ?, ?, ?)');
    this.select = db.prepare('SELECT undo FROM intents WHERE id = ?');
    this.remove = db.prepare('DELETE FROM intents WHERE id = ?');
    this.addUndo = db.prepare('UPDATE intents SET undo = ? WHERE id = ?');
  }

  async begin(area: unknown, paths: unknown, requestId: string | undefined): Promise<{ id: number }> {
    if (typeof area !== 'string' || !/^[a-z][a-z0-9]*$/.test(area))
      throw new SystemRefusal('bad_request', 'journal: area must be an area name');
    if (!Array.isArray(paths) || !paths.every((p): p is string => typeof p === 'string'))
      throw new SystemRefusal('bad_request', 'journal: files must be a list of paths');
    const kept: KeptFile[] = [];
    for (const path of paths) {
      const real = await this.files.check(path, true);
      const { content } = await this.files.read(real);
      const mode = content === null ? undefined : (await this.files.stat(real)).stat?.mode;
      kept.push({ path: real, content, ...(mode === undefined ? {} : { mode: mode & 0o7777 }) });
    }
    const r = this.insert.run(area, requestId ?? null, Date.now(), JSON.stringify(kept));
    return { id: Number(r.lastInsertRowid) };
  }

  step(id: unknown, undo: unknown): { recorded: true } {
    if (typeof id !== 'number') throw new SystemRefusal('bad_request', 'journal: id must be a number');
    if (
      !Array.isArray(undo) ||
      !undo.every((a): a is string[] => Array.isArray(a) && a.every((x) => typeof x === 'string'))
    ) {
      throw new SystemRefusal('bad_request', 'journal: undo must be a list of argv');
    }
    const row = this.select.get(id) as { undo: string } | undefined;
    if (!row) throw new SystemRefusal('not_found', `journal: no open intent ${id}`);
    const all = JSON.parse(row.undo) as string[][][];
    all.push(undo);
    this.addUndo.run(JSON.stringify(all), id);
    return { recorded: true };
  }

  end(id: unknown): { ended: boolean } {
    if (typeof id !== 'number') throw new SystemRefusal('bad_request', 'journal: id must be a number');
    return { ended: this.remove.run(id).changes > 0 };
  }

  /**
   * At start, before anything else writes: every unfinished intent is rolled back (files first,
   * then the recorded undo commands, newest step first) and removed.
   */
  async recover(run: UndoRunner): Promise<RecoveredIntent[]> {
    return this.rollBack(this.db.prepare(`${INTENT_ROWS} ORDER BY id DESC`).all() as IntentRow[], run);
  }

  /**
   * The intents a request left open (a cancelled job: its route stopped part way), rolled back
   * as recover() does at start, newest first. The request must have stopped sending journal
   * steps (the SYSTEM service refuses them once a request is cancelled).
   */
  async rollBackRequest(requestId: string, run: UndoRunner): Promise<RecoveredIntent[]> {
    const rows = this.db.prepare(`${INTENT_ROWS} WHERE request_id = ? ORDER BY id DESC`).all(requestId) as IntentRow[];
    return this.rollBack(rows, run);
  }

  private async rollBack(rows: IntentRow[], run: UndoRunner): Promise<RecoveredIntent[]> {
    const out: RecoveredIntent[] = [];
    for (const row of rows) {
      const rec: RecoveredIntent = {
        id: row.id,
        area: row.area,
        requestId: row.request_id,
        files: [],
        undone: [],
        failed: [],
      };
      for (const f of JSON.parse(row.files) as KeptFile[]) {
        try {
          if (f.content === null) await this.files.remove(f.path, {});
          else await this.files.write(f.path, f.content, f.mode === undefined ? {} : { mode: f.mode });
          rec.files.push(f.path);
        } catch (e) {
          rec.failed.push({ step: `restore ${f.path}`, error: e instanceof Error ? e.message : String(e) });
        }
      }
      for (const step of (JSON.parse(row.undo) as string[][][]).reverse()) {
        for (const argv of step) {
          try {
            const r = await run(argv);
            if (r.code === 0) rec.undone.push(argv);
            // undoing a step that never ran (the kill came before it) fails: expected
            else rec.failed.push({ step: argv.join(' '), error: r.stderr.trim().split('\n')[0] ?? `exit ${r.code}` });
          } catch (e) {
            rec.failed.push({ step: argv.join(' '), error: e instanceof Error ? e.message : String(e) });
          }
        }
      }
      this.remove.run(row.id);
      out.push(rec);
    }
    return out;
  }
}

type UndoRunner = (argv: string[]) => Promise<{ code: number; stderr: string }>;

const INTENT_ROWS = 'SELECT id, area, request_id, files, undo FROM intents';

interface IntentRow {
  id: number;
  area: string;
  request_id: string | null;
  files: string;
  undo: string;
}
