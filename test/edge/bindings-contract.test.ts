/**
 * The binding protocol (docs/bindings-protocol.md) as a contract: the same cases run against the
 * in-process transport (the host's BindingServer fetch functions, what an embedder in the same
 * process uses), the socket transport (stateDir/bindings.sock with the per-start secret, what
 * workerd's Fetchers use) and the socket's operations as the Deno entry's calls on the hop
 * connection run them (`answer`; the hop's framing of them: isolate-forward-framed.test.ts),
 * through the routes' own clients (SystemClient, the D1 over fetch, the events producer) and
 * through raw binding requests. Then what only the socket has: the secret, the socket file's
 * mode, keep-alive, stale sockets.
 */
import http from 'node:http';
import net from 'node:net';
import { spawnSync } from 'node:child_process';
import { lstatSync, mkdirSync, writeFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  bindingRpc,
  BindingError,
  database,
  events,
  type BindingPost,
  type Env,
  type Fetcher,
} from '../../handlers/core/bindings';
import { system } from '../../handlers/core/system';
import { ApiError } from '../../handlers/core/errors';
import { BINDING_SECRET_HEADER, startBindingSocket, type BindingSocket } from '../../runtime/bindings/socket';
import { bindingSocketPath } from '../../runtime/isolate/index';
import { fixture, makeTestHost, type TestHost } from '../helpers/host';
import { privateDir } from '../helpers/tmp';

let t: TestHost;
let socket: BindingSocket;
const logged: string[] = [];

beforeAll(async () => {
  t = await makeTestHost({
    fixtures: [
      fixture(['/usr/bin/klist'], 'Ticket cache: FILE:/tmp/krb5cc_0\n'),
      fixture(['/bin/false'], '', { code: 1, stderr: 'no\n' }),
    ],
  });
  socket = await startBindingSocket({
    bindings: t.host.bindings,
    path: bindingSocketPath(t.config),
    log: (l) => logged.push(l),
  });
});
afterAll(async () => {
  await socket?.close();
  await t?.close();
});

/** A Fetcher over the Unix socket, keep-alive, with a given secret (undefined: none). */
function socketFetcher(
  path: string,
  secret: string | undefined,
  agent = new http.Agent({ keepAlive: true }),
): Fetcher & { agent: http.Agent } {
  return {
    agent,
    fetch: async (input, init) => {
      const req = new Request(input, init);
      const body = req.method === 'GET' || req.method === 'HEAD' ? undefined : Buffer.from(await req.arrayBuffer());
      const headers: Record<string, string> = {};
      req.headers.forEach((v, k) => (headers[k] = v));
      if (secret !== undefined) headers[BINDING_SECRET_HEADER] = secret;
      if (body) headers['content-length'] = String(body.length);
      const u = new URL(req.url);
      return new Promise<Response>((done, fail) => {
        const r = http.request({ socketPath: path, agent, method: req.method, path: u.pathname, headers }, (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () =>
            done(
              new Response(Buffer.concat(chunks), {
                status: res.statusCode ?? 0,
                headers: { 'content-type': String(res.headers['content-type']) },
              }),
            ),
          );
        });
        r.on('error', fail);
        r.end(body);
      });
    },
  };
}

/** The in-process transport: the same fetch functions the socket serves, called directly. */
function inProcessFetcher(): Fetcher {
  return {
    fetch: (input, init) => {
      const req = new Request(input, init);
      const path = new URL(req.url).pathname;
      const b = t.host.bindings;
      return path.startsWith('/system/')
        ? b.fetchSystem(req)
        : path.startsWith('/db/')
          ? b.fetchDb(req)
          : b.fetchEvents(req);
    },
  };
}

/**
 * The socket's operations as the Deno entry reaches them (env.BINDING_POST, its calls on the hop
 * connection, which the host runs with the socket's `answer`: text in,
 * status and text out); its Fetchers throw, so every call in these cases must go through the post.
 */
function hopCallPost(): { f: Fetcher; post: BindingPost } {
  const post: BindingPost = (path, body, requestId) => socket.answer(path, body, requestId);
  const f: Fetcher = {
    fetch: () => Promise.reject(new Error('the Fetcher was used although BINDING_POST was given')),
  };
  return { f, post };
}

