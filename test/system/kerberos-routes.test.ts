/**
 * System tier: the Kerberos routes over real HTTP (runtime/serve.ts, the built bundles), with the
 * live back end running MIT kinit/klist/kdestroy against a throwaway KDC on loopback
 * (helpers/kdc.ts). The product is configured like a box, but with every path in a private root:
 *   - KRB5_CONFIG is the product's own paths.krb5Conf, set by the routes themselves (system.env
 *     names other files on purpose: the routes' values win), which the test writes
 *     through POST /kerberos/conf/update; its realm comes from a realm file written through
 *     POST /kerberos/realm/create. So MIT reads exactly what the API wrote, includedir and all.
 *   - the ticket cache is paths.krb5Ccache (FILE:, through KRB5CCNAME), the default keytab
 *     paths.keytab. The machine's /etc/krb5.conf and its caches are never read or written.
 * A missing krb5kdc makes beforeAll throw: these tests fail, they never skip.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  readFileSync,
  readdirSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { dirname, join } from 'node:path';
import { createSocket, type Socket } from 'node:dgram';
import { createServer, type Server } from 'node:net';
import { makeTestConfig, distDir } from '../helpers/host';
import { serve, type Serving } from '../../runtime/serve';
import { createToken } from '../../runtime/tokens';
import { startKdc, type Kdc } from './helpers/kdc';
import { errorOf } from '../helpers/answers';
import type { RealmFile, keyListAnswer, ticketListAnswer, messageAnswer } from '../../handlers/kerberos/responses';
import type * as z from 'zod';

/** The Kerberos routes' answers (their response schemas in handlers/kerberos/requests.ts) */
type TicketList = z.infer<typeof ticketListAnswer>;
type KeyList = z.infer<typeof keyListAnswer>;
type Message = z.infer<typeof messageAnswer>;

const PASSWORD = 'Sys-t3st "pass" word';
const OLD_PASSWORD = 'expired-0ld-pw';
const KINIT_TIMEOUT_MS = 4000;

let kdc: Kdc;
let s: Serving;
let token: string;
let reader: string;
let paths: Record<string, string>;
let stateDir: string;
const logs: string[] = [];
let silentUdp: Socket;
let silentTcp: Server;
let silentPort: number;
const etcKrb5 = existsSync('/etc/krb5.conf')
  ? { text: readFileSync('/etc/krb5.conf', 'utf8'), mtimeMs: statSync('/etc/krb5.conf').mtimeMs }
  : null;

async function call<T = unknown>(method: string, path: string, body?: unknown, tok: string | null = token) {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (tok) headers.token = tok;
  const res = await fetch(`${s.server.url}/api/v2/kerberos${path}`, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, text, json: JSON.parse(text) as T };
}

/** A "KDC" that takes packets and connections and never answers: kinit waits until killed. */
async function startSilentKdc(): Promise<void> {
  silentTcp = createServer(() => undefined);
  await new Promise<void>((r) => silentTcp.listen(0, '127.0.0.1', r));
  const addr = silentTcp.address();
  silentPort = typeof addr === 'object' && addr ? addr.port : 0;
  silentUdp = createSocket('udp4');
  await new Promise<void>((r) => silentUdp.bind(silentPort, '127.0.0.1', r));
}

