/**
 * The certificate area's host operations (registered through runtime/areas/certificate.ts):
 *   certificate/inspect     parse PEM text with node:crypto (trust store add); no key material out
 *   certificate/ingest      check a set of TLS pieces, swap them in, reload TLS, open the window
 *   certificate/commit      keep what ingest swapped in
 *   certificate/regenerate  new self-signed leaf and key through openssl, root and intermediate removed
 * Each change is audited (op, the files touched, a note; never PEM text).
 */
import { createPrivateKey, X509Certificate } from 'node:crypto';
import { existsSync, readdirSync } from 'node:fs';
import { hostname, networkInterfaces, type NetworkInterfaceInfo } from 'node:os';
import {
  COMMIT_OP,
  INGEST_OP,
  INSPECT_OP,
  PIECES,
  READ_OP,
  readPayload,
  type ReadResult,
  REGENERATE_OP,
  ingestPayload,
  inspectPayload,
  type CertificateSettings,
  type IngestResult,
  type KeyType,
  type Piece,
  type RegenerateResult,
} from '../../../handlers/certificate/contract';
import type { SqliteDb } from '../../db/database';
import type { EventsProducer } from '../../events';
import type { HostOp, SystemService } from '../../system/service';
import type { ExecResult } from '../../system/types';
import { SystemRefusal } from '../../system/types';
import { checkPieces, inspectPem, keyProblem } from './x509';
import { readManaged, removeSync, TlsFileStore, type Journal } from './tls-store';
import { join } from 'node:path';
import { opAudit } from '../../db/audit';
import { atomicWriteSync } from '../../system/files';
import { payloadOf } from '../../system/host-op';

export interface TlsManagerOptions {
  store: TlsFileStore;
  settings: CertificateSettings;
  db: SqliteDb;
  events: EventsProducer;
  system: SystemService;
  /** the openssl binary (regenerate) */
  openssl: string;
  reloadTls(): void;
  log(line: string): void;
}

/** A failed command, for the route to answer as 502 `command_failed`. */
export interface CommandFailure {
  command: string[];
  exitCode: number;
  stderr: string;
  message: string;
}

export class TlsManager {
  private timer: NodeJS.Timeout | undefined;
  private queue: Promise<unknown> = Promise.resolve();
  private readonly audit;

  constructor(private readonly o: TlsManagerOptions) {
    this.audit = opAudit(o.db);
  }

  /** One change at a time (ingest, commit, rollback, regenerate). */
  private serial<T>(f: () => Promise<T> | T): Promise<T> {
    const run = this.queue.then(f, f);
    this.queue = run.catch(() => undefined);
    return run;
  }

  record(op: string, requestId: string | undefined, paths: string[], note: string): void {
    this.audit({ kind: op, requestId, argv: paths, note });
  }

  private reload(): void {
    this.o.reloadTls();
  }

  /**
   * At setup, before the server reads the certificate: temp files of interrupted writes go, a
   * journal whose deadline passed (or a regenerate interrupted mid-swap) is rolled back now, and
   * a pending window gets its timer again.
   */
  recover(): void {
    removeSync(stagedKeyPath(this.o.store.path('private_key')));
    const stale = this.o.store.removeStaleTemps();
    if (stale.length) this.o.log(`certificate: removed ${stale.length} temp file(s) of interrupted writes`);
    const j = this.o.store.journal();
    if (!j) {
      // copies of a change that stopped before its journal was written (the files were not touched)
      this.o.store.discardPrevious();
      return;
    }
    if (j.kind === 'regenerate')
      return this.rollback(j, 'the host stopped while regenerating the certificate', undefined);
    if (j.deadline <= Date.now())
      return this.rollback(j, 'the commit window ran out while the host was down', undefined);
    this.o.log(
      `certificate: a commit is due by ${new Date(j.deadline).toISOString()}; the previous certificate comes back if none arrives`,
    );
    this.arm(j.deadline);
  }

  path(piece: Piece): string {
    return this.o.store.path(piece);
  }

  stop(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
  }

  private arm(deadline: number): void {
    this.stop();
    this.timer = setTimeout(() => void this.expire(), Math.max(0, deadline - Date.now()));
    this.timer.unref();
  }