const transports: [string, () => { f: Fetcher; post?: BindingPost }][] = [
  ['in-process', () => ({ f: inProcessFetcher() })],
  ['socket', () => ({ f: socketFetcher(socket.path, socket.secret) })],
  ['hop-call', hopCallPost],
];

function envOf(f: Fetcher, post?: BindingPost): Env {
  return { SYSTEM: f, DB_FETCH: f, EVENTS_FETCH: f, BINDING_POST: post, VARS: t.host.vars };
}

async function refusal(p: Promise<unknown>): Promise<BindingError> {
  const e = await p.then(
    () => undefined,
    (x: unknown) => x,
  );
  expect(e).toBeInstanceOf(BindingError);
  return e as BindingError;
}

describe.each(transports)('binding contract over the %s transport', (name, make) => {
  let env: Env;
  let f: Fetcher;
  let post: BindingPost | undefined;
  beforeAll(() => {
    ({ f, post } = make());
    env = envOf(f, post);
    mkdirSync(t.config.paths.krb5ConfD, { recursive: true });
  });

  it('system/exec runs the command and answers its result; the call is audited with the request id', async () => {
    const r = await system(env, `contract-${name}-1`).exec(['/usr/bin/klist']);
    expect(r).toMatchObject({ code: 0, stdout: 'Ticket cache: FILE:/tmp/krb5cc_0\n', stderr: '', timedOut: false });
    const row = t.host.db
      .prepare('SELECT kind, argv, exit_code FROM audit_log WHERE request_id = ?')
      .get(`contract-${name}-1`);
    expect(row).toEqual({ kind: 'exec', argv: '["/usr/bin/klist"]', exit_code: 0 });
    const failed = await system(env).exec(['/bin/false']);
    expect(failed).toMatchObject({ code: 1, stderr: 'no\n' });
  });

  it('system/exec with a bad argv: 400 bad_request', async () => {
    const e = await refusal(bindingRpc(f, 'system/exec', { argv: [] }, undefined, post));
    expect([e.status, e.code, e.message]).toEqual([
      400,
      'bad_request',
      'argv must be a non-empty list of strings without NUL',
    ]);
    // through SystemClient the same refusal is the route's 400
    await expect(system(env).exec(['a\0b'])).rejects.toBeInstanceOf(ApiError);
  });

  it('an unknown system operation: 404 not_found', async () => {
    const e = await refusal(bindingRpc(f, 'system/no/such-op', {}, undefined, post));
    expect([e.status, e.code, e.message]).toEqual([404, 'not_found', 'unknown system operation no/such-op']);
  });

  it('file/write, file/read, file/stat, file/list, file/remove inside a configured path', async () => {
    const s = system(env);
    const file = join(t.config.paths.krb5ConfD, `${name}.conf`);
    const w = await s.writeFile(file, `[realms]\n# ${name}\n`, { mode: 0o640 });
    expect(w).toMatchObject({ path: file });
    expect(await s.readFile(file)).toBe(`[realms]\n# ${name}\n`);
    expect(((await s.stat(file))?.mode ?? 0) & 0o7777).toBe(0o640);
    expect((await s.listDir(t.config.paths.krb5ConfD))?.map((e) => e.name)).toContain(`${name}.conf`);
    expect(await s.removeFile(file)).toMatchObject({ removed: true });
    expect(await s.readFile(file)).toBeNull();
  });

  it('file/read outside every configured path: 403 forbidden', async () => {
    const e = await refusal(bindingRpc(f, 'system/file/read', { path: '/etc/shadow' }, undefined, post));
    expect([e.status, e.code]).toEqual([403, 'forbidden']);
  });

  it('db/run, db/first, db/all, db/raw, db/batch, db/exec answer as D1 does', async () => {
    const db = database(env);
    await db.exec(`CREATE TABLE IF NOT EXISTS contract_${name.replace('-', '_')} (id INTEGER PRIMARY KEY, v TEXT)`);
    const table = `contract_${name.replace('-', '_')}`;
    const ins = await db.prepare(`INSERT INTO ${table} (v) VALUES (?)`).bind('a').run();
    expect(ins.success).toBe(true);
    expect(ins.meta).toMatchObject({ changes: 1, last_row_id: 1 });
    expect(await db.prepare(`SELECT v FROM ${table} WHERE id = ?`).bind(1).first()).toEqual({ v: 'a' });
    expect(await db.prepare(`SELECT v FROM ${table} WHERE id = ?`).bind(1).first('v')).toBe('a');
    expect(await db.prepare(`SELECT v FROM ${table} WHERE id = ?`).bind(99).first()).toBeNull();
    const batch = await db.batch([
      db.prepare(`INSERT INTO ${table} (v) VALUES (?)`).bind('b'),
      db.prepare(`INSERT INTO ${table} (v) VALUES (?)`).bind('c'),
    ]);
    expect(batch.map((r) => r.meta.changes)).toEqual([1, 1]);
    const all = await db.prepare(`SELECT id, v FROM ${table} ORDER BY id`).all();
    expect(all.results).toEqual([
      { id: 1, v: 'a' },
      { id: 2, v: 'b' },
      { id: 3, v: 'c' },
    ]);
    expect(await db.prepare(`SELECT id, v FROM ${table} ORDER BY id LIMIT 1`).raw()).toEqual([[1, 'a']]);
  });

  it('a failing statement: 500 internal naming the op and SQLite message', async () => {
    const e = await refusal(
      bindingRpc(f, 'db/all', { sql: 'SELECT * FROM no_such_table', params: [] }, undefined, post),
    );
    expect([e.status, e.code, e.message]).toEqual([500, 'internal', 'db all failed: no such table: no_such_table']);
    const u = await refusal(bindingRpc(f, 'db/nope', { sql: 'SELECT 1' }, undefined, post));
    expect([u.status, u.code]).toEqual([404, 'not_found']);
  });

  it('events/send records the event with its request id', async () => {
    await events(env, `contract-${name}-ev`).send({ kind: 'kerberos.conf.updated', data: { via: name } });
    const row = t.host.db.prepare('SELECT kind, data FROM events WHERE request_id = ?').get(`contract-${name}-ev`);
    expect(row).toEqual({ kind: 'kerberos.conf.updated', data: JSON.stringify({ via: name }) });
  });
});

