/**
 * Route tier: the ticket and key routes with the replay back end and a real SQLite DB. The command
 * outputs are the ones recorded against a real KDC (fixtures/kinit, fixtures/klist), replayed for
 * the exact argv the routes must run; the error paths a live KDC cannot easily produce (a hang,
 * an echoing terminal) are played by the test back end. The live KDC is the system tier's
 * (test/system/kerberos-routes.test.ts).
 */
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { readFixture, type Fixture } from '../../runtime/system/fixture-file';
import { DEFAULT_KINIT_TIMEOUT_MS } from '../../handlers/kerberos/commands';
import { makeTestHost, repo, type TestHost } from '../helpers/host';
import { InspectingReplay, KERBEROS_ROUTES, ptyFixture } from './kerberos-helpers';
import { detail, errorOf, issuePaths } from '../helpers/answers';
import type * as z from 'zod';
import type { keyListAnswer, messageAnswer } from '../../handlers/kerberos/responses';

const PASSWORD = 'S3cret pass "with" quotes & spaces';
const KINIT = '/usr/bin/kinit';
const KLIST = '/usr/bin/klist';
const KDESTROY = '/usr/bin/kdestroy';
const recorded = (rel: string): Fixture => readFixture(join(repo, 'fixtures', rel));
/** A recorded fixture answering another argv (ours has `--`, a configured keytab path …). */
const as = (rel: string, argv: string[], o: Partial<Fixture> = {}): Fixture => ({
  ...recorded(rel),
  argv,
  scenario: undefined,
  ...o,
});
/** A recorded stdin-pipe kinit replayed as the pty would show it: prompt, then the error. */
const asPty = (rel: string, argv: string[]): Fixture => {
  const f = recorded(rel);
  const lines = [...f.stdout.split('\n'), ...f.stderr.split('\n')].filter((l) => l !== '');
  return ptyFixture(argv, f.code, lines, `${f.source} (replayed through a pty: CRLF, stdout then stderr)`);
};

let t: TestHost;
let replay: InspectingReplay;
let ccache: string;
/** What every Kerberos command runs with: the configured files, whatever system.env says. */
let krbEnv: Record<string, string>;
let keytab: string;
let reader: string;

beforeAll(async () => {
  replay = new InspectingReplay();
  // the recorded keytab fixtures name /etc/samba/nas.keytab , /srv/none.keytab and the recording KDC's /tmp/ballast-kdc-OyMxlB
  t = await makeTestHost({
    routes: KERBEROS_ROUTES,
    backend: replay,
    config: { settings: { kerberos: { keytabRoots: ['/etc/samba', '/srv', '/tmp/ballast-kdc-OyMxlB'] } } },
  });
  ccache = `FILE:${t.config.paths.krb5Ccache}`;
  keytab = t.config.paths.keytab;
  krbEnv = {
    KRB5_CONFIG: t.config.paths.krb5Conf,
    KRB5CCNAME: ccache,
    KRB5_KTNAME: `FILE:${keytab}`,
    KRB5_CLIENT_KTNAME: `FILE:${keytab}`,
  };
  reader = await t.token(['kerberos:read']);
});
afterAll(() => t.close());

const krb5Conf = (defaultRealm?: string) => {
  mkdirSync(dirname(t.config.paths.krb5Conf), { recursive: true });
  writeFileSync(
    t.config.paths.krb5Conf,
    `includedir /etc/krb5.conf.d\n\n[libdefaults]\n${defaultRealm ? `\tdefault_realm = ${defaultRealm}\n` : '\tforwardable = true\n'}`,
  );
};
const events = (kind: string) =>
  (t.host.db.prepare('SELECT data FROM events WHERE kind = ? ORDER BY seq').all(kind) as { data: string }[]).map((e) =>
    JSON.parse(e.data),
  );