  private expire(): Promise<void> {
    return this.serial(() => {
      this.timer = undefined;
      const j = this.o.store.journal();
      if (!j || j.kind !== 'ingest') return;
      if (j.deadline > Date.now()) return this.arm(j.deadline);
      this.rollback(j, 'no commit within the commit window', undefined);
    }).catch((e) => this.o.log(`certificate: rollback failed: ${e instanceof Error ? e.message : String(e)}`));
  }

  /** Puts the new pieces in place and serves them; if that fails, the journal's old ones are back and `refusal` is thrown. */
  private swap(
    j: Journal,
    changes: Partial<Record<Piece, string | undefined>>,
    requestId: string | undefined,
    refusal: (why: string) => SystemRefusal,
  ): void {
    try {
      this.o.store.apply(changes, j.previous);
      this.reload();
    } catch (e) {
      const why = e instanceof Error ? e.message : String(e);
      this.rollback(j, `the swap failed: ${why}`, requestId);
      throw refusal(why);
    }
  }

  private rollback(j: Journal, reason: string, requestId: string | undefined): void {
    this.stop();
    this.o.store.restore(j);
    try {
      this.reload();
    } catch (e) {
      this.o.log(`certificate: TLS reload after rollback failed: ${e instanceof Error ? e.message : String(e)}`);
    }
    this.o.store.finish();
    this.record(
      'certificate/rollback',
      requestId,
      PIECES.map((p) => this.o.store.path(p)),
      reason,
    );
    this.o.log(`certificate: previous TLS certificate restored (${reason})`);
    if (j.kind === 'ingest')
      this.o.events.record({ kind: 'certificate.tls.rolled_back', data: { reason, pieces: j.changed } });
  }

  ingest(pieces: Partial<Record<Piece, string>>, requestId: string | undefined): Promise<IngestResult> {
    return this.serial((): IngestResult => {
      const pending = this.o.store.journal();
      if (pending) throw new SystemRefusal('conflict', pendingMessage(pending));
      const given = PIECES.filter((p) => pieces[p] !== undefined);
      if (given.length === 0) return { ok: false, problems: [{ piece: 'server', message: 'no piece given' }] };
      const result: Partial<Record<Piece, string>> = this.o.store.current();
      for (const p of given) {
        if (pieces[p] === '') delete result[p];
        else result[p] = pieces[p];
      }
      const { problems, parsed } = checkPieces(result);
      if (problems.length) return { ok: false, problems };
      const changes: Partial<Record<Piece, string | undefined>> = {};
      for (const p of given) changes[p] = pieces[p] === '' ? undefined : parsed.normalized[p];
      const seconds = this.o.settings.commitWindowSeconds;
      const j = this.o.store.begin('ingest', Date.now() + seconds * 1000, given);
      this.swap(
        j,
        changes,
        requestId,
        (why) =>
          new SystemRefusal(
            'bad_request',
            `the new pieces could not be served (${why}); the previous ones were restored`,
          ),
      );
      this.arm(j.deadline);
      this.record(
        INGEST_OP,
        requestId,
        given.map((p) => this.o.store.path(p)),
        `${given.map((p) => (pieces[p] === '' ? `${p} removed` : p)).join(', ')}; commit due in ${seconds} s`,
      );
      return {
        ok: true,
        confirmationTimeout: seconds,
        resolutions: given.map((p) => ({ piece: p, output: this.o.store.path(p) })),
      };
    });
  }

  commit(requestId: string | undefined): Promise<{ pieces: Piece[] }> {
    return this.serial(() => {
      const j = this.o.store.journal();
      if (!j || j.kind !== 'ingest')
        throw new SystemRefusal('conflict', 'no ingested certificate is waiting for a commit');
      if (j.deadline <= Date.now()) {
        this.rollback(j, 'no commit within the commit window', requestId);
        throw new SystemRefusal(
          'conflict',
          `the commit window closed at ${new Date(j.deadline).toISOString()}; the previous certificate was restored`,
        );
      }
      this.stop();
      this.o.store.finish();
      this.record(
        COMMIT_OP,
        requestId,
        j.changed.map((p) => this.o.store.path(p)),
        'previous pieces discarded',
      );
      return { pieces: j.changed };
    });
  }