beforeAll(async () => {
  kdc = await startKdc({
    principals: [
      { name: 'alice', password: PASSWORD },
      { name: 'old', password: OLD_PASSWORD },
    ],
    keytabPrincipals: ['host/nas01.example.test', 'nfs/nas01.example.test'],
  });
  await kdc.kadmin('modprinc', '-pwexpire', '2020-01-01', 'old');
  await startSilentKdc();

  const { config, state } = makeTestConfig();
  stateDir = state;
  config.system.mode = 'live';
  // Only the Kerberos tools may run in this test.
  config.system.binaries = { kinit: kdc.bin.kinit, klist: kdc.bin.klist, kdestroy: kdc.bin.kdestroy };
  // system.env and envAllow say nothing useful: the routes set KRB5_CONFIG, KRB5CCNAME and
  // KRB5_KTNAME to the configured paths themselves and the kerberos area lets them through
  config.system.env = {
    KRB5_CONFIG: '/nonexistent/krb5.conf',
    KRB5CCNAME: 'FILE:/nonexistent/cc',
    KRB5_KTNAME: 'FILE:/nonexistent/keytab',
  };
  config.system.envAllow = [];
  config.settings = {
    kerberos: { kinitTimeoutMs: KINIT_TIMEOUT_MS, keytabRoots: [kdc.dir] },
    traffic: { reconcileOnStart: false },
  };
  paths = config.paths;
  // The cache lives in /tmp on a box (krb5cc_0, where root's other Kerberos clients look), and a
  // box has a /tmp; the private root needs one too, or kinit cannot store the ticket.
  mkdirSync(dirname(paths.krb5Ccache), { recursive: true });
  s = await serve({ config, distDir, signals: false, accessLog: false, log: (l) => logs.push(l) });
  token = (await createToken(s.host.db, 'admin', ['*'])).token;
  reader = (await createToken(s.host.db, 'reader', ['kerberos:read'])).token;
});

afterAll(async () => {
  await s?.stop();
  await kdc?.stop();
  silentUdp?.close();
  silentTcp?.close();
  if (stateDir) rmSync(stateDir, { recursive: true, force: true });
});

describe('configuration written through the API is what MIT reads', () => {
  it('conf/update writes the global file (includedir of the private realm directory)', async () => {
    const conf = [
      `includedir ${paths.krb5ConfD}`,
      '',
      '[libdefaults]',
      '\tdefault_realm = EXAMPLE.TEST',
      '\tdns_lookup_kdc = false',
      '\tdns_lookup_realm = false',
      '\tdns_canonicalize_hostname = false',
      '\trdns = false',
      '\tqualify_shortname = ""',
      '\tforwardable = true',
      '\trenew_lifetime = 7d',
      '',
    ].join('\n');
    const r = await call('POST', '/conf/update', { conf });
    expect(r.status, r.text).toBe(200);
    expect(readFileSync(paths.krb5Conf, 'utf8')).toBe(conf);
    const refused = await call('POST', '/conf/update', { conf: conf.split('\n').slice(1).join('\n') });
    expect(refused.status).toBe(400);
    expect(readFileSync(paths.krb5Conf, 'utf8')).toBe(conf);
  });

  it('realm/create renders the realm files (the KDC, an unreachable one, a silent one)', async () => {
    const realms: [string, string, string][] = [
      ['example-test', 'EXAMPLE.TEST', `127.0.0.1:${kdc.kdcPort}`],
      ['other', 'OTHER.TEST', '127.0.0.1:1'],
      ['silent', 'SILENT.TEST', `127.0.0.1:${silentPort}`],
    ];
    for (const [name, realm, at] of realms) {
      const r = await call('POST', '/realm/create', { name, conf: { realms: { [realm]: { kdc: [at] } } } });
      expect(r.status, r.text).toBe(200);
    }
    const list = await call<Record<string, RealmFile>>('GET', '/realm', undefined, reader);
    expect(Object.keys(list.json)).toEqual(['example-test.conf', 'other.conf', 'silent.conf']);
    expect(list.json['example-test.conf'].raw).toBe(
      `[realms]\n\tEXAMPLE.TEST = {\n\t\tkdc = 127.0.0.1:${kdc.kdcPort}\n\t}\n`,
    );
  });
});