const issues = issuePaths;
const obtain = (body: unknown, token?: string) =>
  t.call<z.infer<typeof messageAnswer>>('POST', '/api/v2/kerberos/ticket/obtain', { body, token });

beforeEach(() => {
  replay.seen.length = 0;
  replay.hanging.clear();
  krb5Conf('EXAMPLE.TEST');
});

describe('POST /kerberos/ticket/obtain with username and password', () => {
  const argv = [KINIT, '--', 'alice@EXAMPLE.TEST'];

  it('runs kinit -- alice@<default_realm> under a pty, answers the prompt, and names the realm', async () => {
    replay.load([asPty('kinit/local-password-ok.yaml', argv)]);
    const before = events('kerberos.ticket.obtained').length;
    const r = await obtain({ username: 'alice', password: PASSWORD });
    expect(r.status, r.text).toBe(200);
    expect(r.json).toEqual({ message: 'Kerberos ticket obtained for alice@EXAMPLE.TEST in realm EXAMPLE.TEST' });
    expect(replay.seen).toEqual([
      {
        kind: 'pty',
        argv,
        dialogue: [
          { expect: 'Password for [^\\r\\n]*: ', send: PASSWORD, secret: true },
          { expect: 'Enter new password: ', send: '\x04' },
        ],
        opts: { env: krbEnv, timeoutMs: DEFAULT_KINIT_TIMEOUT_MS },
      },
    ]);
    // The prompt's regex really matches what kinit prints.
    expect(new RegExp(replay.seen[0].dialogue![0].expect).test('Password for alice@EXAMPLE.TEST: ')).toBe(true);
    expect(events('kerberos.ticket.obtained').slice(before)).toEqual([
      { realm: 'EXAMPLE.TEST', principal: 'alice@EXAMPLE.TEST' },
    ]);
  });

  it('uses body.realm when given, without needing krb5.conf', async () => {
    rmSync(t.config.paths.krb5Conf);
    const a = [KINIT, '--', 'Administrator@CORP.EXAMPLE.COM'];
    replay.load([
      ptyFixture(
        a,
        0,
        ['Password for Administrator@CORP.EXAMPLE.COM: '],
        'test-constructed from kinit/local-password-ok.yaml',
      ),
    ]);
    const r = await obtain({ realm: 'CORP.EXAMPLE.COM', username: 'Administrator', password: PASSWORD });
    expect(r.status, r.text).toBe(200);
    expect(r.json.message).toBe(
      'Kerberos ticket obtained for Administrator@CORP.EXAMPLE.COM in realm CORP.EXAMPLE.COM',
    );
    expect(replay.last().argv).toEqual(a);
  });

  it('409 when no realm is given and krb5.conf has no default_realm; nothing runs', async () => {
    krb5Conf();
    const r = await obtain({ username: 'alice', password: PASSWORD });
    expect(r.status).toBe(409);
    expect(errorOf(r)).toMatchObject({
      code: 'conflict',
      message: `no realm given, and ${t.config.paths.krb5Conf} sets no default_realm`,
    });
    rmSync(t.config.paths.krb5Conf);
    expect((await obtain({ username: 'alice', password: PASSWORD })).status).toBe(409);
    expect(replay.seen).toEqual([]);
  });

  const failures: [string, string, number, string, string, string][] = [
    [
      'a wrong password',
      'kinit/local-password-incorrect.yaml',
      400,
      'bad_request',
      'password-incorrect',
      'kinit failed for alice@EXAMPLE.TEST: Password incorrect',
    ],
    [
      'a disabled principal',
      'kinit/local-client-revoked.yaml',
      400,
      'bad_request',
      'client-revoked',
      "kinit failed for alice@EXAMPLE.TEST: Client's credentials have been revoked",
    ],
    [
      'an expired principal',
      'kinit/local-client-expired.yaml',
      400,
      'bad_request',
      'client-expired',
      "kinit failed for alice@EXAMPLE.TEST: Client's entry in database has expired",
    ],
    [
      'an expired password',
      'kinit/local-password-expired.yaml',
      400,
      'bad_request',
      'password-expired',
      'kinit failed for alice@EXAMPLE.TEST: Password has expired (change it first)',
    ],
    [
      'kinit reading no password',
      'kinit/local-no-password.yaml',
      502,
      'command_failed',
      'cannot-read-password',
      'kinit failed for alice@EXAMPLE.TEST: Cannot read password',
    ],
  ];
  for (const [what, rel, status, code, kind, message] of failures) {
    it(`${what}: ${status} ${code} with kinit's reason`, async () => {
      replay.load([{ ...asPty(rel, argv), once: true }]);
      const r = await obtain({ username: 'alice', password: PASSWORD });
      expect(r.status).toBe(status);
      expect(errorOf(r)).toMatchObject({ code, message, details: { command: argv, exitCode: 1, kind } });
      expect(errorOf(r).details?.stderr).toContain('kinit: ');
    });
  }

  it("an unknown principal: 400 naming it, with kinit's reason", async () => {
    const a = [KINIT, '--', 'carol@EXAMPLE.TEST'];
    replay.load([asPty('kinit/local-client-not-found.yaml', a)]);
    const r = await obtain({ username: 'carol', password: PASSWORD });
    expect(r.status).toBe(400);
    expect(errorOf(r)).toMatchObject({
      code: 'bad_request',
      message: "kinit failed: Client 'carol@EXAMPLE.TEST' not found in Kerberos database",
      details: { kind: 'client-not-found', subject: 'carol@EXAMPLE.TEST' },
    });
  });

  it('an unreachable KDC: 502 command_failed; a realm without a KDC: 400', async () => {
    const other = [KINIT, '--', 'alice@OTHER.TEST'];
    replay.load([asPty('kinit/local-kdc-unreachable.yaml', other)]);
    const r = await obtain({ realm: 'OTHER.TEST', username: 'alice', password: PASSWORD });
    expect(r.status).toBe(502);
    expect(errorOf(r)).toMatchObject({
      code: 'command_failed',
      message: "kinit failed for alice@OTHER.TEST: Cannot contact any KDC for realm 'OTHER.TEST'",
      details: { kind: 'kdc-unreachable', subject: 'OTHER.TEST' },
    });
    const nowhere = [KINIT, '--', 'alice@NOWHERE.TEST'];
    replay.load([asPty('kinit/local-realm-unknown.yaml', nowhere)]);
    const u = await obtain({ realm: 'NOWHERE.TEST', username: 'alice', password: PASSWORD });
    expect(u.status).toBe(400);
    expect(errorOf(u).details?.kind).toBe('realm-unknown');
  });

  it('a kinit that hangs (DNS, a silent KDC) is cut at the hard limit: 504', async () => {
    replay.hanging.add(JSON.stringify(argv));
    const r = await obtain({ username: 'alice', password: PASSWORD });
    expect(r.status).toBe(504);
    expect(errorOf(r)).toMatchObject({
      code: 'command_timeout',
      message: 'kinit did not finish within 20 s (is the KDC or its DNS reachable?)',
      details: { command: argv, timeoutMs: 20000 },
    });
  });

  it('the password never appears in a response, the audit log, an event, or a log line, even if the terminal echoes it', async () => {
    const logged: string[] = [];
    const spies = [
      vi.spyOn(console, 'error').mockImplementation((...a: unknown[]) => void logged.push(a.map(String).join(' '))),
      vi.spyOn(console, 'log').mockImplementation((...a: unknown[]) => void logged.push(a.map(String).join(' '))),
      vi.spyOn(console, 'warn').mockImplementation((...a: unknown[]) => void logged.push(a.map(String).join(' '))),
    ];
    try {
      const answers: string[] = [];
      // A terminal that echoes: the password comes back in kinit's output.
      replay.load([
        ptyFixture(
          argv,
          1,
          [
            `Password for alice@EXAMPLE.TEST: ${PASSWORD}`,
            'kinit: Password incorrect while getting initial credentials',
          ],
          'test-constructed: an echoing terminal',
        ),
      ]);
      const echoed = await obtain({ username: 'alice', password: PASSWORD });
      answers.push(echoed.text);
      expect(echoed.status).toBe(400);
      expect(errorOf(echoed).details?.stderr).toBe(
        'Password for alice@EXAMPLE.TEST: ********\nkinit: Password incorrect while getting initial credentials',
      );
      replay.load([asPty('kinit/local-password-ok.yaml', argv)]);
      answers.push((await obtain({ username: 'alice', password: PASSWORD })).text);
      // Refused passwords: the validation message must not repeat them either.
      answers.push((await obtain({ username: 'alice', password: `${PASSWORD}\nsecond line` })).text);
      answers.push((await obtain({ username: 'alice', password: PASSWORD, path: '/etc/krb5.keytab' })).text);
      answers.push((await obtain({ username: 'al ice', password: PASSWORD })).text);
      replay.hanging.add(JSON.stringify(argv));
      answers.push((await obtain({ username: 'alice', password: PASSWORD })).text);

      for (const text of answers) expect(text).not.toContain(PASSWORD);
      expect(answers.join('')).not.toContain('S3cret');
      const audit = JSON.stringify(t.host.db.prepare('SELECT * FROM audit_log').all());
      expect(audit).toContain('"pty"');
      expect(audit).not.toContain('S3cret');
      expect(JSON.stringify(t.host.db.prepare('SELECT * FROM events').all())).not.toContain('S3cret');
      expect(logged.join('\n')).not.toContain('S3cret');
      // Never in argv or the environment of any command.
      for (const c of replay.seen) expect(JSON.stringify([c.argv, c.opts])).not.toContain('S3cret');
    } finally {
      for (const s of spies) s.mockRestore();
    }
  });

  it('refuses a username with @ or whitespace, a lone username or password, and mixing in keytab fields', async () => {
    const cases: [unknown, string[]][] = [
      [{ username: 'alice@EVIL.TEST', password: PASSWORD }, ['body.username']],
      [{ username: 'alice bob', password: PASSWORD }, ['body.username']],
      [{ username: '-alice', password: PASSWORD }, ['body.username']],
      [{ username: 'alice\n', password: PASSWORD }, ['body.username']],
      [{ username: 'alice' }, ['body.password']],
      [{ password: PASSWORD }, ['body.username']],
      [{ username: 'alice', password: '' }, ['body.password']],
      [{ username: 'alice', password: 'a\u0003b' }, ['body.password']],
      [{ username: 'alice', password: PASSWORD, principal: 'host/x' }, ['body.principal']],
      [{ username: 'alice', password: PASSWORD, realm: 'BAD REALM' }, ['body.realm']],
      [{ username: 'alice', password: PASSWORD, realm: '-X' }, ['body.realm']],
    ];
    for (const [body, paths] of cases) {
      const r = await obtain(body);
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(errorOf(r).code).toBe('validation_failed');
      expect(issues(r), JSON.stringify(body)).toEqual(paths);
    }
    expect(replay.seen).toEqual([]);
  });

  it('needs kerberos:manage', async () => {
    const r = await obtain({ username: 'alice', password: PASSWORD }, reader);
    expect(r.status).toBe(403);
    expect(replay.seen).toEqual([]);
  });
});