describe('binding socket: what only the socket transport has', () => {
  const raw = (
    headers: Record<string, string>,
    method = 'POST',
    path = '/db/first',
    body = '{"sql":"SELECT 1 AS one"}',
  ) =>
    new Promise<{ status: number; body: string }>((done, fail) => {
      const r = http.request({ socketPath: socket.path, method, path, headers }, (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (text += c));
        res.on('end', () => done({ status: res.statusCode ?? 0, body: text }));
      });
      r.on('error', fail);
      r.end(method === 'POST' ? body : undefined);
    });

  it('the socket is stateDir/bindings.sock, a socket of mode 0600', () => {
    expect(socket.path).toBe(join(t.config.stateDir, 'bindings.sock'));
    const st = lstatSync(socket.path);
    expect(st.isSocket()).toBe(true);
    expect(st.mode & 0o777).toBe(0o600);
  });

  it('the secret is 32 random bytes, new at every start', async () => {
    expect(socket.secret).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const dir = privateDir('edge-secret');
    const other = await startBindingSocket({ bindings: t.host.bindings, path: join(dir, 'b.sock') });
    expect(other.secret).not.toBe(socket.secret);
    await other.close();
  });

  it('no secret or a wrong one: 401 JSON, and the secret never appears in the log', async () => {
    logged.length = 0;
    expect(await raw({})).toEqual({
      status: 401,
      body: '{"error":{"code":"unauthorized","message":"missing or wrong binding secret"}}',
    });
    const wrong = await raw({ [BINDING_SECRET_HEADER]: `${socket.secret.slice(0, -1)}x` });
    expect(wrong.status).toBe(401);
    expect((await raw({ [BINDING_SECRET_HEADER]: socket.secret.slice(0, 10) })).status).toBe(401);
    expect(await raw({ [BINDING_SECRET_HEADER]: socket.secret })).toEqual({ status: 200, body: '{"one":1}' });
    expect(logged.join('\n')).not.toContain(socket.secret);
  });

  it('GET: 405; an unknown binding: 404', async () => {
    expect((await raw({ [BINDING_SECRET_HEADER]: socket.secret }, 'GET')).status).toBe(405);
    const r = await raw({ [BINDING_SECRET_HEADER]: socket.secret }, 'POST', '/kv/get', '{}');
    expect(r).toEqual({
      status: 404,
      body: '{"error":{"code":"not_found","message":"unknown binding operation /kv/get"}}',
    });
  });

  it('keeps connections alive: a second request reuses the first connection', async () => {
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    const sockets = new Set<net.Socket>();
    agent.on('free', (s: net.Socket) => sockets.add(s));
    const f = socketFetcher(socket.path, socket.secret, agent);
    for (let i = 0; i < 3; i++) expect(await database(envOf(f)).prepare('SELECT ? AS n').bind(i).first('n')).toBe(i);
    expect(sockets.size).toBe(1);
    agent.destroy();
  });

  it('a stale socket is replaced at start, a live one or a non-socket file refused; close removes it', async () => {
    const dir = privateDir('edge-stale');
    const path = join(dir, 'bindings.sock');
    // a host killed with -9 leaves its socket file behind: a process that listens, then dies so
    const r = spawnSync(process.execPath, [
      '-e',
      `require('net').createServer().listen(${JSON.stringify(path)}, () => process.kill(process.pid, 'SIGKILL'))`,
    ]);
    expect(r.signal).toBe('SIGKILL');
    expect(lstatSync(path).isSocket()).toBe(true);
    const replaced = await startBindingSocket({ bindings: t.host.bindings, path });
    expect(lstatSync(path).mode & 0o777).toBe(0o600);
    // while it serves, a second host on the same path is refused
    await expect(startBindingSocket({ bindings: t.host.bindings, path })).rejects.toThrow(
      /another process is serving the bindings/,
    );
    await replaced.close();
    expect(existsSync(path)).toBe(false);
    // a regular file on the path: refused, left alone
    writeFileSync(path, 'not a socket');
    await expect(startBindingSocket({ bindings: t.host.bindings, path })).rejects.toThrow(/is not a socket/);
    expect(lstatSync(path).isFile()).toBe(true);
  });
});