  regenerate(requestId: string | undefined): Promise<RegenerateResult> {
    return this.serial(async (): Promise<RegenerateResult> => {
      // a pending ingest is superseded: its pieces are replaced, so there is nothing to roll back to
      const pending = this.o.store.journal();
      if (pending && pending.kind !== 'ingest') throw new SystemRefusal('conflict', pendingMessage(pending));
      const s = this.o.settings;
      const name = s.hostName ?? hostname();
      const addresses = s.addresses ?? hostAddresses();
      const sans = [`DNS:${name}`, ...addresses.map((a) => `IP:${a}`)];
      const genArgv = [this.o.openssl, 'genpkey', ...KEYGEN_ARGS[s.keyType]];
      const gen = await this.exec(genArgv, undefined, requestId);
      if (gen.code !== 0) return { ok: false, failure: failure(genArgv, gen, 'openssl could not generate a key') };
      let keyPem: string;
      try {
        const key = createPrivateKey({ key: gen.stdout, format: 'pem' });
        const kp = keyProblem(key);
        if (kp) throw new Error(kp);
        keyPem = gen.stdout;
      } catch (e) {
        return {
          ok: false,
          failure: failure(
            genArgv,
            { ...gen, stderr: '' },
            `openssl genpkey printed no usable key (${e instanceof Error ? e.message : String(e)})`,
          ),
        };
      }
      // openssl reads the key from a file: a 0600 staging file beside the key file (never argv;
      // stdin is a socket openssl cannot open as /dev/stdin)
      const staged = stagedKeyPath(this.o.store.path('private_key'));
      const reqArgv = [
        this.o.openssl,
        'req',
        '-new',
        '-x509',
        '-key',
        staged,
        '-sha256',
        '-days',
        String(s.validityDays),
        '-subj',
        `/CN=${name}`,
        '-addext',
        `subjectAltName=${sans.join(',')}`,
        '-addext',
        'basicConstraints=critical,CA:FALSE',
        '-addext',
        `keyUsage=critical,${s.keyType.startsWith('rsa') ? 'digitalSignature,keyEncipherment' : 'digitalSignature'}`,
        '-addext',
        'extendedKeyUsage=serverAuth',
      ];
      let req: ExecResult;
      atomicWriteSync(staged, keyPem, 0o600);
      try {
        req = await this.exec(reqArgv, undefined, requestId);
      } finally {
        removeSync(staged);
      }
      if (req.code !== 0)
        return { ok: false, failure: failure(reqArgv, req, 'openssl could not sign the certificate') };
      let cert: X509Certificate;
      try {
        cert = new X509Certificate(req.stdout);
        if (!cert.checkPrivateKey(createPrivateKey(keyPem)))
          throw new Error('the certificate does not match the generated key');
      } catch (e) {
        return {
          ok: false,
          failure: failure(
            reqArgv,
            { ...req, stderr: '' },
            `openssl req printed no usable certificate (${e instanceof Error ? e.message : String(e)})`,
          ),
        };
      }
      const changes: Partial<Record<Piece, string | undefined>> = {
        server: cert.toString(),
        private_key: keyPem,
        intermediate: undefined,
        root: undefined,
      };
      // (the rollback timer waits for this op: both run one at a time)
      const endedWindow = this.o.store.journal()?.kind === 'ingest';
      this.stop();
      const j = this.o.store.begin('regenerate', Date.now(), [...PIECES]);
      this.swap(
        j,
        changes,
        requestId,
        () =>
          new SystemRefusal(
            'internal',
            'the regenerated certificate could not be served; the previous one was restored',
          ),
      );
      this.o.store.finish();
      const notAfter = new Date(cert.validTo).toISOString();
      this.record(
        REGENERATE_OP,
        requestId,
        PIECES.map((p) => this.o.store.path(p)),
        `${s.keyType}, CN=${name}, ${sans.join(',')}, until ${notAfter}${endedWindow ? '; ended the pending commit window' : ''}`,
      );
      return { ok: true, subject: `CN=${name}`, notAfter, keyType: s.keyType, sans, endedWindow };
    });
  }

  private async exec(argv: string[], stdin: string | undefined, requestId: string | undefined): Promise<ExecResult> {
    return (await this.o.system.handle(
      'exec',
      { argv, ...(stdin === undefined ? {} : { stdin }) },
      requestId,
    )) as ExecResult;
  }
}

/** Where regenerate stages the new key for `openssl req -key` (removed right after). */
export const stagedKeyPath = (keyFile: string) => `${keyFile}.new`;