describe('POST /kerberos/ticket/obtain from a keytab', () => {
  it('defaults to the configured keytab and puts the default realm on a bare principal', async () => {
    const argv = [KINIT, '-k', '-t', keytab, '--', 'host/nas01.example.test@EXAMPLE.TEST'];
    replay.load([as('kinit/local-keytab-ok.yaml', argv)]);
    const before = events('kerberos.ticket.obtained').length;
    const r = await obtain({ principal: 'host/nas01.example.test' });
    expect(r.status, r.text).toBe(200);
    expect(r.json.message).toBe(
      'Kerberos ticket obtained for host/nas01.example.test@EXAMPLE.TEST in realm EXAMPLE.TEST',
    );
    expect(replay.seen).toEqual([{ kind: 'exec', argv, opts: { env: krbEnv, timeoutMs: DEFAULT_KINIT_TIMEOUT_MS } }]);
    expect(events('kerberos.ticket.obtained').slice(before)).toEqual([
      { realm: 'EXAMPLE.TEST', principal: 'host/nas01.example.test@EXAMPLE.TEST' },
    ]);
  });

  it('takes path and a principal with its realm as given (no krb5.conf needed)', async () => {
    rmSync(t.config.paths.krb5Conf);
    const argv = [KINIT, '-k', '-t', '/etc/samba/nas.keytab', '--', 'nfs/nas01.corp.example.com@CORP.EXAMPLE.COM'];
    replay.load([as('kinit/local-keytab-ok.yaml', argv)]);
    const r = await obtain({
      path: '/etc/samba/nas.keytab',
      principal: 'nfs/nas01.corp.example.com@CORP.EXAMPLE.COM',
      realm: 'CORP.EXAMPLE.COM',
    });
    expect(r.status, r.text).toBe(200);
    expect(r.json.message).toBe(
      'Kerberos ticket obtained for nfs/nas01.corp.example.com@CORP.EXAMPLE.COM in realm CORP.EXAMPLE.COM',
    );
    expect(replay.last().argv).toEqual(argv);
  });

  it('without a principal lets kinit choose, then names what klist shows', async () => {
    const argv = [KINIT, '-k', '-t', keytab];
    replay.load([as('kinit/local-keytab-ok.yaml', argv), as('klist/local-tgt.yaml', [KLIST])]);
    const r = await obtain({});
    expect(r.status, r.text).toBe(200);
    expect(r.json.message).toBe('Kerberos ticket obtained for alice@EXAMPLE.TEST in realm EXAMPLE.TEST');
    expect(replay.seen.map((c) => [c.argv, c.opts.env])).toEqual([
      [argv, krbEnv],
      [[KLIST], krbEnv],
    ]);
  });

  it("a missing keytab: 404 with kinit's reason; a keytab without the key: 400", async () => {
    const missing = [KINIT, '-k', '-t', '/srv/none.keytab', '--', 'host/nas01.example.test@EXAMPLE.TEST'];
    replay.load([
      as('kinit/local-keytab-missing.yaml', missing, {
        stderr: "kinit: Key table file '/srv/none.keytab' not found while getting initial credentials\n",
      }),
    ]);
    const r = await obtain({ path: '/srv/none.keytab', principal: 'host/nas01.example.test' });
    expect(r.status).toBe(404);
    expect(errorOf(r)).toMatchObject({
      code: 'not_found',
      message: "kinit failed for host/nas01.example.test@EXAMPLE.TEST: Key table file '/srv/none.keytab' not found",
      details: { command: missing, kind: 'keytab-not-found', subject: '/srv/none.keytab' },
    });
    const cifs = [KINIT, '-k', '-t', keytab, '--', 'cifs/nas01.example.test@EXAMPLE.TEST'];
    replay.load([as('kinit/local-keytab-no-suitable-keys.yaml', cifs)]);
    const n = await obtain({ principal: 'cifs/nas01.example.test@EXAMPLE.TEST' });
    expect(n.status).toBe(400);
    expect(errorOf(n).details?.kind).toBe('keytab-no-suitable-keys');
  });

  it('a keytab kinit that hangs is cut at the hard limit: 504', async () => {
    const argv = [KINIT, '-k', '-t', keytab, '--', 'host/x@EXAMPLE.TEST'];
    replay.hanging.add(JSON.stringify(argv));
    const r = await obtain({ principal: 'host/x@EXAMPLE.TEST' });
    expect(r.status).toBe(504);
    expect(errorOf(r).code).toBe('command_timeout');
  });

  it('refuses paths and principals that could escape or be options, and a realm it cannot honour', async () => {
    const cases: [unknown, string[]][] = [
      [{ path: 'krb5.keytab' }, ['body.path']],
      [{ path: '/etc/../root/x.keytab' }, ['body.path']],
      [{ path: '/etc/./krb5.keytab' }, ['body.path']],
      [{ path: '/etc/krb5 keytab' }, ['body.path']],
      [{ path: '/etc/krb5.keytab\u0000' }, ['body.path']],
      [{ path: 'FILE:/etc/krb5.keytab' }, ['body.path']],
      [{ principal: '-k' }, ['body.principal']],
      [{ principal: 'host/a b' }, ['body.principal']],
      [{ principal: 'host/x@A.TEST', realm: 'B.TEST' }, ['body.realm']],
      [{ realm: 'EXAMPLE.TEST' }, ['body.realm']],
    ];
    for (const [body, paths] of cases) {
      const r = await obtain(body);
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(issues(r), JSON.stringify(body)).toEqual(paths);
    }
    expect(replay.seen).toEqual([]);
  });
});