describe('tickets and keys against the KDC', () => {
  it('obtain with username and password: kinit answers its prompt through the pty; the ticket is in the private cache', async () => {
    const r = await call('POST', '/ticket/obtain', { username: 'alice', password: PASSWORD });
    expect(r.status, r.text).toBe(200);
    expect(r.json).toEqual({ message: 'Kerberos ticket obtained for alice@EXAMPLE.TEST in realm EXAMPLE.TEST' });
    expect(statSync(paths.krb5Ccache).size).toBeGreaterThan(0);
  });

  it('ticket list shows it, raw and parsed', async () => {
    const before = Date.now();
    const r = await call<TicketList>('GET', '/ticket/list', undefined, reader);
    expect(r.status, r.text).toBe(200);
    expect(r.json.raw).toMatch(
      new RegExp(`^Ticket cache: FILE:${paths.krb5Ccache}\nDefault principal: alice@EXAMPLE.TEST\n`),
    );
    const { json } = r.json;
    expect(json.cache).toBe(`FILE:${paths.krb5Ccache}`);
    expect(json.defaultPrincipal).toBe('alice@EXAMPLE.TEST');
    expect(json.tickets).toHaveLength(1);
    const [tgt] = json.tickets;
    expect(tgt.service).toBe('krbtgt/EXAMPLE.TEST@EXAMPLE.TEST');
    // klist ran with TZ=UTC and the parser read UTC: the start is "now".
    expect(Math.abs(Date.parse(tgt.start) - before)).toBeLessThan(120_000);
    expect(Date.parse(tgt.expires) - Date.parse(tgt.start)).toBe(10 * 3600 * 1000);
    expect(Date.parse(tgt.renewUntil ?? '') - Date.parse(tgt.start)).toBe(7 * 86400 * 1000);
  });

  it("a wrong password: a clear 400 with kinit's reason, and the password is nowhere", async () => {
    const wrong = `${PASSWORD}-not`;
    const r = await call('POST', '/ticket/obtain', { username: 'alice', password: wrong });
    expect(r.status).toBe(400);
    expect(errorOf(r)).toMatchObject({
      code: 'bad_request',
      message: 'kinit failed for alice@EXAMPLE.TEST: Password incorrect',
      details: { command: [kdc.bin.kinit, '--', 'alice@EXAMPLE.TEST'], exitCode: 1, kind: 'password-incorrect' },
    });
    for (const pw of [PASSWORD, wrong]) {
      expect(r.text).not.toContain(pw);
      expect(JSON.stringify(s.host.db.prepare('SELECT * FROM audit_log').all())).not.toContain(pw);
      expect(JSON.stringify(s.host.db.prepare('SELECT * FROM events').all())).not.toContain(pw);
      expect(logs.join('\n')).not.toContain(pw);
    }
    const audit = s.host.db.prepare("SELECT argv, exit_code FROM audit_log WHERE kind = 'pty' ORDER BY id").all() as {
      argv: string;
      exit_code: number;
    }[];
    expect(audit.map((a) => [JSON.parse(a.argv), a.exit_code])).toEqual([
      [[kdc.bin.kinit, '--', 'alice@EXAMPLE.TEST'], 0],
      [[kdc.bin.kinit, '--', 'alice@EXAMPLE.TEST'], 1],
    ]);
  });

  it('an unknown principal and an expired password are 400s; the expired one does not wait for a new password', async () => {
    const u = await call('POST', '/ticket/obtain', { username: 'carol', password: 'whatever' });
    expect(u.status).toBe(400);
    expect(errorOf(u)).toMatchObject({
      message: "kinit failed: Client 'carol@EXAMPLE.TEST' not found in Kerberos database",
      details: { kind: 'client-not-found' },
    });
    const started = Date.now();
    const e = await call('POST', '/ticket/obtain', { username: 'old', password: OLD_PASSWORD });
    expect(e.status).toBe(400);
    expect(errorOf(e)).toMatchObject({
      message: 'kinit failed for old@EXAMPLE.TEST: Password has expired (change it first)',
      details: { kind: 'password-expired' },
    });
    expect(Date.now() - started).toBeLessThan(KINIT_TIMEOUT_MS);
    expect(e.text).not.toContain(OLD_PASSWORD);
  });

  it("an unreachable KDC is a 502 with kinit's reason; a silent one is cut at the hard limit (504)", async () => {
    const r = await call('POST', '/ticket/obtain', { realm: 'OTHER.TEST', username: 'alice', password: PASSWORD });
    expect(r.status).toBe(502);
    expect(errorOf(r)).toMatchObject({
      code: 'command_failed',
      message: "kinit failed for alice@OTHER.TEST: Cannot contact any KDC for realm 'OTHER.TEST'",
      details: { kind: 'kdc-unreachable' },
    });
    const started = Date.now();
    const h = await call('POST', '/ticket/obtain', { realm: 'SILENT.TEST', username: 'alice', password: PASSWORD });
    expect(h.status).toBe(504);
    expect(errorOf(h)).toMatchObject({
      code: 'command_timeout',
      details: { command: [kdc.bin.kinit, '--', 'alice@SILENT.TEST'], timeoutMs: KINIT_TIMEOUT_MS },
    });
    expect(Date.now() - started).toBeGreaterThanOrEqual(KINIT_TIMEOUT_MS - 100);
    expect(Date.now() - started).toBeLessThan(KINIT_TIMEOUT_MS + 5000);
  });

  it('configuration that would load code or break every Kerberos program is refused (400 naming the line); klist still works', async () => {
    const code = (r: { json: unknown }) => (r.json as { error: { code: string; message: string } }).error;
    const plugin = await call('POST', '/realm/create', {
      name: 'evil',
      conf: '[plugins]\n\tclpreauth = {\n\t\tmodule = evil:/tmp/evil.so\n\t}\n',
    });
    expect([plugin.status, code(plugin).message]).toEqual([
      400,
      expect.stringContaining('plugin modules are not allowed (line 3)'),
    ]);
    const conf = readFileSync(paths.krb5Conf, 'utf8');
    const baseDir = await call('POST', '/conf/update', { conf: `${conf}\n[libdefaults]\n\tplugin_base_dir = /tmp\n` });
    expect([baseDir.status, code(baseDir).message]).toEqual([
      400,
      expect.stringContaining('plugin_base_dir is not allowed'),
    ]);
    const outside = await call('POST', '/conf/update', { conf: `${conf}\ninclude /tmp/other.conf\n` });
    expect([outside.status, code(outside).message]).toEqual([
      400,
      expect.stringContaining('is outside the Kerberos configuration this host manages'),
    ]);
    // (a realm file holds no include lines at all: issue 27 item 9)
    const missing = await call('POST', '/conf/update', { conf: `${conf}\ninclude ${paths.krb5ConfD}/nope.conf\n` });
    expect([missing.status, code(missing).message]).toEqual([
      400,
      expect.stringContaining('names a path that does not exist'),
    ]);
    expect(readFileSync(paths.krb5Conf, 'utf8')).toBe(conf);
    expect(existsSync(`${paths.krb5ConfD}/evil.conf`)).toBe(false);
    expect(existsSync(`${paths.krb5ConfD}/missing.conf`)).toBe(false);
    // the Kerberos tools still start with the configuration on disk
    const list = await call('GET', '/ticket/list', undefined, reader);
    expect(list.status).toBe(200);
  });

  it('keytabs outside the configured keytab roots never reach klist or kinit: 403, nothing run', async () => {
    // commands only: a refused change still leaves its own `request` row (the audit trail, #29)
    const ran = () =>
      (s.host.db.prepare("SELECT COUNT(*) AS n FROM audit_log WHERE kind IN ('exec', 'pty')").get() as { n: number }).n;
    const before = ran();
    symlinkSync('/etc/shadow', join(kdc.dir, 'shadow-link.keytab'));
    for (const path of ['/etc/shadow', join(kdc.dir, 'shadow-link.keytab')]) {
      const list = await call('POST', '/key/list', { path }, reader);
      expect([list.status, errorOf(list).code, path]).toEqual([403, 'forbidden', path]);
      const obtain = await call('POST', '/ticket/obtain', { path, principal: 'host/nas01.example.test' });
      expect([obtain.status, errorOf(obtain).code, path]).toEqual([403, 'forbidden', path]);
    }
    expect(ran()).toBe(before);
  });

  it('key list: klist -k -t -e of the default keytab and of a given path; a missing keytab is a 404', async () => {
    copyFileSync(kdc.keytabPath, paths.keytab);
    const expected = ['host', 'nfs'].flatMap((svc) =>
      ['aes256-cts-hmac-sha1-96', 'aes128-cts-hmac-sha1-96'].map((enctype) => ({
        kvno: 2,
        principal: `${svc}/nas01.example.test@EXAMPLE.TEST`,
        enctype,
      })),
    );
    const d = await call<KeyList>('POST', '/key/list', {}, reader);
    expect(d.status, d.text).toBe(200);
    expect(d.json.json.keytab).toBe(`FILE:${paths.keytab}`);
    expect(d.json.json.keys.map(({ timestamp: _t, ...k }) => k)).toEqual(expected);
    expect(d.json.raw.split('\n')[0]).toBe(`Keytab name: FILE:${paths.keytab}`);
    const p = await call<KeyList>('POST', '/key/list', { path: kdc.keytabPath }, reader);
    expect(p.status).toBe(200);
    expect(p.json.json.keys.map(({ timestamp: _t, ...k }) => k)).toEqual(expected);
    const m = await call('POST', '/key/list', { path: `${kdc.dir}/missing.keytab` }, reader);
    expect(m.status).toBe(404);
    expect(errorOf(m)).toMatchObject({
      code: 'not_found',
      message: `klist failed: Key table file '${kdc.dir}/missing.keytab' not found`,
    });
  });

  it('obtain from the keytab (default path, bare principal): the cache now holds the host principal', async () => {
    const r = await call<Message>('POST', '/ticket/obtain', { principal: 'host/nas01.example.test' });
    expect(r.status, r.text).toBe(200);
    expect(r.json.message).toBe(
      'Kerberos ticket obtained for host/nas01.example.test@EXAMPLE.TEST in realm EXAMPLE.TEST',
    );
    const l = await call<TicketList>('GET', '/ticket/list');
    expect(l.json.json.defaultPrincipal).toBe('host/nas01.example.test@EXAMPLE.TEST');
    const m = await call('POST', '/ticket/obtain', {
      path: `${kdc.dir}/missing.keytab`,
      principal: 'host/nas01.example.test@EXAMPLE.TEST',
    });
    expect(m.status).toBe(404);
    expect(errorOf(m).details?.kind).toBe('keytab-not-found');
  });

  it('destroy empties the cache; list is then a 404 and destroy says there is nothing left', async () => {
    const r = await call('POST', '/ticket/destroy', {});
    expect(r.status, r.text).toBe(200);
    expect(r.json).toEqual({ message: 'Kerberos tickets destroyed' });
    expect(existsSync(paths.krb5Ccache)).toBe(false);
    const l = await call<TicketList>('GET', '/ticket/list');
    expect(l.status).toBe(404);
    expect(errorOf(l)).toMatchObject({
      code: 'not_found',
      message: `klist failed: No credentials cache found (filename: ${paths.krb5Ccache})`,
    });
    const again = await call('POST', '/ticket/destroy', {});
    expect(again.json).toEqual({ message: 'No Kerberos tickets to destroy' });
  });

  it('emitted one event per change, without secrets', () => {
    const rows = s.host.db.prepare("SELECT kind, data FROM events WHERE kind LIKE 'kerberos.%' ORDER BY seq").all() as {
      kind: string;
      data: string;
    }[];
    expect(rows.map((r) => [r.kind, JSON.parse(r.data)])).toEqual([
      ['kerberos.conf.updated', {}],
      ['kerberos.realm.created', { name: 'example-test' }],
      ['kerberos.realm.created', { name: 'other' }],
      ['kerberos.realm.created', { name: 'silent' }],
      ['kerberos.ticket.obtained', { realm: 'EXAMPLE.TEST', principal: 'alice@EXAMPLE.TEST' }],
      ['kerberos.ticket.obtained', { realm: 'EXAMPLE.TEST', principal: 'host/nas01.example.test@EXAMPLE.TEST' }],
      ['kerberos.ticket.destroyed', {}],
    ]);
  });

  it("left the machine's /etc/krb5.conf alone", () => {
    if (etcKrb5 === null) {
      expect(existsSync('/etc/krb5.conf')).toBe(false);
    } else {
      expect(readFileSync('/etc/krb5.conf', 'utf8')).toBe(etcKrb5.text);
      expect(statSync('/etc/krb5.conf').mtimeMs).toBe(etcKrb5.mtimeMs);
    }
  });
});