const KEYGEN_ARGS: Record<KeyType, string[]> = {
  'ecdsa-p256': ['-algorithm', 'EC', '-pkeyopt', 'ec_paramgen_curve:P-256'],
  'ecdsa-p384': ['-algorithm', 'EC', '-pkeyopt', 'ec_paramgen_curve:P-384'],
  'rsa-2048': ['-algorithm', 'RSA', '-pkeyopt', 'rsa_keygen_bits:2048'],
  'rsa-3072': ['-algorithm', 'RSA', '-pkeyopt', 'rsa_keygen_bits:3072'],
  'rsa-4096': ['-algorithm', 'RSA', '-pkeyopt', 'rsa_keygen_bits:4096'],
};

function failure(argv: string[], r: ExecResult, message: string): CommandFailure {
  return { command: argv, exitCode: r.code, stderr: r.stderr.trim().slice(0, 2000), message };
}

function pendingMessage(j: Journal): string {
  return j.kind === 'ingest'
    ? `an ingested certificate is waiting for a commit until ${new Date(j.deadline).toISOString()}; commit it or let it roll back first`
    : 'a certificate change is under way';
}

/**
 * The machine's addresses for the certificate's SANs: those of the appliance's own interfaces
 * (ownInterfaces), without loopback and link-local ones.
 */
export function hostAddresses(
  sysClassNet = '/sys/class/net',
  interfaces: NodeJS.Dict<NetworkInterfaceInfo[]> = networkInterfaces(),
): string[] {
  const own = ownInterfaces(sysClassNet);
  const out: string[] = [];
  for (const [name, list] of Object.entries(interfaces)) {
    if (!own.has(name)) continue;
    for (const a of list ?? []) {
      if (a.internal) continue;
      if (a.family === 'IPv6' && /^fe[89ab]/i.test(a.address)) continue;
      if (a.family === 'IPv4' && a.address.startsWith('169.254.')) continue;
      if (!out.includes(a.address)) out.push(a.address);
    }
  }
  return out;
}

/**
 * The interfaces that are the appliance's own, from sysfs: a NIC (it has a `device`), and what is
 * built on one: a bond, a VLAN or a macvlan (a `lower_<dev>` link to an own interface) or a bridge
 * with an own port (`brif/<dev>`). Container plumbing is not: veths, docker0 and br-<id> (their
 * ports are veths), tun/tap, dummies, loopback.
 */
export function ownInterfaces(sysClassNet: string): Set<string> {
  let names: string[];
  try {
    names = readdirSync(sysClassNet);
  } catch {
    return new Set();
  }
  const below = (name: string): string[] => {
    const dir = join(sysClassNet, name);
    const lower = safeList(dir)
      .filter((n) => n.startsWith('lower_'))
      .map((n) => n.slice('lower_'.length));
    return [...lower, ...safeList(join(dir, 'brif'))];
  };
  const memo = new Map<string, boolean>();
  const own = (name: string, depth: number): boolean => {
    const known = memo.get(name);
    if (known !== undefined) return known;
    if (depth > 8) return false;
    const r = existsSync(join(sysClassNet, name, 'device')) || below(name).some((n) => own(n, depth + 1));
    memo.set(name, r);
    return r;
  };
  return new Set(names.filter((n) => own(n, 0)));
}

function safeList(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}

export function certificateOps(m: TlsManager, trustDir: string): Record<string, HostOp> {
  return {
    [READ_OP]: async (payload, requestId): Promise<ReadResult> => {
      const req = payloadOf(readPayload, READ_OP, payload);
      const path = req.kind === 'trusted' ? join(trustDir, `${req.name}.crt`) : m.path(req.piece);
      const r = readManaged(path, req.kind === 'trusted' ? `${req.name}.crt` : `the ${req.piece} file`);
      // who read the private key is worth knowing (never what it is)
      if (req.kind === 'piece' && req.piece === 'private_key')
        m.record(READ_OP, requestId, [path], r ? 'private key read' : 'private key absent');
      return { path, content: r ? r.data.toString('utf8') : null };
    },
    [INSPECT_OP]: async (payload) => inspectPem(payloadOf(inspectPayload, INSPECT_OP, payload).pem),
    [INGEST_OP]: async (payload, requestId) => m.ingest(payloadOf(ingestPayload, INGEST_OP, payload).pieces, requestId),
    [COMMIT_OP]: async (_payload, requestId) => m.commit(requestId),
    [REGENERATE_OP]: async (_payload, requestId) => m.regenerate(requestId),
  };
}