describe('GET /kerberos/ticket/list', () => {
  it('answers klist as raw and parsed, from the product cache (KRB5CCNAME), for kerberos:read', async () => {
    const f = as('klist/local-tgt.yaml', [KLIST]);
    replay.load([f]);
    const r = await t.call('GET', '/api/v2/kerberos/ticket/list', { token: reader });
    expect(r.status, r.text).toBe(200);
    expect(r.json).toEqual({
      raw: f.stdout,
      json: {
        cache: 'FILE:/tmp/ballast-kdc-OyMxlB/krb5cc',
        defaultPrincipal: 'alice@EXAMPLE.TEST',
        tickets: [
          {
            service: 'krbtgt/EXAMPLE.TEST@EXAMPLE.TEST',
            start: '2026-11-25T22:13:20Z',
            expires: '2026-11-26T08:13:20Z',
            renewUntil: '2026-12-02T22:13:20Z',
          },
        ],
      },
    });
    expect(replay.seen).toEqual([{ kind: 'exec', argv: [KLIST], opts: { env: krbEnv } }]);
  });

  it("no cache: 404 with klist's reason", async () => {
    replay.load([{ ...as('klist/local-no-cache.yaml', [KLIST]), once: true }]);
    const r = await t.call('GET', '/api/v2/kerberos/ticket/list');
    expect(r.status).toBe(404);
    expect(errorOf(r)).toMatchObject({
      code: 'not_found',
      message: 'klist failed: No credentials cache found (filename: /tmp/ballast-kdc-OyMxlB/krb5cc)',
      details: { command: [KLIST], exitCode: 1, kind: 'no-credentials-cache' },
    });
  });

  it("output that is not klist's: 502 naming the parser, not a 500", async () => {
    replay.load([
      { source: 'test-constructed', argv: [KLIST], code: 0, stdout: 'something else\n', stderr: '', once: true },
    ]);
    const logged = vi.spyOn(console, 'error').mockImplementation(() => undefined);
    try {
      const r = await t.call('GET', '/api/v2/kerberos/ticket/list');
      expect(r.status).toBe(502);
      expect(errorOf(r)).toMatchObject({ code: 'bad_gateway', message: 'could not read the output of klist (line 1)' });
      // The log names the parser and line, never the output itself.
      expect(logged.mock.calls.map((c) => c.join(' ')).join('\n')).toMatch(/parse error: klist: line 1: /);
      expect(logged.mock.calls.map((c) => c.join(' ')).join('\n')).not.toContain('something else');
    } finally {
      logged.mockRestore();
    }
  });

  it('needs a token', async () => {
    expect((await t.call('GET', '/api/v2/kerberos/ticket/list', { token: null })).status).toBe(401);
  });
});