describe('the include directory and realm file names, as MIT reads them (issue 12 items 1-3)', () => {
  const err = (r: { json: unknown }) => (r.json as { error: { code: string; message: string } }).error;

  it("the spec's first line names the configured include directory, which conf/update creates when missing", async () => {
    const before = readFileSync(paths.krb5Conf, 'utf8');
    rmSync(paths.krb5ConfD, { recursive: true, force: true });
    const rest = before.slice(before.indexOf('\n'));
    const r = await call('POST', '/conf/update', { conf: `includedir /etc/krb5.conf.d${rest}` });
    expect(r.status, r.text).toBe(200);
    expect(readFileSync(paths.krb5Conf, 'utf8')).toBe(`includedir ${paths.krb5ConfD}${rest}`);
    expect(statSync(paths.krb5ConfD).isDirectory()).toBe(true);
    expect(statSync(paths.krb5ConfD).mode & 0o777).toBe(0o755);
    // MIT starts with it: klist's complaint is the (empty) cache, not the configuration
    const l = await call('GET', '/ticket/list', undefined, reader);
    expect([l.status, err(l).code]).toEqual([404, 'not_found']);
  });

  it('a realm file named after the realm (CORP.EXAMPLE.COM style) is written as <name>.conf and kinit reads it', async () => {
    const r = await call('POST', '/realm/create', {
      name: 'EXAMPLE.TEST',
      conf: { realms: { 'EXAMPLE.TEST': { kdc: [`127.0.0.1:${kdc.kdcPort}`] } } },
    });
    expect(r.status, r.text).toBe(200);
    expect(readFileSync(`${paths.krb5ConfD}/EXAMPLE.TEST.conf`, 'utf8')).toContain(`kdc = 127.0.0.1:${kdc.kdcPort}\n`);
    const o = await call('POST', '/ticket/obtain', { username: 'alice', password: PASSWORD });
    expect(o.status, o.text).toBe(200);
    expect((await call('POST', '/ticket/destroy', {})).status).toBe(200);
  });

  it('every listing key is addressable by details, update and delete, with or without .conf', async () => {
    writeFileSync(`${paths.krb5ConfD}/plain_name`, '[realms]\n\tPLAIN.TEST = {\n\t\tkdc = 127.0.0.1:1\n\t}\n');
    const list = await call('GET', '/realm', undefined, reader);
    expect(Object.keys(list.json as Record<string, unknown>)).toEqual(['EXAMPLE.TEST.conf', 'plain_name']);
    for (const key of ['EXAMPLE.TEST.conf', 'EXAMPLE.TEST', 'plain_name']) {
      const d = await call('GET', `/realm/${key}/details`, undefined, reader);
      expect([key, d.status]).toEqual([key, 200]);
    }
    const u = await call('POST', '/realm/plain_name/update', {
      conf: '[realms]\n\tPLAIN.TEST = {\n\t\tkdc = 127.0.0.1:2\n\t}\n',
    });
    expect(u.status, u.text).toBe(200);
    expect(readFileSync(`${paths.krb5ConfD}/plain_name`, 'utf8')).toContain('127.0.0.1:2');
    expect(existsSync(`${paths.krb5ConfD}/plain_name.conf`)).toBe(false);
    // one name, one file: create refuses a name whose plain file exists
    const dup = await call('POST', '/realm/create', { name: 'plain_name', conf: '[realms]\n' });
    expect([dup.status, err(dup).message]).toEqual([409, 'realm file plain_name already exists']);
    const del = await call('POST', '/realm/plain_name/delete', {});
    expect([del.status, (del.json as { message: string }).message]).toEqual([200, 'Deleted realm file plain_name']);
    expect(existsSync(`${paths.krb5ConfD}/plain_name`)).toBe(false);
    const delConf = await call('POST', '/realm/EXAMPLE.TEST.conf/delete', {});
    expect([delConf.status, (delConf.json as { message: string }).message]).toEqual([
      200,
      'Deleted realm file EXAMPLE.TEST.conf',
    ]);
    // a name ending in .conf is the file itself, never <name>.conf.conf
    expect((await call('POST', '/realm/create', { name: 'lab.conf', conf: '[realms]\n' })).status).toBe(200);
    expect(readdirSync(paths.krb5ConfD)).toEqual(['lab.conf']);
    for (const bad of ['.hidden', 'a..b', '-x']) {
      const b = await call('POST', '/realm/create', { name: bad, conf: '[realms]\n' });
      expect([bad, b.status]).toEqual([bad, 400]);
    }
  });
});
