/**
 * Route tier: the global krb5.conf and the realm files of its include directory, on a private
 * root (every configured path lives under the test host's temporary directory). Asserts the
 * files' exact contents, the kept previous versions, the events and the refusals.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  existsSync,
  mkdirSync,
  readFileSync,
  readdirSync,
  realpathSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { dirname, join } from 'node:path';
import { type Krb5Conf, parseKrb5Conf } from '../../handlers/kerberos/parse/krb5-conf';
import { renderKrb5Conf } from '../../handlers/kerberos/render/krb5-conf';
import { makeTestHost, type TestHost } from '../helpers/host';
import { InspectingReplay, KERBEROS_ROUTES } from './kerberos-helpers';
import { errorOf } from '../helpers/answers';
import type { RealmFile } from '../../handlers/kerberos/responses';

/** GET /kerberos/conf answers (conf-get's response schema) */
interface ConfAnswer {
  raw: string;
  json: Krb5Conf;
}
/** GET /kerberos/realm answers (realmListAnswer) */
type RealmList = Record<string, RealmFile>;

let t: TestHost;
let replay: InspectingReplay;
let reader: string;
let confFile: string;
let dir: string;

beforeAll(async () => {
  replay = new InspectingReplay();
  t = await makeTestHost({ routes: KERBEROS_ROUTES, backend: replay });
  reader = await t.token(['kerberos:read']);
  confFile = t.config.paths.krb5Conf;
  dir = t.config.paths.krb5ConfD;
});
afterAll(() => t.close());
beforeEach(() => {
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  mkdirSync(dirname(confFile), { recursive: true });
  writeFileSync(confFile, ORIGINAL);
});

const ORIGINAL = 'includedir /etc/krb5.conf.d\n\n[libdefaults]\n\tdefault_realm = EXAMPLE.TEST\n';
const NEW =
  'includedir /etc/krb5.conf.d\n\n# managed by the API\n[libdefaults]\n\tdefault_realm = CORP.EXAMPLE.COM\n\tdns_lookup_kdc = true\n';
const LAB =
  '[realms]\n\tLAB.EXAMPLE.COM = {\n\t\tkdc = kdc.lab.example.com:88\n\t\tadmin_server = kdc.lab.example.com\n\t}\n';

/** Where the host keeps the previous version of a replaced or removed file. */
const backupOf = (file: string) =>
  join(t.config.stateDir, 'backups', `${realpathSync(dirname(file))}/${file.slice(file.lastIndexOf('/') + 1)}.prev`);
const events = (kind: string) =>
  (t.host.db.prepare('SELECT data FROM events WHERE kind = ? ORDER BY seq').all(kind) as { data: string }[]).map((e) =>
    JSON.parse(e.data),
  );
const issues = (r: { json: unknown }) => (errorOf(r).issues ?? []).map((i) => `${i.path}: ${i.message}`);
const post = (path: string, body: unknown, token?: string) =>
  t.call('POST', `/api/v2/kerberos${path}`, { body, token });
/** `T`: the route's answer type (handlers/kerberos/requests.ts), unknown when the test reads no success answer */
const get = <T = unknown>(path: string, token?: string) => t.call<T>('GET', `/api/v2/kerberos${path}`, { token });