describe('POST /kerberos/ticket/destroy', () => {
  it('runs kdestroy on the product cache, answers a message, and records the event', async () => {
    replay.load([
      {
        source: 'test-constructed: kdestroy of an existing cache prints nothing (krb5 1.20)',
        argv: [KDESTROY],
        code: 0,
        stdout: '',
        stderr: '',
        once: true,
      },
    ]);
    const before = events('kerberos.ticket.destroyed').length;
    const r = await t.call('POST', '/api/v2/kerberos/ticket/destroy', { body: {} });
    expect(r.status, r.text).toBe(200);
    expect(r.json).toEqual({ message: 'Kerberos tickets destroyed' });
    expect(replay.seen).toEqual([{ kind: 'exec', argv: [KDESTROY], opts: { env: krbEnv } }]);
    expect(events('kerberos.ticket.destroyed').slice(before)).toEqual([{}]);
  });

  it('is idempotent: no cache is a 200 saying so, and no event', async () => {
    replay.load([
      {
        source: 'checked on this machine (krb5 1.20.1): kdestroy with no cache exits 0 and says so on stderr',
        argv: [KDESTROY],
        code: 0,
        stdout: '',
        stderr: 'kdestroy: No credentials cache found while destroying cache\n',
        once: true,
      },
    ]);
    const before = events('kerberos.ticket.destroyed').length;
    const r = await t.call('POST', '/api/v2/kerberos/ticket/destroy', { body: {} });
    expect(r.status).toBe(200);
    expect(r.json).toEqual({ message: 'No Kerberos tickets to destroy' });
    expect(events('kerberos.ticket.destroyed').length).toBe(before);
  });

  it('needs kerberos:manage', async () => {
    expect((await t.call('POST', '/api/v2/kerberos/ticket/destroy', { body: {}, token: reader })).status).toBe(403);
    expect(replay.seen).toEqual([]);
  });
});

