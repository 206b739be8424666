/**
 * Host tier over real HTTPS: the host's `tls:` section serves the certificate area's piece files
 * (cert = server, chain = intermediate, key = private key). Certificates are generated with
 * openssl. Each check reads the certificate a NEW TLS connection is served; one connection
 * opened at the start keeps working across every reload.
 *   - in process (runtime/serve.ts): ingest → new connections see it; no commit → the old one is
 *     served again after the (short) window; ingest + commit → it stays;
 *   - the built host as a child process (`node dist/host/cli.mjs serve --config F`), killed with
 *     SIGKILL mid-window: restarted within the window it rolls back on time; restarted after the
 *     deadline it rolls back at start, before serving.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawn, type ChildProcess } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { request } from 'node:https';
import { connect, type TLSSocket } from 'node:tls';
import { dirname, join } from 'node:path';
import { stringify } from 'yaml';
import { PIECES, PIECE_PATH_KEY, type Piece } from '../../handlers/certificate/contract';
import { DIRECTORY_PATH_KEYS, defaultConfig, type HostConfig } from '../../runtime/config';
import { serve, type Serving } from '../../runtime/serve';
import { createToken } from '../../runtime/tokens';
import { distDir, makeTestConfig, repo } from '../helpers/host';
import { privateDir } from '../helpers/tmp';
import { makePki, type Chain, type Pki } from '../helpers/certificate-pki';

const fp = (pem: string) => new X509Certificate(pem).fingerprint256;

/** The server certificate and the next one in the chain a new TLS connection is served. */
function servedChain(port: number): Promise<{ server: string; issuer: string }> {
  return new Promise((resolve, reject) => {
    const s = connect({ host: '127.0.0.1', port, rejectUnauthorized: false, servername: 'localhost' }, () => {
      const c = s.getPeerCertificate(true);
      const issuer = c.issuerCertificate && c.issuerCertificate !== c ? c.issuerCertificate.fingerprint256 : '';
      resolve({ server: c.fingerprint256, issuer });
      s.end();
    });
    s.on('error', reject);
  });
}

/** One HTTPS request on a new connection; JSON answer. */
function https(
  port: number,
  method: string,
  path: string,
  token: string,
  body?: unknown,
): Promise<{ status: number; json: unknown }> {
  return new Promise((resolve, reject) => {
    const data = body === undefined ? undefined : JSON.stringify(body);
    const req = request(
      {
        host: '127.0.0.1',
        port,
        method,
        path: `/api/v2${path}`,
        rejectUnauthorized: false,
        agent: false,
        headers: {
          token,
          'content-type': 'application/json',
          ...(data ? { 'content-length': Buffer.byteLength(data) } : {}),
        },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (text += c));
        res.on('end', () => {
          const json: unknown = text === '' ? undefined : JSON.parse(text);
          resolve({ status: res.statusCode ?? 0, json });
        });
      },
    );
    req.on('error', reject);
    req.end(data);
  });
}

/** A TLS connection kept open: HTTP/1.1 keep-alive requests on the same socket. */
class OpenConnection {
  private buf = '';
  private waiter: (() => void) | undefined;
  readonly socket: TLSSocket;
  readonly ready: Promise<void>;
  constructor(
    port: number,
    private readonly token: string,
  ) {
    this.socket = connect({ host: '127.0.0.1', port, rejectUnauthorized: false });
    this.ready = new Promise((r, j) => {
      this.socket.once('secureConnect', () => r());
      this.socket.once('error', j);
    });
    this.socket.setEncoding('utf8');
    this.socket.on('data', (c: string) => {
      this.buf += c;
      this.waiter?.();
    });
  }
  /** GET /certificate on this connection; answers the status line. */
  async get(): Promise<string> {
    await this.ready;
    this.buf = '';
    this.socket.write(`GET /api/v2/certificate HTTP/1.1\r\nHost: localhost\r\ntoken: ${this.token}\r\n\r\n`);
    await new Promise<void>((resolve, reject) => {
      const done = () => {
        const head = this.buf.indexOf('\r\n\r\n');
        const len = /content-length: (\d+)/i.exec(this.buf);
        if (head >= 0 && len && Buffer.byteLength(this.buf.slice(head + 4)) >= Number(len[1])) {
          this.waiter = undefined;
          resolve();
        }
      };
      this.waiter = done;
      this.socket.once('close', () => reject(new Error('the open connection was closed')));
      done();
    });
    return this.buf.split('\r\n')[0];
  }
  served(): string {
    return this.socket.getPeerCertificate().fingerprint256;
  }
}