describe('POST /kerberos/conf/update', () => {
  it('writes the full text atomically, keeps the previous file, records the event', async () => {
    const before = events('kerberos.conf.updated').length;
    const r = await post('/conf/update', { conf: NEW });
    expect(r.status, r.text).toBe(200);
    expect(r.json).toEqual({});
    // the spec's first line is stored naming the configured include directory (issue 12 item 3)
    const stored = NEW.replace('includedir /etc/krb5.conf.d', `includedir ${dir}`);
    expect(readFileSync(confFile, 'utf8')).toBe(stored);
    expect(readFileSync(backupOf(confFile), 'utf8')).toBe(ORIGINAL);
    // No temp file is left beside it (the atomic write renamed it into place).
    expect(readdirSync(dirname(confFile)).filter((n) => n.startsWith('.'))).toEqual([]);
    expect(events('kerberos.conf.updated').slice(before)).toEqual([{}]);
    // GET shows the new file.
    const g = await get<ConfAnswer>('/conf');
    expect(g.json.raw).toBe(stored);
    expect(g.json.json.sections.libdefaults).toEqual({ default_realm: 'CORP.EXAMPLE.COM', dns_lookup_kdc: 'true' });
    // A second update keeps the first one's text.
    expect((await post('/conf/update', { conf: ORIGINAL })).status).toBe(200);
    expect(readFileSync(backupOf(confFile), 'utf8')).toBe(stored);
  });

  it('accepts the configured include directory, and either with a trailing slash', async () => {
    for (const first of [
      `includedir ${dir}`,
      `includedir ${dir}/`,
      'includedir /etc/krb5.conf.d/',
      'includedir /etc/krb5.conf.d  \r',
    ]) {
      const text = `${first}\n[libdefaults]\n\tforwardable = true\n`;
      const r = await post('/conf/update', { conf: text });
      expect(r.status, first).toBe(200);
      expect(readFileSync(confFile, 'utf8')).toBe(
        first.startsWith('includedir /etc/krb5.conf.d')
          ? `includedir ${dir}\n[libdefaults]\n\tforwardable = true\n`
          : text,
      );
    }
  });

  it('refuses (400) text whose first line is not the includedir, and leaves the file alone', async () => {
    rmSync(backupOf(confFile), { force: true });
    const wrong = [
      '[libdefaults]\n\tdefault_realm = X.TEST\n',
      '# comment first\nincludedir /etc/krb5.conf.d\n',
      '\nincludedir /etc/krb5.conf.d\n',
      'includedir /etc/krb5.conf.d.old\n',
      'includedir /srv/elsewhere\n',
      'include /etc/krb5.conf.d\n',
      ' includedir /etc/krb5.conf.d\n',
      'includedir /etc/krb5.conf.d extra\n',
    ];
    for (const conf of wrong) {
      const r = await post('/conf/update', { conf });
      expect(r.status, conf).toBe(400);
      expect(errorOf(r).code).toBe('validation_failed');
      expect(issues(r)).toEqual([
        'body.conf: the first line must be `includedir /etc/krb5.conf.d`: it includes every realm file',
      ]);
    }
    expect(readFileSync(confFile, 'utf8')).toBe(ORIGINAL);
    expect(existsSync(backupOf(confFile))).toBe(false);
  });

  it('refuses text that does not parse, naming the line, and a module directive', async () => {
    const broken = 'includedir /etc/krb5.conf.d\n[realms]\n\tEXAMPLE.TEST = {\n\t\tkdc = k\n';
    const r = await post('/conf/update', { conf: broken });
    expect(r.status).toBe(400);
    expect(issues(r)).toEqual([expect.stringMatching(/^body\.conf: does not parse: krb5\.conf: line \d+: /)]);
    const text = 'includedir /etc/krb5.conf.d\nmodule /srv/share/evil.so:x\n[libdefaults]\n\tx = y\n';
    const m = await post('/conf/update', { conf: text });
    expect(m.status).toBe(400);
    expect(issues(m)).toEqual(['body.conf: the module directive is not allowed']);
    expect((await post('/conf/update', { conf: '' })).status).toBe(400);
    expect((await post('/conf/update', { conf: { libdefaults: {} } })).status).toBe(400);
    expect((await post('/conf/update', {})).status).toBe(400);
    expect(readFileSync(confFile, 'utf8')).toBe(ORIGINAL);
  });

  it('needs kerberos:manage', async () => {
    expect((await post('/conf/update', { conf: NEW }, reader)).status).toBe(403);
    expect(readFileSync(confFile, 'utf8')).toBe(ORIGINAL);
  });
});

