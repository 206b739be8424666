/**
 * Route tier: the five /system/keys routes with the replay back end (getent and ssh-keygen
 * replayed) and real files in a private home per test: answers, exact argv, file bytes, modes and
 * owners, events, refusals (symlinks, special files, homes outside the roots, users not managed),
 * permissions, the compare-and-swap write, and concurrent adds and removes losing nothing.
 */
import { execFileSync } from 'node:child_process';
import {
  chmodSync,
  chownSync,
  existsSync,
  lstatSync,
  mkdirSync,
  readFileSync,
  readdirSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import * as z from 'zod';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { RouteModule } from '../../handlers/core/route';
import { READ_OP, WRITE_OP, type ReadResult } from '../../handlers/keys/contract';
import { parseAuthorizedKeys } from '../../handlers/keys/parse/authorized-keys';
import authAdd from '../../handlers/keys/routes/auth-add';
import authList from '../../handlers/keys/routes/auth-list';
import authRemove from '../../handlers/keys/routes/auth-remove';
import pub from '../../handlers/keys/routes/pub';
import pubGenerate from '../../handlers/keys/routes/pub-generate';
import { authListAnswer, authAddAnswer } from '../../handlers/keys/responses';
import { fixture, makeTestHost, repo, type TestHost } from '../helpers/host';
import { privateDir } from '../helpers/tmp';
import { errorOf } from '../helpers/answers';

const ROUTES: RouteModule[] = [pub, pubGenerate, authList, authAdd, authRemove];
const asRoot = process.getuid?.() === 0;
const ALICE = { uid: 4242, gid: 4242 };
const GETENT = '/usr/bin/getent';

const key = (name: string) => readFileSync(join(repo, 'fixtures/ssh-keygen', `${name}.pub`), 'utf8').trim();
/** An ssh-rsa blob (e = 65537) whose modulus is `bytes` long with the top bit clear. */
const rsaBlob = (bytes: number) => {
  const str = (b: Buffer) => Buffer.concat([Buffer.from([0, 0, b.length >> 8, b.length & 255]), b]);
  const n = Buffer.alloc(bytes, 0xab);
  n[0] = 0x7f;
  return Buffer.concat([str(Buffer.from('ssh-rsa')), str(Buffer.from([1, 0, 1])), str(n)]).toString('base64');
};
const md5Of = (name: string) =>
  readFileSync(join(repo, 'fixtures/ssh-keygen', `${name}.md5`), 'utf8')
    .split(' ')[1]
    .slice(4);

let t: TestHost;
let reader: string;
let manager: string;
/** the users' world: <users>/home/alice, <users>/root; the user database's paths are relative to it */
let users: string;
let aliceSsh: string;
let rootSsh: string;

const passwd = (line: string, name: string) => fixture([GETENT, 'passwd', '--', name], `${line}\n`);
const keygenArgv = (user: string, file: string, comment: string) => [
  '/usr/sbin/runuser',
  '-u',
  user,
  '--',
  '/usr/bin/ssh-keygen',
  '-t',
  'ed25519',
  '-N',
  '',
  '-f',
  file,
  '-C',
  comment,
  '-q',
];

beforeAll(async () => {
  users = privateDir('ballast-keys-users');
  mkdirSync(join(users, 'elsewhere/carol'), { recursive: true });
  t = await makeTestHost({
    routes: ROUTES,
    fixtures: [
      passwd('root:x:0:0:root:/root:/bin/bash', 'root'),
      passwd(`alice:x:${ALICE.uid}:${ALICE.gid}:Alice,,,:/home/alice:/bin/bash`, 'alice'),
      passwd('dave:x:4300:4300::/home/dave:/bin/bash', 'dave'), // primary group ballast-keys (4300)
      passwd('mallory:x:4400:4400::/home/mallory:/bin/bash', 'mallory'), // in no group
      passwd('carol:x:4500:4300::/elsewhere/carol:/bin/bash', 'carol'), // home outside the roots
      passwd('erin:x:4600:4300::/home/erin:/bin/bash', 'erin'), // home is a symlink out of the roots
      fixture([GETENT, 'passwd', '--', 'bob'], '', { code: 2 }),
      fixture([GETENT, 'group', '--', 'ballast-keys'], 'ballast-keys:x:4300:alice\n'),
    ],
    config: {
      settings: {
        keys: {
          homeRoots: [join(users, 'home'), join(users, 'root')],
          userRoot: users,
          setOwner: asRoot,
          commentHost: 'nas01',
        },
      },
    },
  });
  reader = await t.token(['keys:read']);
  manager = await t.token(['keys:manage']);
});
afterAll(() => t.close());

beforeEach(() => {
  // a private home per test
  for (const d of ['home', 'root']) rmSync(join(users, d), { recursive: true, force: true });
  for (const h of ['home/alice', 'home/dave', 'home/mallory', 'root']) mkdirSync(join(users, h), { recursive: true });
  symlinkSync(join(users, 'elsewhere/carol'), join(users, 'home/erin'));
  aliceSsh = join(users, 'home/alice/.ssh');
  rootSsh = join(users, 'root/.ssh');
  if (asRoot) chownSync(join(users, 'home/alice'), ALICE.uid, ALICE.gid);
});

const q = (user?: string) => (user ? `?user=${user}` : '');
const list = (user?: string, token?: string) => t.call('GET', `/api/v2/system/keys/auth${q(user)}`, { token });
/** The answer of auth/add: the added entry (authAddAnswer) or an error (errorOf). */
const add = (body: unknown, token?: string) =>
  t.call<z.infer<typeof authAddAnswer>>('POST', '/api/v2/system/keys/auth/add', { body, token });
const remove = (body: unknown, token?: string) => t.call('POST', '/api/v2/system/keys/auth/remove', { body, token });
const events = (kind: string) =>
  (t.host.db.prepare('SELECT data FROM events WHERE kind = ? ORDER BY seq').all(kind) as { data: string }[]).map(
    (e) => JSON.parse(e.data) as unknown,
  );
const issues = (r: { json: unknown }) => (errorOf(r).issues ?? []).map((i) => `${i.path}: ${i.message}`);
const mode = (p: string) => statSync(p).mode & 0o7777;
const owner = (p: string) => ({ uid: statSync(p).uid, gid: statSync(p).gid });

describe('GET /system/keys/auth', () => {
  it('lists nothing when there is no ~/.ssh, and every line of a file (the unusable ones with a reason)', async () => {
    expect((await list('alice')).json).toEqual([]);
    mkdirSync(aliceSsh);
    writeFileSync(join(aliceSsh, 'authorized_keys'), readFileSync(join(repo, 'fixtures/authorized_keys/mixed.txt')));
    const r = await list('alice', reader);
    expect(r.status).toBe(200);
    expect(authListAnswer.parse(r.json)).toEqual(
      JSON.parse(readFileSync(join(repo, 'fixtures/authorized_keys/mixed.expected.json'), 'utf8')),
    );
  });

  it('defaults to the API user (root), and takes members of the group, listed or by primary group', async () => {
    mkdirSync(rootSsh);
    writeFileSync(join(rootSsh, 'authorized_keys'), `${key('ed25519')}\n`);
    const r = await list();
    expect((r.json as { comment: string }[]).map((e) => e.comment)).toEqual(['admin@nas01']);
    expect((await list('dave')).status).toBe(200);
    const calls = t.replay!.calls.slice(-3).map((c) => c.argv.join(' '));
    expect(calls).toEqual([`${GETENT} passwd -- root`, `${GETENT} passwd -- dave`, `${GETENT} group -- ballast-keys`]);
  });

  it('refuses users it does not manage, unknown users, homes outside the roots, and bad names', async () => {
    const m = await list('mallory');
    expect([m.status, errorOf(m).message]).toEqual([
      403,
      'the keys of mallory are not managed here: only root and members of group ballast-keys (settings.keys)',
    ]);
    expect([(await list('bob')).status, errorOf(await list('bob')).message]).toEqual([
      404,
      'no user bob in the user database',
    ]);
    const c = await list('carol');
    expect([c.status, errorOf(c).message]).toEqual([
      403,
      'the home /elsewhere/carol of carol is outside the home roots (settings.keys.homeRoots)',
    ]);
    const e = await list('erin');
    expect([e.status, errorOf(e).message]).toEqual([
      403,
      'the home /home/erin of erin is outside the home roots (settings.keys.homeRoots)',
    ]);
    for (const bad of ['-x', '.hidden', 'a/b', '..', 'a%00b', 'x'.repeat(40)]) {
      const r = await list(bad);
      expect([bad, r.status, errorOf(r).code]).toEqual([bad, 400, 'validation_failed']);
    }
    expect((await t.call('GET', '/api/v2/system/keys/auth?color=red')).status).toBe(400);
  });

  it('refuses a ~/.ssh or authorized_keys that is a symlink, and a FIFO, without reading through them', async () => {
    const target = join(users, 'elsewhere/target');
    mkdirSync(target, { recursive: true });
    writeFileSync(join(target, 'authorized_keys'), `${key('ed25519')}\n`);
    symlinkSync(target, aliceSsh);
    const a = await list('alice');
    expect([a.status, errorOf(a).message]).toEqual([403, '/home/alice/.ssh is a symlink: refused']);
    rmSync(aliceSsh);
    mkdirSync(aliceSsh);
    symlinkSync(join(target, 'authorized_keys'), join(aliceSsh, 'authorized_keys'));
    const b = await list('alice');
    expect([b.status, errorOf(b).message]).toEqual([403, '/home/alice/.ssh/authorized_keys is a symlink: refused']);
    // and nothing writes through them
    expect((await add({ user: 'alice', key: key('ecdsa256') })).status).toBe(403);
    expect(readFileSync(join(target, 'authorized_keys'), 'utf8')).toBe(`${key('ed25519')}\n`);
    rmSync(join(aliceSsh, 'authorized_keys'));
    execFileSync('/usr/bin/mkfifo', [join(aliceSsh, 'authorized_keys')]);
    const f = await list('alice');
    expect([f.status, errorOf(f).message]).toEqual([
      403,
      '/home/alice/.ssh/authorized_keys is not a regular file: refused',
    ]);
  });
});

describe('POST /system/keys/auth/add', () => {
  it('creates ~/.ssh 0700 and authorized_keys 0600 owned by the user, answers the entry, records the event', async () => {
    const line = `from="10.0.0.0/8,192.168.1.*",command="/usr/local/bin/backup --mode \\"full, incr\\"" ${key('ed25519')}`;
    const r = await add({ user: 'alice', key: `  ${line}\t` }, manager);
    expect(r.status, r.text).toBe(200);
    expect(authAddAnswer.strict().parse(r.json)).toEqual({
      algo: 'ssh-ed25519',
      blob: key('ed25519').split(' ')[1],
      comment: 'admin@nas01',
      fingerprint: md5Of('ed25519'),
      line,
    });
    expect(readFileSync(join(aliceSsh, 'authorized_keys'), 'utf8')).toBe(`${line}\n`);
    expect(mode(aliceSsh)).toBe(0o700);
    expect(mode(join(aliceSsh, 'authorized_keys'))).toBe(0o600);
    if (asRoot) {
      expect(owner(aliceSsh)).toEqual(ALICE);
      expect(owner(join(aliceSsh, 'authorized_keys'))).toEqual(ALICE);
    }
    expect(readdirSync(aliceSsh)).toEqual(['authorized_keys']); // no temp file left
    expect(events('keys.authorized.added').at(-1)).toEqual({
      user: 'alice',
      fingerprint: md5Of('ed25519'),
      comment: 'admin@nas01',
    });
    expect(JSON.stringify(events('keys.authorized.added'))).not.toContain(key('ed25519').split(' ')[1]);
  });

  it('appends after the last line (adding a missing newline), keeping comments, blanks, mode and owner', async () => {
    mkdirSync(aliceSsh);
    const file = join(aliceSsh, 'authorized_keys');
    const before = `# managed by hand\n\n${key('rsa3072')}\nbroken line\n${key('ecdsa384')}`;
    writeFileSync(file, before);
    chmodSync(file, 0o640);
    if (asRoot) chownSync(file, 4243, 4244);
    const r = await add({ user: 'alice', key: key('sk-ed25519') });
    expect(r.status, r.text).toBe(200);
    expect(readFileSync(file, 'utf8')).toBe(`${before}\n${key('sk-ed25519')}\n`);
    expect(mode(file)).toBe(0o640);
    if (asRoot) expect(owner(file)).toEqual({ uid: 4243, gid: 4244 });
  });

  it('takes every key type sshd accepts: rsa, ecdsa, ed25519, sk-*, certificates', async () => {
    for (const k of ['rsa3072', 'rsa1024', 'ecdsa256', 'ecdsa384', 'ecdsa521', 'ed25519', 'sk-ecdsa', 'sk-ed25519']) {
      const r = await add({ key: key(k) });
      expect([k, r.status, r.json.fingerprint]).toEqual([k, 200, md5Of(k)]);
    }
    // a certificate has its key's fingerprint: remove the plain key first, then add the certificate
    expect((await remove({ fingerprint: md5Of('ed25519') })).status).toBe(200);
    const c = await add({ key: `cert-authority,principals="alice,bob" ${key('ed25519-cert')}` });
    expect([c.status, c.json.algo, c.json.fingerprint]).toEqual([
      200,
      'ssh-ed25519-cert-v01@openssh.com',
      md5Of('ed25519-cert'),
    ]);
    const listed = authListAnswer.parse((await list()).json);
    expect(listed.filter((e) => e.error)).toEqual([]);
    expect(listed).toHaveLength(8);
  });

  it('refuses a duplicate (409), a malformed line (400 naming body.key) and writes nothing', async () => {
    expect((await add({ key: key('ed25519') })).status).toBe(200);
    const file = join(rootSsh, 'authorized_keys');
    const before = readFileSync(file, 'utf8');
    const dup = await add({ key: `restrict ${key('ed25519')}` });
    expect([dup.status, errorOf(dup).message]).toEqual([
      409,
      `the key ${md5Of('ed25519')} is already authorized for root (entry 0)`,
    ]);
    const cases: [unknown, string][] = [
      [{ key: 'ssh-ed25519 AAAAnotbase64!!' }, 'body.key: the key is not valid base64'],
      [{ key: `ssh-rsa ${key('ed25519').split(' ')[1]}` }, 'body.key: the blob holds a ssh-ed25519 key, not ssh-rsa'],
      [{ key: `frobnicate ${key('ecdsa256')}` }, 'body.key: unknown option frobnicate'],
      [{ key: `command="/bin/sh ${key('ecdsa256')}` }, 'body.key: the options have an unterminated double quote'],
      [{ key: key('dsa') }, 'body.key: ssh-dss (DSA) keys are disabled by OpenSSH (removed in OpenSSH 10)'],
      [{ key: `ssh-rsa ${rsaBlob(96)} small` }, 'body.key: RSA keys need at least 1024 bits (this one has 767)'],
      [{ key: `ssh-rsa ${rsaBlob(2049)}` }, 'body.key: RSA keys have at most 16384 bits (this one has 16391)'],
      [{ key: `${key('ecdsa256')}\n${key('rsa3072')}` }, 'body.key: must be one line: no line break or NUL'],
      [{ key: `${key('ecdsa256')} a\u001bb` }, 'body.key: must not contain control characters'],
      [
        { key: `${key('ecdsa256')} ${'x'.repeat(8192)}` },
        'body.key: Too big: expected string to have <=8192 characters',
      ],
      [{ key: '# just a comment' }, 'body.key: is a comment line, not a key'],
      [{ key: '' }, 'body.key: Too small: expected string to have >=1 characters'],
      [{}, 'body.key: Invalid input: expected string, received undefined'],
      [{ key: key('ecdsa256'), extra: 1 }, 'body: Unrecognized key: "extra"'],
    ];
    for (const [body, issue] of cases) {
      const r = await add(body);
      expect([r.status, issues(r)]).toEqual([400, [issue]]);
    }
    expect(readFileSync(file, 'utf8')).toBe(before);
  });

  it('needs keys:manage', async () => {
    const r = await add({ key: key('ed25519') }, reader);
    expect(r.status).toBe(403);
    expect(existsSync(rootSsh)).toBe(false);
  });
});

describe('files it will not rewrite', () => {
  it('a file that is not UTF-8 is a 409 and left alone; a file over maxFileBytes is a 413', async () => {
    mkdirSync(rootSsh);
    const file = join(rootSsh, 'authorized_keys');
    const latin1 = Buffer.concat([Buffer.from(`${key('ed25519')} J`), Buffer.from([0xf6]), Buffer.from('rg\n')]);
    writeFileSync(file, latin1);
    const r = await add({ key: key('ecdsa256') });
    expect([r.status, errorOf(r).message]).toEqual([
      409,
      '/root/.ssh/authorized_keys is not UTF-8 text; it is left as it is',
    ]);
    expect(readFileSync(file).equals(latin1)).toBe(true);
    writeFileSync(file, `# ${'x'.repeat(1024 * 1024)}\n`);
    expect((await list()).status).toBe(413);
  });
});

describe('POST /system/keys/auth/remove', () => {
  it('removes by fingerprint (with or without MD5:, any case); other lines stay byte for byte', async () => {
    mkdirSync(aliceSsh);
    const file = join(aliceSsh, 'authorized_keys');
    const text = readFileSync(join(repo, 'fixtures/authorized_keys/mixed.txt'), 'utf8');
    writeFileSync(file, text);
    chmodSync(file, 0o644);
    const fp = md5Of('sk-ed25519'); // the sk key and its certificate
    const r = await remove({ user: 'alice', fingerprint: `MD5:${fp.toUpperCase()}` }, manager);
    expect([r.status, r.json]).toEqual([200, { fingerprint: fp }]);
    const units = text.match(/[^\n]*\n|[^\n]+$/g) ?? [];
    expect(readFileSync(file, 'utf8')).toBe(
      units
        .filter(
          (u) => !u.includes(key('sk-ed25519').split(' ')[1].slice(0, 40)) && !u.startsWith('sk-ssh-ed25519-cert'),
        )
        .join(''),
    );
    expect(parseAuthorizedKeys(readFileSync(file, 'utf8')).filter((e) => e.fingerprint === fp)).toEqual([]);
    expect(mode(file)).toBe(0o644);
    expect(events('keys.authorized.removed').at(-1)).toEqual({ user: 'alice', fingerprint: fp });
  });

  it('404 when no key has it, 400 for something that is not an MD5 fingerprint, 403 for a reader', async () => {
    mkdirSync(rootSsh);
    writeFileSync(join(rootSsh, 'authorized_keys'), `${key('ed25519')}\n`);
    const nf = await remove({ fingerprint: md5Of('rsa3072') });
    expect([nf.status, errorOf(nf).message]).toEqual([
      404,
      `no key with fingerprint ${md5Of('rsa3072')} in /root/.ssh/authorized_keys`,
    ]);
    const bad = await remove({ fingerprint: 'SHA256:wtGviu9rgnMNYTWE4Gh83vYHec6PYqZQWdC2hqnOllo' });
    expect([bad.status, issues(bad)]).toEqual([
      400,
      ['body.fingerprint: must be an MD5 fingerprint: 16 colon-separated hex pairs, optionally prefixed MD5:'],
    ]);
    expect((await remove({ fingerprint: md5Of('ed25519') }, reader)).status).toBe(403);
    expect(readFileSync(join(rootSsh, 'authorized_keys'), 'utf8')).toBe(`${key('ed25519')}\n`);
    rmSync(rootSsh, { recursive: true });
    expect((await remove({ fingerprint: md5Of('ed25519') })).status).toBe(404);
  });
});

describe('concurrent changes', () => {
  it('twenty adds and five removes at once: every added line is there, every removed one gone, nothing else lost', async () => {
    const seedKeys = ['rsa3072', 'ecdsa256', 'ecdsa384', 'ecdsa521', 'ed25519'];
    mkdirSync(aliceSsh);
    writeFileSync(join(aliceSsh, 'authorized_keys'), `# keep me\n${seedKeys.map(key).join('\n')}\n`);
    const fresh = Array.from({ length: 20 }, (_, i) => {
      // distinct valid ed25519 keys: the fixture key's 32 bytes with the first replaced by i
      const blob = Buffer.from(key('ed25519').split(' ')[1], 'base64');
      blob[19] = i;
      return `ssh-ed25519 ${blob.toString('base64')} load-${i}`;
    });
    const results = await Promise.all([
      ...fresh.map((k) => add({ user: 'alice', key: k })),
      ...seedKeys.map((k) => remove({ user: 'alice', fingerprint: md5Of(k) })),
    ]);
    expect(results.map((r) => r.status)).toEqual(new Array(25).fill(200));
    const text = readFileSync(join(aliceSsh, 'authorized_keys'), 'utf8');
    expect(text.startsWith('# keep me\n')).toBe(true);
    expect(
      text
        .split('\n')
        .filter((l) => l !== '')
        .sort(),
    ).toEqual(['# keep me', ...fresh].sort());
  });

  it('the host write is compare-and-swap: a stale version is a 409 and changes nothing', async () => {
    mkdirSync(rootSsh);
    writeFileSync(join(rootSsh, 'authorized_keys'), `${key('ed25519')}\n`);
    const r = (await t.host.system.handle(READ_OP, { file: 'authorized_keys' })) as ReadResult;
    writeFileSync(join(rootSsh, 'authorized_keys'), `${key('ed25519')}\n${key('ecdsa256')}\n`); // someone else's edit
    await expect(t.host.system.handle(WRITE_OP, { content: 'x\n', expectVersion: r.version })).rejects.toMatchObject({
      code: 'conflict',
      message: '/root/.ssh/authorized_keys changed since it was read; read it again',
    });
    expect(readFileSync(join(rootSsh, 'authorized_keys'), 'utf8')).toBe(`${key('ed25519')}\n${key('ecdsa256')}\n`);
    // and the route re-reads and plans again: the other edit survives an add
    expect((await add({ key: key('rsa3072') })).status).toBe(200);
    expect(readFileSync(join(rootSsh, 'authorized_keys'), 'utf8')).toBe(
      `${key('ed25519')}\n${key('ecdsa256')}\n${key('rsa3072')}\n`,
    );
  });
});

describe('GET /system/keys/pub', () => {
  it('answers the key line of ~/.ssh/id_ed25519.pub; 404 without one; 502 when it is not a key', async () => {
    const none = await t.call('GET', '/api/v2/system/keys/pub', { token: reader });
    expect([none.status, errorOf(none).message]).toEqual([
      404,
      'user root has no public key (/root/.ssh/id_ed25519.pub)',
    ]);
    mkdirSync(rootSsh);
    writeFileSync(join(rootSsh, 'id_ed25519.pub'), `${key('ed25519')}\n`);
    expect((await t.call('GET', '/api/v2/system/keys/pub', { token: reader })).json).toEqual({
      public_key: key('ed25519'),
    });
    writeFileSync(join(rootSsh, 'id_ed25519.pub'), 'garbage\n');
    const g = await t.call('GET', '/api/v2/system/keys/pub');
    expect([g.status, errorOf(g).code]).toEqual([502, 'bad_gateway']);
    expect((await t.call('GET', '/api/v2/system/keys/pub?user=bob')).status).toBe(404);
    expect((await t.call('GET', '/api/v2/system/keys/pub?user=mallory')).status).toBe(403);
  });
});

describe('GET /system/keys/pub/generate', () => {
  it('runs ssh-keygen as the user with the exact argv, keeps the old pair when the command was replayed, answers {}', async () => {
    mkdirSync(join(users, 'home/alice/.ssh'));
    writeFileSync(join(aliceSsh, 'id_ed25519'), 'OLD PRIVATE\n', { mode: 0o600 });
    writeFileSync(join(aliceSsh, 'id_ed25519.pub'), `${key('ed25519')}\n`);
    const argv = keygenArgv('alice', join(aliceSsh, 'id_ed25519'), 'alice@nas01');
    t.replay!.load([fixture(argv, '', { once: true })]);
    const r = await t.call('GET', '/api/v2/system/keys/pub/generate?user=alice', { token: manager });
    expect([r.status, r.json]).toEqual([200, {}]);
    expect(t.replay!.calls.at(-1)?.argv).toEqual(argv);
    expect(readFileSync(join(aliceSsh, 'id_ed25519'), 'utf8')).toBe('OLD PRIVATE\n');
    expect(readdirSync(aliceSsh).sort()).toEqual(['id_ed25519', 'id_ed25519.pub']);
    expect(events('keys.public.regenerated').at(-1)).toEqual({ user: 'alice' });
  });

  it('a failing ssh-keygen is a 502 naming the command, and the old pair is put back', async () => {
    mkdirSync(rootSsh);
    writeFileSync(join(rootSsh, 'id_ed25519'), 'OLD PRIVATE\n', { mode: 0o600 });
    writeFileSync(join(rootSsh, 'id_ed25519.pub'), `${key('ed25519')}\n`);
    const argv = keygenArgv('root', join(rootSsh, 'id_ed25519'), 'root@nas01');
    t.replay!.load([
      fixture(argv, '', {
        once: true,
        code: 1,
        stderr: 'Saving key "/root/.ssh/id_ed25519" failed: No space left on device\n',
      }),
    ]);
    const before = events('keys.public.regenerated').length;
    const r = await t.call('GET', '/api/v2/system/keys/pub/generate');
    expect(r.status).toBe(502);
    expect(errorOf(r)).toMatchObject({
      code: 'command_failed',
      message: 'runuser failed (exit 1): Saving key "/root/.ssh/id_ed25519" failed: No space left on device',
      details: { command: argv, exitCode: 1 },
    });
    expect(readFileSync(join(rootSsh, 'id_ed25519'), 'utf8')).toBe('OLD PRIVATE\n');
    expect(mode(join(rootSsh, 'id_ed25519'))).toBe(0o600);
    expect(readdirSync(rootSsh).sort()).toEqual(['id_ed25519', 'id_ed25519.pub']);
    expect(events('keys.public.regenerated').length).toBe(before);
  });

  it('puts back a pair that a run which died had moved aside, before generating', async () => {
    mkdirSync(rootSsh);
    writeFileSync(join(rootSsh, '.id_ed25519.ballast-prev'), 'OLD PRIVATE\n', { mode: 0o600 });
    writeFileSync(join(rootSsh, '.id_ed25519.pub.ballast-prev'), `${key('ed25519')}\n`);
    t.replay!.load([fixture(keygenArgv('root', join(rootSsh, 'id_ed25519'), 'root@nas01'), '', { once: true })]);
    expect((await t.call('GET', '/api/v2/system/keys/pub/generate')).status).toBe(200);
    expect(readdirSync(rootSsh).sort()).toEqual(['id_ed25519', 'id_ed25519.pub']);
    expect(readFileSync(join(rootSsh, 'id_ed25519'), 'utf8')).toBe('OLD PRIVATE\n');
  });

  it('HEAD is 405 (a GET with a side effect), a reader gets 403, and a symlinked key file is refused', async () => {
    const head = await t.call('HEAD', '/api/v2/system/keys/pub/generate');
    expect(head.status).toBe(405);
    expect((await t.call('GET', '/api/v2/system/keys/pub/generate', { token: reader })).status).toBe(403);
    mkdirSync(rootSsh);
    symlinkSync('/etc/passwd', join(rootSsh, 'id_ed25519'));
    const s = await t.call('GET', '/api/v2/system/keys/pub/generate');
    expect([s.status, errorOf(s).message]).toEqual([403, '/root/.ssh/id_ed25519 is a symlink: refused']);
    expect(lstatSync(join(rootSsh, 'id_ed25519')).isSymbolicLink()).toBe(true);
  });
});