describe('POST /kerberos/key/list', () => {
  it('lists the configured keytab with klist -k -t -e -- <path>, raw and parsed, for kerberos:read', async () => {
    const argv = [KLIST, '-k', '-t', '-e', '--', keytab];
    const f = as('klist/local-keytab-k-t-e.yaml', argv);
    replay.load([f]);
    const eventsBefore = t.host.db.prepare('SELECT COUNT(*) AS n FROM events').get();
    const r = await t.call<z.infer<typeof keyListAnswer>>('POST', '/api/v2/kerberos/key/list', {
      body: {},
      token: reader,
    });
    expect(r.status, r.text).toBe(200);
    expect(r.json.raw).toBe(f.stdout);
    expect(r.json.json.keytab).toBe('FILE:/tmp/ballast-kdc-OyMxlB/krb5.keytab');
    expect(r.json.json.keys).toEqual(
      ['host', 'host', 'nfs', 'nfs'].map((svc, i) => ({
        kvno: 2,
        timestamp: '2026-11-25T22:13:20Z',
        principal: `${svc}/nas01.example.test@EXAMPLE.TEST`,
        enctype: i % 2 === 0 ? 'aes256-cts-hmac-sha1-96' : 'aes128-cts-hmac-sha1-96',
      })),
    );
    expect(replay.seen).toEqual([{ kind: 'exec', argv, opts: { env: krbEnv } }]);
    // Listing changes nothing, so it emits nothing.
    expect(t.host.db.prepare('SELECT COUNT(*) AS n FROM events').get()).toEqual(eventsBefore);
  });

  it('takes a path; a missing keytab is a 404, a file that is no keytab a 400', async () => {
    const missing = [KLIST, '-k', '-t', '-e', '--', '/tmp/ballast-kdc-OyMxlB/missing.keytab'];
    replay.load([as('klist/local-keytab-missing.yaml', missing)]);
    const r = await t.call('POST', '/api/v2/kerberos/key/list', {
      body: { path: '/tmp/ballast-kdc-OyMxlB/missing.keytab' },
    });
    expect(r.status).toBe(404);
    expect(errorOf(r)).toMatchObject({
      code: 'not_found',
      message: "klist failed: Key table file '/tmp/ballast-kdc-OyMxlB/missing.keytab' not found",
      details: { command: missing, kind: 'keytab-not-found' },
    });
    const empty = [KLIST, '-k', '-t', '-e', '--', '/tmp/ballast-kdc-OyMxlB/empty.keytab'];
    replay.load([as('klist/local-keytab-empty-file.yaml', empty)]);
    const e = await t.call('POST', '/api/v2/kerberos/key/list', {
      body: { path: '/tmp/ballast-kdc-OyMxlB/empty.keytab' },
    });
    expect(e.status).toBe(400);
    expect(errorOf(e)).toMatchObject({
      code: 'bad_request',
      message: 'klist failed: Unsupported key table format version number',
      details: { kind: 'keytab-invalid' },
    });
  });

  it('refuses relative paths, .., blanks, a TYPE: prefix and option-like values; runs nothing', async () => {
    for (const path of [
      'krb5.keytab',
      '/etc/../etc/shadow',
      '/etc/krb5.keytab/..',
      '/a b',
      'MEMORY:x',
      '-k',
      '/etc/krb5.keytab\n',
      '',
    ]) {
      const r = await t.call('POST', '/api/v2/kerberos/key/list', { body: { path } });
      expect(r.status, path).toBe(400);
      expect(issues(r)).toEqual(['body.path']);
    }
    expect(replay.seen).toEqual([]);
  });

  it('needs a token', async () => {
    expect((await t.call('POST', '/api/v2/kerberos/key/list', { body: {}, token: null })).status).toBe(401);
  });
});