function tlsConfig(paths: Record<string, string>): NonNullable<HostConfig['tls']> {
  return {
    cert: paths[PIECE_PATH_KEY.server],
    key: paths[PIECE_PATH_KEY.private_key],
    chain: paths[PIECE_PATH_KEY.intermediate],
  };
}

function seed(paths: Record<string, string>, c: Chain): void {
  for (const p of PIECES) {
    const f = paths[PIECE_PATH_KEY[p as Piece]];
    mkdirSync(dirname(f), { recursive: true });
    writeFileSync(f, c[p], { mode: p === 'private_key' ? 0o600 : 0o644 });
  }
}

let pki: Pki;
beforeAll(() => {
  pki = makePki(privateDir('certificate-pki'));
});

describe('HTTPS from the piece files, in process', () => {
  let s: Serving;
  let token: string;
  let open: OpenConnection;
  const waitRolledBack = () =>
    new Promise<void>((resolve) => {
      const seen = (s.host.db.prepare('SELECT COALESCE(MAX(seq), 0) AS n FROM events').get() as { n: number }).n;
      s.host.events.onEvent(() => {
        if (s.host.db.prepare("SELECT 1 FROM events WHERE kind = 'certificate.tls.rolled_back' AND seq > ?").get(seen))
          resolve();
      });
    });

  beforeAll(async () => {
    const { config } = makeTestConfig();
    config.tls = tlsConfig(config.paths);
    config.settings = { certificate: { commitWindowSeconds: 1 } };
    seed(config.paths, pki.a);
    s = await serve({ config, distDir, signals: false, accessLog: false, log: () => undefined });
    token = (await createToken(s.host.db, 'admin', ['*'])).token;
    open = new OpenConnection(s.server.port, token);
    expect(await open.get()).toBe('HTTP/1.1 200 OK');
  });
  afterAll(async () => {
    open?.socket.destroy();
    await s?.stop();
  });

  it('serves the server certificate followed by the intermediate', async () => {
    expect(s.server.url).toMatch(/^https:/);
    expect(await servedChain(s.server.port)).toEqual({ server: fp(pki.a.server), issuer: fp(pki.a.intermediate) });
  });

  it('ingest → new connections get the new chain; no commit → the old one comes back; the open connection lives on', async () => {
    const rolled = waitRolledBack();
    const sent = Date.now();
    const r = await https(s.server.port, 'POST', '/certificate/ingest', token, { pieces: pki.b });
    expect(r).toMatchObject({ status: 200, json: { confirmationTimeout: 1 } });
    expect(await servedChain(s.server.port)).toEqual({ server: fp(pki.b.server), issuer: fp(pki.b.intermediate) });
    expect(await open.get()).toBe('HTTP/1.1 200 OK');
    await rolled;
    // the window is the whole second, counted from the ingest (a tenth of it would pass the rest)
    expect(Date.now() - sent).toBeGreaterThanOrEqual(1000);
    expect(await servedChain(s.server.port)).toEqual({ server: fp(pki.a.server), issuer: fp(pki.a.intermediate) });
    expect(await open.get()).toBe('HTTP/1.1 200 OK');
    expect(open.served()).toBe(fp(pki.a.server));
  });

  it('ingest + commit → the new chain stays past the window', async () => {
    expect((await https(s.server.port, 'POST', '/certificate/ingest', token, { pieces: pki.b })).status).toBe(200);
    expect(await https(s.server.port, 'POST', '/certificate/commit', token, {})).toEqual({ status: 200, json: {} });
    expect(await open.get()).toBe('HTTP/1.1 200 OK');
    // No fixed wait for "no rollback": a second ingest of the same pieces is left to run out, and
    // its rollback (awaited as an event, one window later than the committed one's would have
    // come) restores what the commit kept: chain b. Had the commit not held, chain a would be back.
    const rolled = waitRolledBack();
    expect((await https(s.server.port, 'POST', '/certificate/ingest', token, { pieces: pki.b })).status).toBe(200);
    await rolled;
    expect(await servedChain(s.server.port)).toEqual({ server: fp(pki.b.server), issuer: fp(pki.b.intermediate) });
    expect(
      s.host.db.prepare("SELECT COUNT(*) AS n FROM events WHERE kind = 'certificate.tls.rolled_back'").get(),
    ).toEqual({
      n: 2,
    });
    expect(await open.get()).toBe('HTTP/1.1 200 OK');
  });

  it('without an intermediate only the server certificate is sent', async () => {
    expect(
      (await https(s.server.port, 'POST', '/certificate/ingest', token, { pieces: { intermediate: '', root: '' } }))
        .status,
    ).toBe(200);
    expect(await servedChain(s.server.port)).toEqual({ server: fp(pki.b.server), issuer: '' });
    expect((await https(s.server.port, 'POST', '/certificate/commit', token, {})).status).toBe(200);
    expect(
      (
        await https(s.server.port, 'POST', '/certificate/ingest', token, {
          pieces: { intermediate: pki.b.intermediate, root: pki.b.root },
        })
      ).status,
    ).toBe(200);
    expect((await https(s.server.port, 'POST', '/certificate/commit', token, {})).status).toBe(200);
    expect(await servedChain(s.server.port)).toEqual({ server: fp(pki.b.server), issuer: fp(pki.b.intermediate) });
  });

  it('an ingest TLS would refuse is a 400 and HTTPS keeps serving what it served', async () => {
    const r = await https(s.server.port, 'POST', '/certificate/ingest', token, {
      pieces: { private_key: pki.otherKey },
    });
    expect(r.status).toBe(400);
    expect(await servedChain(s.server.port)).toEqual({ server: fp(pki.b.server), issuer: fp(pki.b.intermediate) });
  });
});

