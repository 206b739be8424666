// The baseline of `npm run bench`: a bare node:http server doing what the host's request path
// must do at the least: the same token check against the same SQLite file (SELECT by id,
// SHA-256 of the secret compared in constant time, revoked/expired), the route's one SELECT for
// the DB route, JSON.stringify of the answer, and the same response headers and body bytes.
// usage: node bare-server.mjs PORT DB_FILE BODIES_JSON  (BODIES_JSON: {"/api/v2/...": <answer>})
import http from 'node:http';
import { createHash, randomUUID, timingSafeEqual } from 'node:crypto';
import { readFileSync } from 'node:fs';
import Database from 'better-sqlite3';

const [port, dbFile, bodiesFile] = process.argv.slice(2);
const bodies = JSON.parse(readFileSync(bodiesFile, 'utf8'));
const db = new Database(dbFile, { fileMustExist: true });
db.pragma('busy_timeout = 5000');
const tokenRow = db.prepare('SELECT id, hash, permissions, expires_at, revoked_at FROM api_tokens WHERE id = ?');
const agents = db.prepare(
  'SELECT id, type, enabled, json, unix_time, created_at, updated_at FROM notification_agents ORDER BY id',
);
const TOKEN = /^blt_([0-9a-f]{12})_([A-Za-z0-9_-]{43})$/;

function authorised(header) {
  const m = typeof header === 'string' ? TOKEN.exec(header.trim()) : null;
  if (!m) return false;
  const row = tokenRow.get(m[1]);
  const hash = createHash('sha256').update(m[2]).digest('hex');
  if (!row || !timingSafeEqual(Buffer.from(hash), Buffer.from(row.hash))) return false;
  if (row.revoked_at !== null || (row.expires_at !== null && row.expires_at <= Date.now())) return false;
  return JSON.parse(row.permissions).length > 0;
}

http
  .createServer((req, res) => {
    const answer = bodies[req.url];
    const ok = answer !== undefined && authorised(req.headers.token);
    if (ok && req.url.endsWith('/notification/agent')) agents.all();
    const body = ok ? JSON.stringify(answer) : '{"error":{"code":"unauthorized"}}';
    res.writeHead(ok ? 200 : 401, {
      'content-type': 'application/json; charset=utf-8',
      'access-control-allow-origin': '*',
      'access-control-expose-headers': 'x-request-id',
      'x-powered-by': 'Ballast',
      'x-request-id': randomUUID(),
      'cache-control': 'no-store',
      'content-length': Buffer.byteLength(body),
    });
    res.end(body);
  })
  .listen(Number(port), '127.0.0.1', () => process.stdout.write('ready\n'));
// a clean exit on stop, so that `--cpu-prof` (BARE_NODE_ARGS) writes its profile
process.on('SIGTERM', () => process.exit(0));