describe('realm files', () => {
  const file = (name: string) => join(dir, name);

  it('an empty or absent include directory lists as {}', async () => {
    expect((await get('/realm')).json).toEqual({});
    rmSync(dir, { recursive: true });
    const r = await get<RealmList>('/realm', reader);
    expect(r.status).toBe(200);
    expect(r.json).toEqual({});
  });

  it('create from raw text writes <name>.conf exactly; list and details show it', async () => {
    const before = events('kerberos.realm.created').length;
    const r = await post('/realm/create', { name: 'lab', conf: LAB });
    expect(r.status, r.text).toBe(200);
    expect(r.json).toEqual({});
    expect(readFileSync(file('lab.conf'), 'utf8')).toBe(LAB);
    expect(events('kerberos.realm.created').slice(before)).toEqual([{ name: 'lab' }]);
    const json = {
      directives: [],
      sections: {
        realms: { 'LAB.EXAMPLE.COM': { kdc: ['kdc.lab.example.com:88'], admin_server: 'kdc.lab.example.com' } },
      },
      finals: [],
    };
    expect((await get('/realm', reader)).json).toEqual({ 'lab.conf': { raw: LAB, json } });
    expect((await get('/realm/lab/details', reader)).json).toEqual({ raw: LAB, json });
  });

  it('create from an object renders krb5.conf syntax, and rendering then parsing gives the object back', async () => {
    const sections = {
      realms: {
        'CORP.EXAMPLE.COM': {
          kdc: ['dc01.corp.example.com', 'dc02.corp.example.com:88'],
          admin_server: 'dc01.corp.example.com',
          auth_to_local: ['RULE:[1:$1@$0](.*@CORP\\.EXAMPLE\\.COM)s/@.*//', 'DEFAULT'],
          default_domain: ' corp.example.com  quoted because of blanks ',
        },
      },
      domain_realm: { '.corp.example.com': 'CORP.EXAMPLE.COM', 'corp.example.com': 'CORP.EXAMPLE.COM' },
    };
    const r = await post('/realm/create', { name: 'corp', conf: sections });
    expect(r.status, r.text).toBe(200);
    const written = readFileSync(file('corp.conf'), 'utf8');
    expect(written).toBe(
      [
        '[realms]',
        '\tCORP.EXAMPLE.COM = {',
        '\t\tkdc = dc01.corp.example.com',
        '\t\tkdc = dc02.corp.example.com:88',
        '\t\tadmin_server = dc01.corp.example.com',
        '\t\tauth_to_local = RULE:[1:$1@$0](.*@CORP\\.EXAMPLE\\.COM)s/@.*//',
        '\t\tauth_to_local = DEFAULT',
        '\t\tdefault_domain = " corp.example.com  quoted because of blanks "',
        '\t}',
        '',
        '[domain_realm]',
        '\t.corp.example.com = CORP.EXAMPLE.COM',
        '\tcorp.example.com = CORP.EXAMPLE.COM',
        '',
      ].join('\n'),
    );
    expect(written).toBe(renderKrb5Conf(sections));
    expect(parseKrb5Conf(written)).toEqual({ directives: [], sections, finals: [] });
    expect((await get<RealmFile>('/realm/corp/details')).json.json?.sections).toEqual(sections);

    // The full shape (directives, sections, finals) round-trips too.
    const full = {
      directives: [],
      sections: { realms: { 'X.TEST': { kdc: ['k1'] } } },
      finals: [['realms', 'X.TEST']],
    };
    expect((await post('/realm/create', { name: 'x_test-1', conf: full })).status).toBe(200);
    expect(readFileSync(file('x_test-1.conf'), 'utf8')).toBe('[realms]\n\tX.TEST = {\n\t\tkdc = k1\n\t}*\n');
    expect((await get<RealmFile>('/realm/x_test-1/details')).json.json).toEqual(full);
  });

  it('create refuses an existing name (409) and leaves the file as it was', async () => {
    writeFileSync(file('lab.conf'), LAB);
    const before = events('kerberos.realm.created').length;
    const r = await post('/realm/create', { name: 'lab', conf: '[realms]\n' });
    expect(r.status).toBe(409);
    expect(errorOf(r)).toMatchObject({ code: 'conflict', message: 'realm file lab.conf already exists' });
    expect(readFileSync(file('lab.conf'), 'utf8')).toBe(LAB);
    expect(events('kerberos.realm.created').length).toBe(before);
  });

  it('names are strict: no /, .., NUL, leading - or dot; nothing is written', async () => {
    const bad = [
      '../krb5',
      '../../etc/passwd',
      'a/b',
      '.hidden',
      '-rf',
      'a..b',
      'a\u0000b',
      '',
      'a b',
      'x'.repeat(70),
      'tab\t',
      'ünï',
    ];
    for (const name of bad) {
      const r = await post('/realm/create', { name, conf: LAB });
      expect(r.status, JSON.stringify(name)).toBe(400);
      expect(issues(r)[0]).toMatch(/^body\.name: realm file name: /);
    }
    expect(readdirSync(dir)).toEqual([]);
    // In the URL too, however it is encoded.
    for (const enc of ['..', '%2E%2E', '..%2Fkrb5', '%2Fetc%2Fpasswd', 'a%00b', '-x', '.x', 'a..conf']) {
      for (const [m, path, body] of [
        ['GET', `/realm/${enc}/details`, undefined],
        ['POST', `/realm/${enc}/update`, { conf: LAB }],
        ['POST', `/realm/${enc}/delete`, {}],
      ] as const) {
        const r = await t.call(m, `/api/v2/kerberos${path}`, { body });
        // `..` segments are resolved by URL parsing before routing, so some never reach the route.
        expect([400, 404], `${m} ${path}`).toContain(r.status);
        if (r.status === 400) expect(issues(r)[0]).toMatch(/^params\.name: /);
        else expect(errorOf(r).code).toBe('route_not_found');
      }
    }
    expect(readFileSync(confFile, 'utf8')).toBe(ORIGINAL);
  });

  it('refuses conf that would not render or parse, with the path of the problem', async () => {
    const cases: [unknown, string][] = [
      [{ realms: { 'X.TEST': { 'bad tag': 'v' } } }, 'body.conf.realms.X.TEST.bad tag: whitespace in tag'],
      [{ realms: { 'X.TEST': { kdc: ['ok', 'bell\u0007'] } } }, 'body.conf.realms.X.TEST.kdc.1: control character'],
      ['[realms]\n\tX = {\n', 'body.conf: does not parse'],
      [
        { directives: [{ type: 'module', path: '/srv/x.so', residual: 'r' }], sections: {} },
        'body.conf: the module directive is not allowed',
      ],
      [42, 'body.conf: krb5.conf text, or an object of sections'],
      [{ realms: { 'X.TEST': { kdc: 5 } } }, 'body.conf: krb5.conf text, or an object of sections'],
    ];
    for (const [conf, expected] of cases) {
      const r = await post('/realm/create', { name: 'x', conf });
      expect(r.status, JSON.stringify(conf)).toBe(400);
      expect(issues(r).join('\n'), JSON.stringify(conf)).toContain(expected);
    }
    expect(readdirSync(dir)).toEqual([]);
  });

  it('details of an absent file is a 404', async () => {
    const r = await get('/realm/nope/details');
    expect(r.status).toBe(404);
    expect(errorOf(r)).toMatchObject({ code: 'not_found', message: 'realm file nope.conf not found' });
  });

  it('update replaces an existing file (keeping the previous one) and never creates one', async () => {
    writeFileSync(file('lab.conf'), LAB);
    const before = events('kerberos.realm.updated').length;
    const r = await post('/realm/lab/update', {
      conf: { realms: { 'LAB.EXAMPLE.COM': { kdc: ['kdc2.lab.example.com'] } } },
    });
    expect(r.status, r.text).toBe(200);
    expect(r.json).toEqual({});
    expect(readFileSync(file('lab.conf'), 'utf8')).toBe(
      '[realms]\n\tLAB.EXAMPLE.COM = {\n\t\tkdc = kdc2.lab.example.com\n\t}\n',
    );
    expect(readFileSync(backupOf(file('lab.conf')), 'utf8')).toBe(LAB);
    expect(events('kerberos.realm.updated').slice(before)).toEqual([{ name: 'lab' }]);
    expect((await post('/realm/lab/update', { conf: LAB })).status).toBe(200);
    expect(readFileSync(file('lab.conf'), 'utf8')).toBe(LAB);

    const missing = await post('/realm/nope/update', { conf: LAB });
    expect(missing.status).toBe(404);
    expect(errorOf(missing).message).toBe('realm file nope.conf not found');
    expect(existsSync(file('nope.conf'))).toBe(false);
    expect((await post('/realm/lab/update', {})).status).toBe(400);
  });

  it('delete removes the file, names it, keeps a copy, and 404s the second time', async () => {
    writeFileSync(file('lab.conf'), LAB);
    const before = events('kerberos.realm.deleted').length;
    const r = await post('/realm/lab/delete', {});
    expect(r.status, r.text).toBe(200);
    expect(r.json).toEqual({ message: 'Deleted realm file lab.conf' });
    expect(existsSync(file('lab.conf'))).toBe(false);
    expect(readFileSync(backupOf(file('lab.conf')), 'utf8')).toBe(LAB);
    expect(events('kerberos.realm.deleted').slice(before)).toEqual([{ name: 'lab' }]);
    const again = await post('/realm/lab/delete', {});
    expect(again.status).toBe(404);
    expect(errorOf(again).message).toBe('realm file lab.conf not found');
  });

  it('lists what MIT includes: .conf files and bare names, not backups, dotfiles, directories; a broken file shows its error', async () => {
    writeFileSync(file('lab.conf'), LAB);
    writeFileSync(file('extra'), '[libdefaults]\n\tforwardable = false\n');
    writeFileSync(file('broken.conf'), '[realms]\n\tX = {\n');
    writeFileSync(file('lab.conf~'), LAB);
    writeFileSync(file('lab.conf.rpmsave'), LAB);
    writeFileSync(file('.hidden.conf'), LAB);
    mkdirSync(file('sub.conf'));
    symlinkSync('/etc/hostname', file('link.conf'));
    const r = await get<RealmList>('/realm', reader);
    expect(r.status, r.text).toBe(200);
    expect(Object.keys(r.json)).toEqual(['broken.conf', 'extra', 'lab.conf']);
    expect(r.json['broken.conf']).toEqual({
      raw: '[realms]\n\tX = {\n',
      json: null,
      error: expect.stringMatching(/^krb5\.conf: line \d+: /),
    });
    expect(r.json.extra.json?.sections).toEqual({ libdefaults: { forwardable: 'false' } });
    // The broken one is fixable through the API.
    expect((await get('/realm/broken/details')).json).toEqual(r.json['broken.conf']);
    expect((await post('/realm/broken/update', { conf: LAB })).status).toBe(200);
  });

  it('reading needs kerberos:read; changing needs kerberos:manage', async () => {
    writeFileSync(file('lab.conf'), LAB);
    expect((await get('/realm/lab/details', reader)).status).toBe(200);
    expect((await post('/realm/create', { name: 'n', conf: LAB }, reader)).status).toBe(403);
    expect((await post('/realm/lab/update', { conf: '' }, reader)).status).toBe(403);
    expect((await post('/realm/lab/delete', {}, reader)).status).toBe(403);
    expect((await get('/realm', null as unknown as string)).status).toBe(401);
    expect(readdirSync(dir)).toEqual(['lab.conf']);
    expect(readFileSync(file('lab.conf'), 'utf8')).toBe(LAB);
  });

  it('runs no command', () => {
    expect(replay.seen).toEqual([]);
  });
});

