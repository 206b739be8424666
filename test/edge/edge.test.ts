import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { existsSync, mkdirSync, writeFileSync, readFileSync, readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { startIsolated, type Isolated } from '../../runtime/isolate';
import { makeTestHost, distDir, type TestHost } from '../helpers/host';
import { serve, type Serving } from '../../runtime/serve';
import { createToken } from '../../runtime/tokens';
import { makeTestConfig } from '../helpers/host';
import { jsonOf } from '../helpers/answers';
import type { Krb5Conf, Krb5Section } from '../../handlers/kerberos/schemas';

/**
 * The built bundles run unchanged in workerd (through Miniflare), with SYSTEM/DB/EVENTS served by
 * the Node process, and must answer exactly as the in-process host does.
 */
const KRB5 = 'includedir /etc/krb5.conf.d\n\n[realms]\n\tEXAMPLE.TEST = {\n\t\tkdc = kdc1\n\t\tkdc = kdc2\n\t}\n';
const manifest = JSON.parse(readFileSync(join(distDir, 'manifest.json'), 'utf8')).routes as {
  method: string;
  path: string;
  bundle: string;
}[];

let t: TestHost;
let iso: Isolated;
let reader: string;

beforeAll(async () => {
  t = await makeTestHost();
  mkdirSync(dirname(t.config.paths.krb5Conf), { recursive: true });
  writeFileSync(t.config.paths.krb5Conf, KRB5);
  writeFileSync(join(t.config.paths.sbin, 'mkfs.ext4'), '');
  reader = await t.token(['fs:read']);
  iso = await startIsolated(t.host, distDir);
}, 60_000);
afterAll(async () => {
  await iso?.close();
  await t?.close();
});

const normalise = (h: Headers) => {
  const o: Record<string, string> = {};
  h.forEach((v, k) => {
    if (k !== 'x-request-id' && k !== 'date' && k !== 'content-length') o[k] = v;
  });
  return o;
};

async function both(method: string, path: string, token: string | null, body?: string) {
  const mk = () => {
    const headers: Record<string, string> = { 'x-request-id': 'edge-test-0001' };
    if (token) headers.token = token;
    return new Request(`http://ballast.local${path}`, { method, headers, body });
  };
  const a = await t.host.app.fetch(mk(), t.host.env);
  const b = await iso.fetch(mk());
  return {
    node: { status: a.status, headers: normalise(a.headers), body: await a.text() },
    edge: { status: b.status, headers: normalise(b.headers), body: await b.text() },
  };
}

describe('edge tier: bundles in workerd', () => {
  it('every built route bundle is plain ESM with no node: import', () => {
    for (const m of manifest) {
      const code = readFileSync(join(distDir, m.bundle), 'utf8');
      expect(code).not.toMatch(/from\s*["']node:|import\(["']node:|require\(/);
    }
    const chunks = existsSync(join(distDir, 'routes/chunks')) ? readdirSync(join(distDir, 'routes/chunks')) : [];
    for (const f of chunks.filter((f) => f.endsWith('.mjs'))) {
      expect(readFileSync(join(distDir, 'routes/chunks', f), 'utf8')).not.toMatch(/from\s*["']node:/);
    }
  });

  const cases: [string, string, 'admin' | 'reader' | null, string?][] = [
    ['GET', '/api/v2/kerberos/conf', 'admin'],
    ['GET', '/api/v2/kerberos/conf', null],
    ['GET', '/api/v2/kerberos/conf', 'reader'],
    ['HEAD', '/api/v2/kerberos/conf', 'admin'],
    ['OPTIONS', '/api/v2/kerberos/conf', null],
    ['POST', '/api/v2/kerberos/conf', 'admin', '{}'],
    ['GET', '/api/v2/does/not/exist', 'admin'],
    ['GET', '/api/v2/fs/available_fs', 'reader'],
  ];
  for (const [method, path, who, body] of cases) {
    it(`${method} ${path} as ${who ?? 'nobody'} answers identically`, async () => {
      const tok = who === 'admin' ? t.adminToken : who === 'reader' ? reader : null;
      const { node, edge } = await both(method, path, tok, body);
      expect(edge).toEqual(node);
    });
  }

  it('the DB binding works across the process boundary (token use is recorded)', async () => {
    t.host.db.prepare('UPDATE api_tokens SET last_used_at = NULL').run();
    const r = await iso.fetch(
      new Request('http://ballast.local/api/v2/kerberos/conf', { headers: { token: t.adminToken } }),
    );
    expect(r.status).toBe(200);
    const row = t.host.db.prepare("SELECT last_used_at FROM api_tokens WHERE name = 'admin'").get() as {
      last_used_at: number | null;
    };
    expect(row.last_used_at).not.toBeNull();
  });
});

describe('isolation mode (--isolate) over HTTP', () => {
  let s: Serving;
  beforeAll(async () => {
    const { config } = makeTestConfig({ isolate: true });
    mkdirSync(dirname(config.paths.krb5Conf), { recursive: true });
    writeFileSync(config.paths.krb5Conf, KRB5);
    s = await serve({ config, distDir, signals: false, accessLog: false, log: () => undefined });
  }, 60_000);
  afterAll(() => s?.stop());

  it('answers through workerd with the same body as in-process', async () => {
    const token = (await createToken(s.host.db, 'a', ['*'])).token;
    const r = await fetch(`${s.server.url}/api/v2/kerberos/conf`, { headers: { token } });
    expect(r.status).toBe(200);
    expect(r.headers.get('x-powered-by')).toBe('Ballast');
    const body = await jsonOf<{ raw: string; json: Krb5Conf }>(r);
    expect((body.json.sections.realms['EXAMPLE.TEST'] as Krb5Section).kdc).toEqual(['kdc1', 'kdc2']);
    expect((await fetch(`${s.server.url}/api/v2/kerberos/conf`)).status).toBe(401);
  });
});

describe('edge tier: the Kerberos routes answer identically', () => {
  beforeAll(async () => {
    // Imported here so that this block only appends to the shared file.
    const { readFixture } = await import('../../runtime/system/fixture-file');
    const klist = (rel: string, argv: string[]) => ({
      ...readFixture(join(distDir, '..', 'fixtures', rel)),
      argv,
      scenario: undefined,
    });
    // Replayed klist captures for the argv the routes run with this host's paths, and a realm file.
    t.replay!.load([
      klist('klist/local-tgt.yaml', ['/usr/bin/klist']),
      klist('klist/local-keytab-k-t-e.yaml', ['/usr/bin/klist', '-k', '-t', '-e', '--', t.config.paths.keytab]),
    ]);
    mkdirSync(t.config.paths.krb5ConfD, { recursive: true });
    writeFileSync(
      join(t.config.paths.krb5ConfD, 'lab.conf'),
      '[realms]\n\tLAB.TEST = {\n\t\tkdc = kdc.lab.test\n\t}\n',
    );
  });

  const kerberosCases: [string, string, 'admin' | 'reader', number, string?][] = [
    ['GET', '/api/v2/kerberos/ticket/list', 'admin', 200],
    ['GET', '/api/v2/kerberos/realm', 'admin', 200],
    ['GET', '/api/v2/kerberos/realm/lab/details', 'admin', 200],
    ['GET', '/api/v2/kerberos/realm/nope/details', 'admin', 404],
    ['GET', '/api/v2/kerberos/realm/..%2Fkrb5/details', 'admin', 400],
    ['POST', '/api/v2/kerberos/key/list', 'admin', 200, '{}'],
    ['POST', '/api/v2/kerberos/key/list', 'admin', 400, '{"path":"relative.keytab"}'],
    ['POST', '/api/v2/kerberos/ticket/obtain', 'reader', 403, '{"username":"alice","password":"pw"}'],
  ];
  for (const [method, path, who, status, body] of kerberosCases) {
    it(`${method} ${path} as ${who} answers ${status} identically`, async () => {
      const { node, edge } = await both(method, path, who === 'admin' ? t.adminToken : reader, body);
      expect(node.status, node.body).toBe(status);
      expect(edge).toEqual(node);
    });
  }
});
