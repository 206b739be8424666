/**
 * Route tier: the trust store routes on a private root with replayed update-ca-certificates.
 * Asserts the exact argv, the file bytes and modes, the events, and every refusal.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  existsSync,
  mkdirSync,
  readFileSync,
  readdirSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { X509Certificate } from 'node:crypto';
import { fixture, makeTestHost, type TestHost } from '../helpers/host';
import { privateDir } from '../helpers/tmp';
import { makePki, type Pki } from '../helpers/certificate-pki';
import {
  CERTIFICATE_ROUTES,
  FRESH_OUTPUT,
  UPDATE_OUTPUT,
  errorCode,
  errorMessage,
  issuesOf,
  updateArgv,
} from './certificate-helpers';

let t: TestHost;
let pki: Pki;
let dir: string;
let reader: string;

beforeAll(async () => {
  pki = makePki(privateDir('certificate-pki'));
  t = await makeTestHost({ routes: CERTIFICATE_ROUTES });
  dir = t.config.paths.caCertificates;
  reader = await t.token(['certificate:read']);
});
afterAll(() => t.close());
beforeEach(() => {
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  t.replay!.calls.length = 0;
});

async function call(
  method: string,
  path: string,
  body?: unknown,
  token?: string,
): Promise<{ status: number; json: unknown }> {
  const r = await t.call(method, `/api/v2/certificate${path}`, { body, token });
  const json: unknown = r.json;
  return { status: r.status, json };
}
const events = (kind: string) =>
  (t.host.db.prepare('SELECT data FROM events WHERE kind = ? ORDER BY seq').all(kind) as { data: string }[]).map(
    (e): unknown => JSON.parse(e.data),
  );
const intentFile = () => join(t.config.stateDir, 'certificate', 'trust-intent.json');
const lastTrustAudit = () =>
  (
    t.host.db.prepare("SELECT note FROM audit_log WHERE kind = 'certificate/trust' ORDER BY id DESC LIMIT 1").get() as
      { note: string } | undefined
  )?.note;
const addFixture = () => t.replay!.load([fixture(updateArgv(t.config.paths, false), UPDATE_OUTPUT, { once: true })]);
const freshFixture = () => t.replay!.load([fixture(updateArgv(t.config.paths, true), FRESH_OUTPUT, { once: true })]);

describe('GET /certificate', () => {
  it('lists the regular .crt files, sorted; not other files, directories, symlinks or hidden files', async () => {
    expect(await call('GET', '')).toEqual({ status: 200, json: [] });
    writeFileSync(join(dir, 'b-ca.crt'), pki.a.root);
    writeFileSync(join(dir, 'a-ca.crt'), pki.b.root);
    writeFileSync(join(dir, 'notes.txt'), 'x');
    writeFileSync(join(dir, '.hidden.crt'), pki.a.root);
    mkdirSync(join(dir, 'sub.crt'));
    symlinkSync(join(dir, 'a-ca.crt'), join(dir, 'link.crt'));
    expect(await call('GET', '', undefined, reader)).toEqual({ status: 200, json: ['a-ca.crt', 'b-ca.crt'] });
  });

  it('answers [] when the directory does not exist', async () => {
    rmSync(dir, { recursive: true });
    expect(await call('GET', '')).toEqual({ status: 200, json: [] });
  });
});

describe('GET /certificate/{name}/details', () => {
  it('answers the PEM text, with or without .crt', async () => {
    writeFileSync(join(dir, 'corp.crt'), pki.a.root);
    expect(await call('GET', '/corp/details', undefined, reader)).toEqual({
      status: 200,
      json: { certificate: pki.a.root },
    });
    expect(await call('GET', '/corp.crt/details')).toEqual({ status: 200, json: { certificate: pki.a.root } });
  });

  it('404 for an unknown name, 409 for a symlink, 400 for names that could be paths or options', async () => {
    const r = await call('GET', '/nosuch/details');
    expect([r.status, errorCode(r.json), errorMessage(r.json)]).toEqual([
      404,
      'not_found',
      'no trusted certificate named nosuch',
    ]);
    writeFileSync(join(dir, 'real.crt'), pki.a.root);
    symlinkSync(join(dir, 'real.crt'), join(dir, 'link.crt'));
    expect((await call('GET', '/link/details')).status).toBe(409);
    for (const bad of ['.hidden', '-x', 'a%2Fb', 'a..b', 'x%00y', 'a%20b', 'x'.repeat(65)]) {
      const b = await call('GET', `/${bad}/details`);
      expect([bad, b.status]).toEqual([bad, 400]);
      expect(issuesOf(b.json)[0]).toMatch(/^params\.name: /);
    }
  });
});

describe('POST /certificate/add', () => {
  it('writes <name>.crt (0644, re-encoded PEM), runs update-ca-certificates, answers its output and records the event', async () => {
    addFixture();
    const before = events('certificate.trusted.added').length;
    const r = await call('POST', '/add', { name: 'corp-root.crt', certificate: `\n  ${pki.a.root}\n\n` });
    const c = new X509Certificate(pki.a.root);
    expect(r).toEqual({
      status: 200,
      json: `Added corp-root.crt (${c.subject.replace(/\n/g, ', ')}, SHA-256 ${c.fingerprint256}).\n${UPDATE_OUTPUT}`,
    });
    expect(t.replay!.calls.map((c) => c.argv)).toEqual([updateArgv(t.config.paths, false)]);
    const file = join(dir, 'corp-root.crt');
    expect(readFileSync(file, 'utf8')).toBe(new X509Certificate(pki.a.root).toString());
    expect(statSync(file).mode & 0o777).toBe(0o644);
    expect(readdirSync(dir)).toEqual(['corp-root.crt']);
    expect(events('certificate.trusted.added').slice(before)).toEqual([{ name: 'corp-root' }]);
  });

  it('takes exactly one PEM CERTIFICATE block: whitespace around it only, base64 inside (CRLF lines too); else 400', async () => {
    const crlf = pki.a.root.replace(/\n/g, '\r\n');
    const lines = pki.a.root.trim().split('\n');
    // node:crypto decodes this one (a NUL ending a line): only the layout check refuses it
    const withNul = [...lines.slice(0, 2), `${lines[2]}\0`, ...lines.slice(3)].join('\n');
    const cases: [string, string][] = [
      [
        pki.a.intermediate + pki.a.root,
        'body.certificate: holds 2 certificates; add each CA under its own name (update-ca-certificates links single-certificate files only)',
      ],
      [`subject=CN=corp\n${pki.a.root}`, 'body.certificate: has text before the PEM block; give the block alone'],
      [`${pki.a.root}issuer=CN=corp\n`, 'body.certificate: has text after the PEM block; give the block alone'],
      [
        withNul,
        'body.certificate: line 3 of the PEM block is not base64 (a NUL character); give the block as exported',
      ],
      [
        pki.a.root.replace(lines[3], `${lines[3]} `),
        'body.certificate: line 4 of the PEM block is not base64 (other characters); give the block as exported',
      ],
    ];
    for (const [certificate, issue] of cases) {
      const r = await call('POST', '/add', { name: 'k', certificate });
      expect([r.status, issuesOf(r.json)]).toEqual([400, [issue]]);
    }
    expect(readdirSync(dir)).toEqual([]);
    expect(t.replay!.calls).toEqual([]);
    addFixture();
    expect((await call('POST', '/add', { name: 'crlf', certificate: crlf })).status).toBe(200);
    expect(readFileSync(join(dir, 'crlf.crt'), 'utf8')).toBe(new X509Certificate(pki.a.root).toString());
  });

  it('409 naming the existing file when the same certificate is trusted under another name; nothing runs', async () => {
    writeFileSync(join(dir, 'corp.crt'), pki.a.root);
    writeFileSync(join(dir, 'both.crt'), pki.b.intermediate + pki.b.root);
    const fp = (pem: string) => new X509Certificate(pem).fingerprint256;
    for (const [pem, as, subject] of [
      [pki.a.root, 'corp.crt', new X509Certificate(pki.a.root).subject],
      [pki.b.root, 'both.crt', new X509Certificate(pki.b.root).subject],
    ] as const) {
      const r = await call('POST', '/add', { name: 'again', certificate: pem });
      expect([r.status, errorCode(r.json), errorMessage(r.json)]).toEqual([
        409,
        'conflict',
        `this certificate (${subject.replace(/\n/g, ', ')}, SHA-256 ${fp(pem)}) is already trusted as ${as}`,
      ]);
    }
    expect(readdirSync(dir).sort()).toEqual(['both.crt', 'corp.crt']);
    expect(t.replay!.calls).toEqual([]);
    expect(existsSync(intentFile())).toBe(false);
  });

  it('an RSA key under 2048 bits is a 400, as in ingest (one rule), whatever allowLeaf and allowExpired say', async () => {
    const r = await call('POST', '/add', {
      name: 'weak',
      certificate: pki.rsa1024Server,
      allowLeaf: true,
      allowExpired: true,
    });
    expect([r.status, issuesOf(r.json)]).toEqual([
      400,
      ['body.certificate: the certificate (CN=localhost): RSA key of 1024 bits is too small (at least 2048)'],
    ]);
    expect(readdirSync(dir)).toEqual([]);
  });

  it('409 when the name exists; the file is not touched and nothing runs', async () => {
    writeFileSync(join(dir, 'corp.crt'), 'old');
    const r = await call('POST', '/add', { name: 'corp', certificate: pki.a.root });
    expect([r.status, errorMessage(r.json)]).toEqual([409, 'a trusted certificate named corp already exists']);
    expect(readFileSync(join(dir, 'corp.crt'), 'utf8')).toBe('old');
    expect(t.replay!.calls).toEqual([]);
  });

  it('400 naming body.certificate for a private key, garbage, a leaf or an expired certificate; nothing written', async () => {
    const cases: [unknown, string][] = [
      [
        { name: 'k', certificate: pki.a.root + pki.a.private_key },
        'body.certificate: contains a private key; the trust store takes certificates only (and the key is now exposed: replace it)',
      ],
      [{ name: 'k', certificate: 'hello' }, 'body.certificate: no PEM certificate found'],
      [
        { name: 'k', certificate: '-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n' },
        expect.stringMatching(/^body\.certificate: block 1 is not a valid certificate/),
      ],
      [
        { name: 'k', certificate: pki.leaf },
        'body.certificate: the certificate (CN=just-a-leaf) is not a CA certificate; set allowLeaf to trust it anyway',
      ],
      [
        { name: 'k', certificate: pki.expiredServer, allowLeaf: true },
        expect.stringMatching(
          /^body\.certificate: the certificate \(CN=localhost\) expired on 2021-01-01T00:00:00\.000Z; set allowExpired/,
        ),
      ],
      [{ name: '../etc/passwd', certificate: pki.a.root }, expect.stringMatching(/^body\.name: /)],
      [{ name: 'k', certificate: pki.a.root, extra: 1 }, expect.stringMatching(/^body: /)],
    ];
    for (const [body, issue] of cases) {
      const r = await call('POST', '/add', body);
      expect(r.status).toBe(400);
      expect(issuesOf(r.json)[0]).toEqual(issue);
    }
    expect(readdirSync(dir)).toEqual([]);
    expect(t.replay!.calls).toEqual([]);
  });

  it('takes a leaf with allowLeaf and an expired one with allowExpired', async () => {
    addFixture();
    expect((await call('POST', '/add', { name: 'leaf', certificate: pki.leaf, allowLeaf: true })).status).toBe(200);
    addFixture();
    expect(
      (await call('POST', '/add', { name: 'old', certificate: pki.expiredServer, allowLeaf: true, allowExpired: true }))
        .status,
    ).toBe(200);
    expect(readdirSync(dir)).toEqual(['leaf.crt', 'old.crt']);
  });

  it('502 when update-ca-certificates fails: the new file goes, its partial bundle too, and the tool runs again with --fresh', async () => {
    t.replay!.load([
      fixture(updateArgv(t.config.paths, false), '', {
        once: true,
        code: 1,
        stderr: 'update-ca-certificates: disk full\n',
      }),
    ]);
    freshFixture();
    // what a tool stopped part way leaves: the next run would append to it
    const partial = join(t.config.paths.sslCerts, 'ca-certificates.crt.new');
    writeFileSync(partial, pki.b.root);
    const before = events('certificate.trusted.added').length;
    const r = await call('POST', '/add', { name: 'corp', certificate: pki.a.root });
    expect([r.status, errorCode(r.json), errorMessage(r.json)]).toEqual([
      502,
      'command_failed',
      'update-ca-certificates failed (exit 1): update-ca-certificates: disk full; the trust store was put back as it was',
    ]);
    expect(t.replay!.calls.map((c) => c.argv)).toEqual([
      updateArgv(t.config.paths, false),
      updateArgv(t.config.paths, true),
    ]);
    expect(readdirSync(dir)).toEqual([]);
    expect(existsSync(partial)).toBe(false);
    expect(existsSync(intentFile())).toBe(false);
    expect(events('certificate.trusted.added').length).toBe(before);
    expect(lastTrustAudit()).toBe(
      'add of corp.crt failed; rolled back (file as before, update-ca-certificates --fresh)',
    );
  });

  it('a repair that fails is kept and retried before the next change; until it works nothing changes', async () => {
    const failing = (fresh: boolean) =>
      fixture(updateArgv(t.config.paths, fresh), '', { once: true, code: 1, stderr: 'E: broken\n' });
    t.replay!.load([failing(false), failing(true)]);
    const r = await call('POST', '/add', { name: 'corp', certificate: pki.a.root });
    expect([r.status, errorMessage(r.json)]).toEqual([
      502,
      'update-ca-certificates failed (exit 1): E: broken; the trust store could not be put back yet; the repair is retried before the next change and at start',
    ]);
    expect(readdirSync(dir)).toEqual([]);
    // the repair owed: roll back the add of corp (its text), kept for the next change and start
    expect(JSON.parse(readFileSync(intentFile(), 'utf8'))).toMatchObject({
      action: 'add',
      name: 'corp',
      content: pki.a.root,
      phase: 'rolling_back',
    });
    // the next change: the repair fails again, so this one is not made
    t.replay!.load([failing(true)]);
    const blocked = await call('POST', '/add', { name: 'other', certificate: pki.b.root });
    expect([blocked.status, errorMessage(blocked.json)]).toEqual([
      502,
      'an earlier change (add of corp.crt) could not be put back, so nothing was changed: update-ca-certificates failed (exit 1): E: broken; the trust store could not be put back yet; the repair is retried before the next change and at start',
    ]);
    expect(readdirSync(dir)).toEqual([]);
    // the repair works: then the change is made
    t.replay!.calls.length = 0;
    freshFixture();
    addFixture();
    expect((await call('POST', '/add', { name: 'other', certificate: pki.b.root })).status).toBe(200);
    expect(t.replay!.calls.map((c) => c.argv)).toEqual([
      updateArgv(t.config.paths, true),
      updateArgv(t.config.paths, false),
    ]);
    expect(readdirSync(dir)).toEqual(['other.crt']);
    expect(existsSync(intentFile())).toBe(false);
  });

  it('403 for a read token', async () => {
    expect((await call('POST', '/add', { name: 'corp', certificate: pki.a.root }, reader)).status).toBe(403);
  });
});

describe('POST /certificate/remove', () => {
  it('removes the file, runs update-ca-certificates --fresh, answers its output, records the event', async () => {
    writeFileSync(join(dir, 'corp.crt'), pki.a.root);
    writeFileSync(join(dir, 'keep.crt'), pki.b.root);
    freshFixture();
    const r = await call('POST', '/remove', { name: 'corp.crt' });
    // the tool's summary counts links and names nothing: the first line says which certificate went
    const c = new X509Certificate(pki.a.root);
    expect(r).toEqual({
      status: 200,
      json: `Removed corp.crt (${c.subject.replace(/\n/g, ', ')}, SHA-256 ${c.fingerprint256}).\n${FRESH_OUTPUT}`,
    });
    expect(t.replay!.calls.map((c) => c.argv)).toEqual([updateArgv(t.config.paths, true)]);
    expect(readdirSync(dir)).toEqual(['keep.crt']);
    expect(events('certificate.trusted.removed').at(-1)).toEqual({ name: 'corp' });
  });

  it('404 when absent; on a failed update the file is put back', async () => {
    const r = await call('POST', '/remove', { name: 'nosuch' });
    expect([r.status, errorCode(r.json)]).toEqual([404, 'not_found']);
    writeFileSync(join(dir, 'corp.crt'), pki.a.root, { mode: 0o640 });
    const before = events('certificate.trusted.removed').length;
    t.replay!.load([fixture(updateArgv(t.config.paths, true), 'garbage\n', { once: true })]);
    freshFixture();
    const f = await call('POST', '/remove', { name: 'corp' });
    expect([f.status, errorCode(f.json)]).toEqual([502, 'bad_gateway']);
    expect(errorMessage(f.json)).toMatch(/; the trust store was put back as it was$/);
    // the file as it was, then the links and bundle rebuilt from it
    expect(readFileSync(join(dir, 'corp.crt'), 'utf8')).toBe(pki.a.root);
    expect(statSync(join(dir, 'corp.crt')).mode & 0o777).toBe(0o640);
    expect(t.replay!.calls.map((c) => c.argv)).toEqual([
      updateArgv(t.config.paths, true),
      updateArgv(t.config.paths, true),
    ]);
    expect(events('certificate.trusted.removed').length).toBe(before);
    expect(existsSync(intentFile())).toBe(false);
  });

  it('403 for a read token, 400 for a bad name', async () => {
    writeFileSync(join(dir, 'corp.crt'), pki.a.root);
    expect((await call('POST', '/remove', { name: 'corp' }, reader)).status).toBe(403);
    expect((await call('POST', '/remove', { name: '-rf' })).status).toBe(400);
    expect((await call('POST', '/remove', {})).status).toBe(400);
    expect(readdirSync(dir)).toEqual(['corp.crt']);
  });
});