describe('what a written configuration may hold (issue 27 item 9)', () => {
  const file = (name: string) => join(dir, name);
  /** the one issue of a 400, e.g. `body.conf: line 3 \`…\`: why` */
  const refusedAt = async (path: string, body: unknown) => {
    const r = await post(path, body);
    expect(r.status, `${path} ${JSON.stringify(body)}`).toBe(400);
    expect(errorOf(r).code).toBe('validation_failed');
    return issues(r);
  };
  const LAB_BLOCK = '[realms]\n\tLAB.EXAMPLE.COM = {\n\t\tkdc = kdc.lab.example.com\n\t}\n';

  it('a realm file holds [realms] with one realm of known relations and [domain_realm]; anything else is refused naming the line', async () => {
    const cases: [string, number, string, string][] = [
      [`${LAB_BLOCK}[dbmodules]\n\tdb_module_dir = /tmp\n`, 5, '[dbmodules]', 'not [dbmodules]'],
      ['[libdefaults]\n\tdefault_ccache_name = FILE:/etc/shadow\n', 1, '[libdefaults]', 'not [libdefaults]'],
      ['[libdefaults]\n\tk5login_directory = /tmp\n', 1, '[libdefaults]', 'not [libdefaults]'],
      ['[libdefaults]\n\tdefault_keytab_name = FILE:/tmp/k\n', 1, '[libdefaults]', 'not [libdefaults]'],
      [`${LAB_BLOCK}[capaths]\n\tLAB.EXAMPLE.COM = {\n\t\tX = .\n\t}\n`, 5, '[capaths]', 'not [capaths]'],
      ['[plugins]\n\tccselect = {\n\t\tdisable = k5identity\n\t}\n', 1, '[plugins]', 'not [plugins]'],
      [
        '[realms]\n\tLAB.EXAMPLE.COM = {\n\t\tkdc = k\n\t\tdatabase_name = /tmp/principal\n\t}\n',
        4,
        'database_name = /tmp/principal',
        'database_name is not a realm relation',
      ],
      [
        '[realms]\n\tLAB.EXAMPLE.COM = {\n\t\tpkinit_anchors = FILE:/tmp/ca.pem\n\t}\n',
        3,
        'pkinit_anchors = FILE:/tmp/ca.pem',
        'pkinit_anchors is not a realm relation',
      ],
      [
        '[realms]\n\tLAB.EXAMPLE.COM = {\n\t\thttp_anchors = DIR:/tmp\n\t}\n',
        3,
        'http_anchors = DIR:/tmp',
        'not a realm relation',
      ],
      [
        `${LAB_BLOCK}\tOTHER.EXAMPLE.COM = {\n\t\tkdc = k\n\t}\n`,
        5,
        'OTHER.EXAMPLE.COM = {',
        'a realm file holds one realm: LAB.EXAMPLE.COM is here already',
      ],
      ['[realms]\n\tLAB.EXAMPLE.COM = kdc\n', 2, 'LAB.EXAMPLE.COM = kdc', 'a realm in [realms] is a block'],
      ['[realms]\n\tLAB.EXAMPLE.COM = {\n\t\tkdc = {\n\t\t\tx = y\n\t\t}\n\t}\n', 3, 'kdc = {', 'kdc takes a value'],
      [
        '[realms]\n\tLAB.EXAMPLE.COM = {\n\t\tauth_to_local_names = alice\n\t}\n',
        3,
        'auth_to_local_names = alice',
        'auth_to_local_names is a block',
      ],
      [
        '[realms]\n\tLAB.EXAMPLE.COM = {\n\t\tauth_to_local_names = {\n\t\t\tx = {\n\t\t\t}\n\t\t}\n\t}\n',
        4,
        'x = {',
        'no subsections',
      ],
      ['[domain_realm]\n\tlab = {\n\t\tx = y\n\t}\n', 2, 'lab = {', 'no subsections'],
      [`include ${dir}/other.conf\n${LAB_BLOCK}`, 1, `include ${dir}/other.conf`, 'include lines belong in krb5.conf'],
    ];
    for (const [conf, line, text, why] of cases) {
      for (const [path, body] of [
        ['/realm/create', { name: 'lab', conf }],
        ['/realm/lab/update', { conf }],
      ] as const) {
        if (path === '/realm/lab/update') writeFileSync(file('lab.conf'), LAB);
        const got = await refusedAt(path, body);
        expect(got.length, conf).toBe(1);
        expect(got[0].startsWith(`body.conf: line ${line} \`${text}\`: `), `${conf} -> ${got[0]}`).toBe(true);
        expect(got[0], conf).toContain(why);
        expect(readdirSync(dir)).toEqual(path === '/realm/lab/update' ? ['lab.conf'] : []);
        if (path === '/realm/lab/update') {
          expect(readFileSync(file('lab.conf'), 'utf8')).toBe(LAB);
          rmSync(file('lab.conf'));
        }
      }
    }
    // an object is checked like text, on the rendered file
    expect(
      await refusedAt('/realm/create', {
        name: 'lab',
        conf: { libdefaults: { default_ccache_name: 'FILE:/etc/shadow' } },
      }),
    ).toEqual([
      'body.conf: line 1 `[libdefaults]`: a realm file holds only [realms] (one realm) and [domain_realm], not [libdefaults]',
    ]);
    expect(readdirSync(dir)).toEqual([]);
  });

  it('a realm file named after a realm holds that realm; every realm relation of krb5.conf(5) is accepted', async () => {
    const named = await refusedAt('/realm/create', {
      name: 'EXAMPLE.TEST',
      conf: '[realms]\n\tOTHER.TEST = {\n\t\tkdc = k\n\t}\n',
    });
    expect(named).toEqual([
      'body.conf: line 2 `OTHER.TEST = {`: realm file EXAMPLE.TEST is named after realm EXAMPLE.TEST: its [realms] holds only that realm',
    ]);
    const full = [
      '[realms]',
      '\texample.test = {',
      '\t\tkdc = kdc1.example.test:88',
      '\t\tkdc = kdc2.example.test',
      '\t\tadmin_server = kdc1.example.test',
      '\t\tmaster_kdc = kdc1.example.test',
      '\t\tprimary_kdc = kdc1.example.test',
      '\t\tkpasswd_server = kdc1.example.test',
      '\t\tdefault_domain = example.test',
      '\t\tdisable_encrypted_timestamp = true',
      '\t\tauth_to_local = RULE:[1:$1@$0](.*@EXAMPLE\\.TEST)s/@.*//',
      '\t\tauth_to_local = DEFAULT',
      '\t\tauth_to_local_names = {',
      '\t\t\talice = root',
      '\t\t}',
      '\t}',
      '\texample.test = {',
      '\t\tkdc = kdc3.example.test',
      '\t}',
      '',
      '[domain_realm]',
      '\t.example.test = example.test',
      '\texample.test = example.test',
      '',
    ].join('\n');
    const r = await post('/realm/create', { name: 'example.test.conf', conf: full });
    expect(r.status, r.text).toBe(200);
    expect(readFileSync(file('example.test.conf'), 'utf8')).toBe(full);
    // a name without a dot is a label, not a realm: any one realm
    expect((await post('/realm/create', { name: 'lab', conf: LAB })).status).toBe(200);
    expect((await post('/realm/lab/update', { conf: '[realms]\n\tOTHER.TEST = {\n\t\tkdc = k\n\t}\n' })).status).toBe(
      200,
    );
  });

  it('krb5.conf keeps relations naming files or directories only inside the configured Kerberos paths', async () => {
    const { keytab, krb5Ccache: ccache } = t.config.paths;
    const keytabRoot = '/etc/ballast/keytabs';
    const head = 'includedir /etc/krb5.conf.d\n[libdefaults]\n\tforwardable = true\n';
    const refused: [string, string][] = [
      [
        'default_ccache_name = FILE:/etc/shadow',
        `/etc/shadow is outside the Kerberos paths this host manages (${ccache})`,
      ],
      ['default_ccache_name = /etc/shadow', '/etc/shadow is outside'],
      [`default_ccache_name = FILE:${ccache}x`, `${ccache}x is outside`],
      [`default_ccache_name = FILE:${keytab}`, `${keytab} is outside`],
      ['default_ccache_name = DIR::/tmp/cc', '/tmp/cc is outside'],
      [`default_ccache_name = FILE:${ccache}/../../etc/shadow`, 'has . or .. segments'],
      ['default_ccache_name = FILE:/tmp/krb5cc_%{uid}', 'parameter expansion'],
      ['default_ccache_name = XCC:thing', 'cache type XCC is not one this host can check'],
      ['k5login_directory = /tmp', '/tmp is outside'],
      ['k5login_directory = tmp', 'tmp is not an absolute path'],
      ['default_keytab_name = FILE:/tmp/k', '/tmp/k is outside'],
      [`default_keytab_name = FILE:${keytab}.evil`, `${keytab}.evil is outside`],
      [`default_keytab_name = ${keytabRoot}-evil/k`, `${keytabRoot}-evil/k is outside`],
      [`default_keytab_name = FILE:${ccache}`, `${ccache} is outside`],
      ['default_client_keytab_name = WRFILE:/etc/passwd', '/etc/passwd is outside'],
      ['default_keytab_name = KEYRING:x', 'keytab type KEYRING is not one this host can check'],
      ['default_rcache_name = file2:/tmp/rc', '/tmp/rc is outside'],
      ['kcm_socket = /run/evil.sock', '/run/evil.sock is outside'],
      [`db_module_dir = ${dir}`, 'db_module_dir is not allowed'],
      ['pkinit_anchors = FILE:/etc/ssl/ca.pem', '/etc/ssl/ca.pem is outside'],
      [`pkinit_identities = FILE:${dir}/c.pem,/tmp/k.pem`, '/tmp/k.pem is outside'],
      ['pkinit_identities = PKCS11:/usr/lib/evil.so', 'PKCS11: loads a module'],
      ['http_anchors = ENV:X509_CA', 'names a path this host cannot check'],
      ['some_future_relation = /etc/shadow', '/etc/shadow is outside'],
      ['some_future_relation = FILE:/etc/shadow', '/etc/shadow is outside'],
    ];
    for (const [relation, why] of refused) {
      const got = await refusedAt('/conf/update', { conf: `${head}\t${relation}\n` });
      expect(got, relation).toEqual([expect.stringMatching(/^body\.conf: line 4 `/)]);
      expect(got[0].startsWith(`body.conf: line 4 \`${relation}\`: `), got[0]).toBe(true);
      expect(got[0], relation).toContain(why);
    }
    // nested: kdc.conf relations in a realm's block, [dbmodules], [logging], [appdefaults]
    const nested: [string, number, string][] = [
      ['[realms]\n\tX.TEST = {\n\t\tdatabase_name = /var/lib/krb5kdc/principal\n\t}\n', 6, 'database_name'],
      ['[realms]\n\tX.TEST = {\n\t\tacl_file = /etc/krb5kdc/kadm5.acl\n\t}\n', 6, 'acl_file'],
      ['[dbmodules]\n\tdb = {\n\t\tdb_module_dir = /tmp\n\t}\n', 6, 'db_module_dir'],
      ['[logging]\n\tkdc = FILE:/etc/cron.d/x\n', 5, 'kdc = FILE:/etc/cron.d/x'],
      ['[logging]\n\tdefault = DEVICE=/dev/sda\n', 5, 'default = DEVICE=/dev/sda'],
      ['[appdefaults]\n\tpam = {\n\t\tccache_dir = /tmp\n\t}\n', 6, 'ccache_dir = /tmp'],
    ];
    for (const [tail, line, text] of nested) {
      const got = await refusedAt('/conf/update', { conf: `${head}${tail}` });
      expect(got[0], tail).toMatch(new RegExp(`^body\\.conf: line ${line} \``));
      expect(got[0], tail).toContain(text);
    }
    expect(readFileSync(confFile, 'utf8')).toBe(ORIGINAL);

    // inside the configured paths, or naming no path at all: written as given
    const accepted = [
      `default_ccache_name = FILE:${ccache}`,
      `default_ccache_name = ${ccache}`,
      'default_ccache_name = KEYRING:persistent:%{uid}',
      `default_keytab_name = FILE:${keytab}`,
      `default_client_keytab_name = ${keytabRoot}/client.keytab`,
      `default_keytab_name = WRFILE:${keytabRoot}`,
      'default_rcache_name = dfl:',
      'kcm_socket = -',
      `k5login_directory = ${dir}/k5login`,
      'kdc = file:88',
    ];
    for (const relation of accepted) {
      const conf = `${head}\t${relation}\n[logging]\n\tkdc = SYSLOG:INFO\n`;
      const r = await post('/conf/update', { conf });
      expect(r.status, `${relation}: ${r.text}`).toBe(200);
      expect(readFileSync(confFile, 'utf8')).toBe(conf.replace('/etc/krb5.conf.d', dir));
    }
  });
});
