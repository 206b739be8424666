/**
 * System tier: the keys routes through the Node host (built route bundles, live back end) as
 * root, with real users made for the test (useradd, names prefixed `bkeys`, homes under a private
 * directory configured as the only home root; removed afterwards even when a test failed):
 *   generate   real ssh-keygen run as the user: a 0600 private key owned by the user, a .pub whose
 *              fingerprint ssh-keygen agrees with; a failing ssh-keygen puts the old pair back
 *   add/list   keys of every common type made now by ssh-keygen (rsa, ecdsa 256/384/521,
 *              ed25519), fingerprints compared with `ssh-keygen -l -E md5` of the written file,
 *              ~/.ssh 0700 and authorized_keys 0600 owned by the user
 *   remove     other lines untouched; concurrent adds and removes lose nothing
 *   refusals   a user outside the group (403)
 */
import {
  accessSync,
  chmodSync,
  chownSync,
  constants,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseAuthorizedKeys, parsePublicKeyFile } from '../../handlers/keys/parse/authorized-keys';
import { authListAnswer } from '../../handlers/keys/responses';
import { defaultConfig, mergeConfig } from '../../runtime/config';
import { backendFor } from '../../runtime/host';
import { makeTestHost, type TestHost } from '../helpers/host';
import { exec, run } from './helpers/exec';
import { errorOf, detail } from '../helpers/answers';

const TOOLS: Record<string, string> = {
  '/usr/bin/ssh-keygen': 'openssh-client',
  '/usr/sbin/runuser': 'util-linux',
  '/usr/bin/getent': 'libc-bin',
  '/usr/sbin/useradd': 'passwd',
  '/usr/sbin/userdel': 'passwd',
  '/usr/sbin/groupadd': 'passwd',
  '/usr/sbin/groupdel': 'passwd',
};

const tag = randomBytes(3).toString('hex');
const API = `bkeys${tag}a`; // the API user
const MEMBER = `bkeys${tag}m`; // a member of the group
const STRANGER = `bkeys${tag}s`; // in no group
const GROUP = `bkeys${tag}g`;
const made: { users: string[]; group?: string } = { users: [] };

let t: TestHost;
let work: string;
const home = (u: string) => join(work, 'home', u);
const uidOf = (u: string) => statSync(home(u)).uid;

async function keygenFingerprints(file: string): Promise<string[]> {
  const r = await run(['/usr/bin/ssh-keygen', '-l', '-E', 'md5', '-f', file]);
  return r.stdout
    .trim()
    .split('\n')
    .map((l) => l.split(' ')[1].replace(/^MD5:/, ''));
}

/** A fresh key of `type` made by ssh-keygen now (private half deleted with the dir). */
async function newKey(type: string, bits: string | null, comment: string): Promise<string> {
  const d = mkdtempSync(join(work, 'k-'));
  await run([
    '/usr/bin/ssh-keygen',
    '-q',
    '-t',
    type,
    ...(bits ? ['-b', bits] : []),
    '-N',
    '',
    '-C',
    comment,
    '-f',
    join(d, 'k'),
  ]);
  const line = readFileSync(join(d, 'k.pub'), 'utf8').trim();
  rmSync(d, { recursive: true });
  return line;
}

beforeAll(async () => {
  if (process.getuid?.() !== 0) throw new Error('keys system tests must run as root (useradd, runuser)');
  const missing = Object.entries(TOOLS).filter(([p]) => {
    try {
      accessSync(p, constants.X_OK);
      return false;
    } catch {
      return true;
    }
  });
  if (missing.length)
    throw new Error(`keys system tests need ${missing.map(([p, pkg]) => `${p} (Debian package "${pkg}")`).join(', ')}`);
  work = mkdtempSync(join(tmpdir(), 'ballast-keys-system-'));
  chmodSync(work, 0o711); // the users reach their homes through it
  mkdirSync(join(work, 'home'), { mode: 0o755 });
  await run(['/usr/sbin/groupadd', GROUP]);
  made.group = GROUP;
  for (const u of [API, MEMBER, STRANGER]) {
    await run([
      '/usr/sbin/useradd',
      '-m',
      '-d',
      home(u),
      '-s',
      '/bin/sh',
      '-U',
      ...(u === MEMBER ? ['-G', GROUP] : []),
      u,
    ]);
    made.users.push(u);
  }
  const base = defaultConfig();
  t = await makeTestHost({
    backend: backendFor(mergeConfig(base, { system: { ...base.system, mode: 'live' } })),
    config: {
      system: { ...base.system, mode: 'live' },
      settings: { keys: { apiUser: API, group: GROUP, homeRoots: [join(work, 'home')], commentHost: 'ballast-test' } },
    },
  });
}, 60_000);

