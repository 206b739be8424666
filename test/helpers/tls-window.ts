/**
 * A TlsManager (runtime/areas/certificate/ops.ts) over private piece files and a private
 * database, for the commit-window tests: what it wrote (the piece files' text and mode, the
 * journal, the audit rows, the rolled_back events, its log lines) read back as values.
 */
import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { certificateSettings, PIECES, type Piece } from '../../handlers/certificate/contract';
import { TlsManager } from '../../runtime/areas/certificate/ops';
import { TlsFileStore } from '../../runtime/areas/certificate/tls-store';
import { openDatabase, type SqliteDb } from '../../runtime/db/database';
import { EventsProducer } from '../../runtime/events';
import type { SystemService } from '../../runtime/system/service';
import type { Chain } from './certificate-pki';
import { privateDir } from './tmp';

const dbs: SqliteDb[] = [];

/** Closes the databases of every manager made so far (afterEach). */
export function closeWindowHosts(): void {
  for (const d of dbs.splice(0)) d.close();
}

export interface WindowHostOptions {
  /** the commit window, in seconds */
  seconds: number;
  /** the state of a host before (a restart): its piece files are left as they are */
  dir?: string;
  /** the chain the piece files hold at first (a fresh directory only) */
  seed?: Chain;
  /** TLS reload; counted either way */
  reloadTls?: (n: number) => void;
}

export interface AuditEntry {
  kind: string;
  requestId: string | null;
  argv: unknown[];
  note: string | null;
}

export function windowHost(o: WindowHostOptions) {
  const dir = o.dir ?? privateDir('window');
  const paths = Object.fromEntries(PIECES.map((p) => [p, join(dir, 'tls', `${p}.pem`)])) as Record<Piece, string>;
  mkdirSync(join(dir, 'tls'), { recursive: true });
  if (!o.dir && o.seed)
    for (const p of PIECES) writeFileSync(paths[p], o.seed[p], { mode: p === 'private_key' ? 0o600 : 0o644 });
  const db = openDatabase(join(dir, 'ballast.db'));
  dbs.push(db);
  const log: string[] = [];
  let reloads = 0;
  const store = new TlsFileStore({ paths, dir: join(dir, 'certificate') });
  const manager = new TlsManager({
    store,
    settings: certificateSettings.parse({ commitWindowSeconds: o.seconds }),
    db,
    events: new EventsProducer(db),
    system: {} as SystemService,
    openssl: '/usr/bin/openssl',
    reloadTls: () => {
      reloads++;
      o.reloadTls?.(reloads);
    },
    log: (l) => void log.push(l),
  });
  /** Each piece file's text, or null when it does not exist. */
  const files = () =>
    Object.fromEntries(PIECES.map((p) => [p, existsSync(paths[p]) ? readFileSync(paths[p], 'utf8') : null]));
  const modes = () =>
    Object.fromEntries(PIECES.map((p) => [p, existsSync(paths[p]) ? statSync(paths[p]).mode & 0o7777 : null]));
  const journalFile = join(dir, 'certificate', 'journal.json');
  const journal = () => (existsSync(journalFile) ? (JSON.parse(readFileSync(journalFile, 'utf8')) as unknown) : null);
  const rollbacks = () =>
    (db.prepare("SELECT data FROM events WHERE kind = 'certificate.tls.rolled_back'").all() as { data: string }[]).map(
      (r) => JSON.parse(r.data) as { reason: string; pieces: Piece[] },
    );
  const audit = (): AuditEntry[] =>
    (
      db.prepare('SELECT kind, request_id, argv, note FROM audit_log ORDER BY id').all() as {
        kind: string;
        request_id: string | null;
        argv: string;
        note: string | null;
      }[]
    ).map((r) => ({ kind: r.kind, requestId: r.request_id, argv: JSON.parse(r.argv) as unknown[], note: r.note }));
  return {
    dir,
    paths,
    store,
    manager,
    log,
    files,
    modes,
    journal,
    journalFile,
    previousDir: join(dir, 'certificate', 'previous'),
    rollbacks,
    audit,
    server: () => readFileSync(paths.server, 'utf8'),
    reloads: () => reloads,
  };
}

/** Every piece's path, in PIECES order (what a rollback's audit row names). */
export const allPaths = (paths: Record<Piece, string>) => PIECES.map((p) => paths[p]);