describe('BINDING_POST answers as the fetch protocol does', () => {
  const unused: Fetcher = { fetch: () => Promise.reject(new Error('the Fetcher was used')) };
  const answering =
    (status: number, body: string): BindingPost =>
    () =>
      Promise.resolve({ status, body });

  it('a 2xx answer is its JSON, an empty one null; the path is /<op> with the JSON payload and the request id', async () => {
    const seen: unknown[] = [];
    const post: BindingPost = (path, body, requestId) => {
      seen.push([path, body, requestId]);
      return Promise.resolve({ status: 200, body: '{"n":1}' });
    };
    expect(await bindingRpc(unused, 'db/first', { sql: 'SELECT 1' }, 'rid-1', post)).toEqual({ n: 1 });
    expect(seen).toEqual([['/db/first', '{"sql":"SELECT 1"}', 'rid-1']]);
    expect(await bindingRpc(unused, 'db/run', {}, undefined, answering(299, ''))).toBeNull();
  });

  it('over a Fetcher: POST <origin>/<op>, JSON with its content type, and the request id', async () => {
    const seen: Request[] = [];
    const f: Fetcher = {
      fetch: (input, init) => {
        seen.push(new Request(input, init));
        return Promise.resolve(new Response('{"n":2}', { status: 200 }));
      },
    };
    expect(await bindingRpc(f, 'db/all', { sql: 'SELECT 2' }, 'rid-2')).toEqual({ n: 2 });
    const [r] = seen;
    expect([r.method, r.url, r.headers.get('content-type'), r.headers.get('x-request-id')]).toEqual([
      'POST',
      'http://binding.internal/db/all',
      'application/json',
      'rid-2',
    ]);
    expect(await r.text()).toBe('{"sql":"SELECT 2"}');
  });

  it('outside 200-299 a refusal: its status, code and message (or the status alone)', async () => {
    const e = await refusal(
      bindingRpc(unused, 'db/all', {}, undefined, answering(300, '{"error":{"code":"x_y","message":"no"}}')),
    );
    expect([e.op, e.status, e.code, e.message]).toEqual(['db/all', 300, 'x_y', 'no']);
    const low = await refusal(bindingRpc(unused, 'db/all', {}, undefined, answering(199, '{}')));
    expect([low.status, low.code, low.message]).toEqual([199, 'binding_error', 'status 199']);
  });

  it('an answer that is not JSON names the op and the status', async () => {
    await expect(bindingRpc(unused, 'system/exec', {}, undefined, answering(502, 'Bad Gateway'))).rejects.toThrow(
      'binding system/exec: non-JSON answer (status 502)',
    );
  });
});