afterAll(async () => {
  await t?.close();
  for (const u of made.users) await exec(['/usr/sbin/userdel', u]);
  if (made.group) await exec(['/usr/sbin/groupdel', made.group]);
  for (const u of made.users) await exec(['/usr/sbin/groupdel', u]); // the users' own groups, if userdel left them
  if (work) rmSync(work, { recursive: true, force: true });
});

describe('generate and pub (real ssh-keygen as the user)', () => {
  it('writes a new ed25519 pair owned by the user, private key 0600; pub answers it', async () => {
    const r = await t.call('GET', '/api/v2/system/keys/pub/generate');
    expect([r.status, r.json]).toEqual([200, {}]);
    const ssh = join(home(API), '.ssh');
    const priv = statSync(join(ssh, 'id_ed25519'));
    expect([priv.mode & 0o7777, priv.uid]).toEqual([0o600, uidOf(API)]);
    expect(statSync(join(ssh, 'id_ed25519.pub')).uid).toBe(uidOf(API));
    expect([statSync(ssh).mode & 0o7777, statSync(ssh).uid]).toEqual([0o700, uidOf(API)]);
    expect(readdirSync(ssh).sort()).toEqual(['id_ed25519', 'id_ed25519.pub']);
    const pubText = readFileSync(join(ssh, 'id_ed25519.pub'), 'utf8');
    const parsed = parsePublicKeyFile(pubText);
    expect([parsed.algo, parsed.comment]).toEqual(['ssh-ed25519', `${API}@ballast-test`]);
    expect(await keygenFingerprints(join(ssh, 'id_ed25519.pub'))).toEqual([parsed.fingerprint]);
    const p = await t.call('GET', '/api/v2/system/keys/pub');
    expect(p.json).toEqual({ public_key: pubText.trim() });

    // again: a different key, nothing left aside
    expect((await t.call('GET', `/api/v2/system/keys/pub/generate?user=${API}`)).status).toBe(200);
    expect(readFileSync(join(ssh, 'id_ed25519.pub'), 'utf8')).not.toBe(pubText);
    expect(readdirSync(ssh).sort()).toEqual(['id_ed25519', 'id_ed25519.pub']);
  });

  it('when ssh-keygen fails (the user cannot write ~/.ssh) it answers 502 and puts the old pair back', async () => {
    const ssh = join(home(MEMBER), '.ssh');
    mkdirSync(ssh, { mode: 0o755 }); // owned by root: the user cannot write in it
    writeFileSync(join(ssh, 'id_ed25519'), 'OLD PRIVATE\n', { mode: 0o600 });
    writeFileSync(join(ssh, 'id_ed25519.pub'), 'OLD PUBLIC\n');
    const r = await t.call('GET', `/api/v2/system/keys/pub/generate?user=${MEMBER}`);
    expect(r.status).toBe(502);
    expect(errorOf(r).code).toBe('command_failed');
    expect((detail(r, 'command') as string[]).slice(0, 5)).toEqual([
      '/usr/sbin/runuser',
      '-u',
      MEMBER,
      '--',
      '/usr/bin/ssh-keygen',
    ]);
    expect(detail(r, 'stderr')).toMatch(/Permission denied/);
    expect(readFileSync(join(ssh, 'id_ed25519'), 'utf8')).toBe('OLD PRIVATE\n');
    expect(readFileSync(join(ssh, 'id_ed25519.pub'), 'utf8')).toBe('OLD PUBLIC\n');
    expect(readdirSync(ssh).sort()).toEqual(['id_ed25519', 'id_ed25519.pub']);
    rmSync(ssh, { recursive: true });
  });
});

