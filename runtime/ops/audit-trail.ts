import type { SqliteDb } from '../db/database';

/*
 * The read side of audit_log: the audit trail. A change or a refused request has one `request` row (written
 * by the host's request observer, runtime/ops/request-log.ts: method and path in argv, the
 * status in exit_code, who and which route in note as JSON); its commands and file writes are
 * the rows of the same request id, written before it.
 */

export interface TrailFilter {
  /** epoch ms, inclusive */
  since?: number;
  until?: number;
  area?: string;
  /** a token's id or name */
  token?: string;
  outcome?: 'success' | 'failure';
  /** the cursor: only requests older than this row id */
  before?: number;
  limit: number;
}

export interface TrailCommand {
  at: number;
  kind: string;
  argv: unknown[];
  exitCode: number | null;
  durationMs: number | null;
  note: string | null;
}

export interface TrailRequest {
  id: number;
  at: number;
  requestId: string | null;
  method: string;
  path: string;
  route: string | null;
  area: string | null;
  token: { id: string; name: string } | null;
  remote: string | null;
  status: number;
  durationMs: number | null;
  commands: TrailCommand[];
}

interface RawRow {
  id: number;
  at: number;
  request_id: string | null;
  kind: string;
  argv: string | null;
  exit_code: number | null;
  duration_ms: number | null;
  note: string | null;
}

const TRAIL_SQL = `SELECT id, at, request_id, kind, argv, exit_code, duration_ms, note FROM audit_log
  WHERE kind = 'request'
    AND (@since IS NULL OR at >= @since) AND (@until IS NULL OR at <= @until)
    AND (@before IS NULL OR id < @before)
    AND (@area IS NULL OR (json_valid(note) AND json_extract(note, '$.area') = @area))
    AND (@token IS NULL OR (json_valid(note) AND (json_extract(note, '$.token.id') = @token OR json_extract(note, '$.token.name') = @token)))
    AND (@outcome IS NULL OR (CASE WHEN exit_code < 400 THEN 'success' ELSE 'failure' END) = @outcome)
  ORDER BY id DESC LIMIT @limit`;

function jsonOr<T>(text: string | null, fallback: T): T {
  if (text === null) return fallback;
  try {
    return JSON.parse(text) as T;
  } catch {
    return fallback;
  }
}

/** A page of the audit trail, newest first; `next` is the cursor of the following page (null: none). */
export function auditTrail(db: SqliteDb, f: TrailFilter): { items: TrailRequest[]; next: number | null } {
  const rows = db.prepare(TRAIL_SQL).all({
    since: f.since ?? null,
    until: f.until ?? null,
    before: f.before ?? null,
    area: f.area ?? null,
    token: f.token ?? null,
    outcome: f.outcome ?? null,
    limit: f.limit + 1,
  }) as RawRow[];
  const more = rows.length > f.limit;
  const page = more ? rows.slice(0, f.limit) : rows;
  const items = page.map((r): TrailRequest => {
    const [method, path] = jsonOr<unknown[]>(r.argv, []);
    const note = jsonOr<Record<string, unknown>>(r.note, {});
    const token = note.token as TrailRequest['token'] | undefined;
    return {
      id: r.id,
      at: r.at,
      requestId: r.request_id,
      method: String(method ?? '?'),
      path: String(path ?? '?'),
      route: typeof note.route === 'string' ? note.route : null,
      area: typeof note.area === 'string' ? note.area : null,
      token: token && typeof token.id === 'string' && typeof token.name === 'string' ? token : null,
      remote: typeof note.remote === 'string' ? note.remote : null,
      status: r.exit_code ?? 0,
      durationMs: r.duration_ms,
      commands: [],
    };
  });
  const ids = items.map((i) => i.requestId).filter((x): x is string => x !== null);
  if (ids.length) {
    // a request's rows are written while it runs: between its start and its own row (index on at)
    const from = Math.min(...items.map((i) => i.at - (i.durationMs ?? 0))) - 1000;
    const to = Math.max(...items.map((i) => i.at));
    const byRequest = new Map(items.map((i) => [i.requestId, i]));
    const commands = db
      .prepare(
        `SELECT id, at, request_id, kind, argv, exit_code, duration_ms, note FROM audit_log
         WHERE at BETWEEN ? AND ? AND kind != 'request' AND request_id IN (${ids.map(() => '?').join(', ')})
         ORDER BY id`,
      )
      .all(from, to, ...ids) as RawRow[];
    for (const c of commands)
      byRequest.get(c.request_id)?.commands.push({
        at: c.at,
        kind: c.kind,
        argv: jsonOr<unknown[]>(c.argv, []),
        exitCode: c.exit_code,
        durationMs: c.duration_ms,
        note: c.note,
      });
  }
  return { items, next: more ? page[page.length - 1].id : null };
}