afterEach(() => {
  // Each test states its own krb5.conf in beforeEach; a test that removed it must not leak.
  rmSync(t.config.paths.krb5Conf, { force: true });
});

describe('hints for a realm in the wrong place or case (issue 12 item 4)', () => {
  it('a username with @REALM is a 400 saying to use realm; nothing runs', async () => {
    const r = await obtain({ username: 'alice@EXAMPLE.TEST', password: PASSWORD });
    expect(r.status).toBe(400);
    const err = errorOf(r);
    expect(err.code).toBe('validation_failed');
    expect(err.issues).toEqual([
      {
        path: 'body.username',
        message: 'username: give the user name alone and the realm in `realm` (username alice, realm EXAMPLE.TEST)',
      },
    ]);
    expect(replay.seen).toEqual([]);
  });

  it('a failure for a lower-case realm says realms are usually upper case', async () => {
    const lower = [KINIT, '--', 'alice@example.test'];
    replay.load([
      ptyFixture(
        lower,
        1,
        [
          'Password for alice@example.test: ',
          'kinit: Cannot find KDC for realm "example.test" while getting initial credentials',
        ],
        'test-constructed: a lower-case realm',
      ),
    ]);
    const r = await obtain({ realm: 'example.test', username: 'alice', password: PASSWORD });
    expect(r.status).toBe(400);
    const err = errorOf(r);
    expect(detail(r, 'kind')).toBe('realm-unknown');
    expect(err.message).toMatch(
      /\(realm names are case-sensitive and usually upper case: did you mean EXAMPLE\.TEST\?\)$/,
    );
    // an upper-case realm gets no such hint
    const upper = [KINIT, '--', 'alice@NOWHERE.TEST'];
    replay.load([asPty('kinit/local-realm-unknown.yaml', upper)]);
    const u = await obtain({ realm: 'NOWHERE.TEST', username: 'alice', password: PASSWORD });
    expect(errorOf(u).message).not.toContain('upper case');
  });
});