/** The built host in a child process, with its stdout/stderr collected. */
class Child {
  readonly proc: ChildProcess;
  out = '';
  private waiters: (() => void)[] = [];
  readonly exited: Promise<void>;
  constructor(configFile: string) {
    this.proc = spawn(process.execPath, [join(repo, 'dist/host/cli.mjs'), 'serve', '--config', configFile], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const take = (c: Buffer) => {
      this.out += c.toString('utf8');
      for (const w of this.waiters) w();
    };
    this.proc.stdout!.on('data', take);
    this.proc.stderr!.on('data', take);
    this.exited = new Promise((r) => this.proc.once('exit', () => r()));
  }
  /** Resolves with the first match of `re` in the output (waits for it to appear). */
  waitFor(re: RegExp, what: string, timeoutMs = 15_000): Promise<RegExpExecArray> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`child host: no ${what} within ${timeoutMs} ms; output:\n${this.out}`)),
        timeoutMs,
      );
      const check = () => {
        const m = re.exec(this.out);
        if (m) {
          clearTimeout(timer);
          this.waiters = this.waiters.filter((w) => w !== check);
          resolve(m);
        }
      };
      this.waiters.push(check);
      check();
    });
  }
  async port(): Promise<number> {
    return Number((await this.waitFor(/listening on https:\/\/127\.0\.0\.1:(\d+)\/api\/v2/, 'listening line'))[1]);
  }
  async kill9(): Promise<void> {
    if (this.proc.pid) process.kill(this.proc.pid, 'SIGKILL');
    await this.exited;
  }
}