describe('authorized keys (real files, fingerprints from ssh-keygen)', () => {
  it('adds keys of every common type; the listing agrees with ssh-keygen -l -E md5; owner and modes are right', async () => {
    const keys = [
      await newKey('rsa', '3072', 'rsa key'),
      await newKey('ecdsa', '256', 'ecdsa 256'),
      await newKey('ecdsa', '384', 'ecdsa 384'),
      await newKey('ecdsa', '521', 'ecdsa 521'),
      await newKey('ed25519', null, 'ed25519 key'),
    ];
    const lines = [
      keys[0],
      `from="10.0.0.0/8,192.168.1.*",command="/usr/bin/rsync --server \\"x y\\"",no-pty ${keys[1]}`,
      ...keys.slice(2),
    ];
    for (const line of lines) {
      const r = await t.call('POST', '/api/v2/system/keys/auth/add', { body: { user: MEMBER, key: line } });
      expect(r.status, r.text).toBe(200);
    }
    const file = join(home(MEMBER), '.ssh', 'authorized_keys');
    expect(readFileSync(file, 'utf8')).toBe(`${lines.join('\n')}\n`);
    expect([statSync(file).mode & 0o7777, statSync(file).uid, statSync(file).gid]).toEqual([
      0o600,
      uidOf(MEMBER),
      statSync(home(MEMBER)).gid,
    ]);
    expect([statSync(join(home(MEMBER), '.ssh')).mode & 0o7777, statSync(join(home(MEMBER), '.ssh')).uid]).toEqual([
      0o700,
      uidOf(MEMBER),
    ]);
    const listed = authListAnswer.parse((await t.call('GET', `/api/v2/system/keys/auth?user=${MEMBER}`)).json);
    expect(listed.map((e) => e.fingerprint)).toEqual(await keygenFingerprints(file));
    expect(listed.map((e) => e.comment)).toEqual(['rsa key', 'ecdsa 256', 'ecdsa 384', 'ecdsa 521', 'ed25519 key']);

    // remove one: the others stay byte for byte
    const r = await t.call('POST', '/api/v2/system/keys/auth/remove', {
      body: { user: MEMBER, fingerprint: `MD5:${listed[2].fingerprint}` },
    });
    expect([r.status, r.json]).toEqual([200, { fingerprint: listed[2].fingerprint }]);
    expect(readFileSync(file, 'utf8')).toBe(`${lines.filter((_, i) => i !== 2).join('\n')}\n`);
    expect(await keygenFingerprints(file)).toEqual(listed.filter((_, i) => i !== 2).map((e) => e.fingerprint));
    expect(statSync(file).uid).toBe(uidOf(MEMBER));
  }, 60_000);

  it('concurrent adds and removes keep every line', async () => {
    const file = join(home(API), '.ssh', 'authorized_keys');
    mkdirSync(join(home(API), '.ssh'), { recursive: true, mode: 0o700 });
    const seed = await Promise.all([1, 2, 3, 4].map((i) => newKey('ed25519', null, `seed ${i}`)));
    writeFileSync(file, `# keep\n${seed.join('\n')}\n`, { mode: 0o600 });
    chownSync(file, uidOf(API), statSync(home(API)).gid);
    const fresh = await Promise.all(Array.from({ length: 12 }, (_, i) => newKey('ed25519', null, `new ${i}`)));
    const seedFps = parseAuthorizedKeys(seed.join('\n')).map((e) => e.fingerprint);
    const results = await Promise.all([
      ...fresh.map((k) => t.call('POST', '/api/v2/system/keys/auth/add', { body: { key: k } })),
      ...seedFps.map((fp) => t.call('POST', '/api/v2/system/keys/auth/remove', { body: { fingerprint: fp } })),
    ]);
    expect(results.map((r) => r.status)).toEqual(new Array(16).fill(200));
    const text = readFileSync(file, 'utf8');
    expect(
      text
        .split('\n')
        .filter((l) => l !== '')
        .sort(),
    ).toEqual(['# keep', ...fresh].sort());
    expect(statSync(file).uid).toBe(uidOf(API));
    expect(readdirSync(join(home(API), '.ssh')).filter((n) => n.startsWith('.'))).toEqual([]);
  }, 60_000);

  it('refuses a user outside the group, and unknown users', async () => {
    const s = await t.call('GET', `/api/v2/system/keys/auth?user=${STRANGER}`);
    expect([s.status, errorOf(s).message]).toEqual([
      403,
      `the keys of ${STRANGER} are not managed here: only ${API} and members of group ${GROUP} (settings.keys)`,
    ]);
    expect((await t.call('GET', `/api/v2/system/keys/auth?user=bkeys${tag}none`)).status).toBe(404);
    expect((await t.call('GET', '/api/v2/system/keys/auth?user=root')).status).toBe(403);
  });
});