describe('the built host killed with SIGKILL in the commit window', () => {
  let configFile: string;
  let stateDir: string;
  let children: Child[] = [];
  let token: string;
  const start = () => {
    const c = new Child(configFile);
    children.push(c);
    return c;
  };

  beforeAll(() => {
    if (!existsSync(join(repo, 'dist/host/cli.mjs')))
      throw new Error('dist/host/cli.mjs is missing: run `node build.mjs` first');
    const state = (stateDir = privateDir('certificate-kill'));
    const root = join(state, 'root');
    const paths: Record<string, string> = {};
    for (const [k, p] of Object.entries(defaultConfig().paths)) paths[k] = join(root, p);
    for (const p of Object.values(paths)) mkdirSync(dirname(p), { recursive: true });
    for (const k of DIRECTORY_PATH_KEYS) mkdirSync(paths[k], { recursive: true });
    seed(paths, pki.a);
    configFile = join(state, 'config.yaml');
    writeFileSync(
      configFile,
      stringify({
        listen: { host: '127.0.0.1', port: 0 },
        stateDir: state,
        paths,
        tls: tlsConfig(paths),
        system: { mode: 'replay', fixtures: [] },
        settings: { certificate: { commitWindowSeconds: 6 } },
      }),
    );
  });
  afterAll(async () => {
    for (const c of children) if (c.proc.exitCode === null && c.proc.signalCode === null) await c.kill9();
    children = [];
  });

  it('restarted within the window: rolls back on time', async () => {
    const first = start();
    token = (await first.waitFor(/shown only this once:\n {2}(blt_\S+)\n/, 'admin token'))[1];
    const port1 = await first.port();
    expect(await servedChain(port1)).toEqual({ server: fp(pki.a.server), issuer: fp(pki.a.intermediate) });
    expect((await https(port1, 'POST', '/certificate/ingest', token, { pieces: pki.b })).status).toBe(200);
    expect((await servedChain(port1)).server).toBe(fp(pki.b.server));
    await first.kill9();

    const second = start();
    const port2 = await second.port();
    expect(second.out).toMatch(/certificate: a commit is due by /);
    expect((await servedChain(port2)).server).toBe(fp(pki.b.server));
    await second.waitFor(
      /certificate: previous TLS certificate restored \(no commit within the commit window\)/,
      'rollback log line',
    );
    expect(await servedChain(port2)).toEqual({ server: fp(pki.a.server), issuer: fp(pki.a.intermediate) });
    expect((await https(port2, 'POST', '/certificate/commit', token, {})).status).toBe(409);
    await second.kill9();
  });

  it('restarted after the deadline: rolls back at start, before serving', async () => {
    const third = start();
    const port3 = await third.port();
    const sent = Date.now();
    const r = await https(port3, 'POST', '/certificate/ingest', token, { pieces: pki.b });
    expect(r.status).toBe(200);
    const answered = Date.now();
    await third.kill9();
    // stay down past the deadline the host wrote down (its journal), not a guess of it: a bounded
    // poll of the clock against that value
    const { deadline } = JSON.parse(readFileSync(join(stateDir, 'certificate/journal.json'), 'utf8')) as {
      deadline: number;
    };
    expect(deadline).toBeGreaterThanOrEqual(sent + 6000);
    expect(deadline).toBeLessThanOrEqual(answered + 6000);
    const end = Date.now() + 10_000;
    while (Date.now() <= deadline) {
      if (Date.now() > end) throw new Error(`the commit deadline ${deadline} did not pass within 10 s`);
      await new Promise((res) => setTimeout(res, 20));
    }
    const fourth = start();
    const port4 = await fourth.port();
    expect(fourth.out).toMatch(
      /certificate: previous TLS certificate restored \(the commit window ran out while the host was down\)/,
    );
    expect(await servedChain(port4)).toEqual({ server: fp(pki.a.server), issuer: fp(pki.a.intermediate) });
    await fourth.kill9();
  });
});
