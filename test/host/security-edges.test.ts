/**
 * The edges a one-character change would move (#35): a known token id with a wrong secret, a
 * root's sibling directory, the host's listening ports read from /proc/net, the undo order of the
 * intent journal's recovery (without root), and the bounds of a few parsers and inputs.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createBody } from '../../handlers/s3/requests';
import { credentialWarnings } from '../../handlers/s3/credentials';
import { parseSsListening } from '../../handlers/s3/parse/ss';
import { parseTcSize } from '../../handlers/traffic/parse/tc-units';
import { hostListeners } from '../../runtime/areas/pod/compose-check';
import { openDatabase } from '../../runtime/db/database';
import { PathConfinement } from '../../runtime/system/confine';
import { ConfinedFiles } from '../../runtime/system/files';
import { IntentJournal } from '../../runtime/system/journal';
import { POD_ROUTES } from '../routes/pod-helpers';
import { makeTestHost, type TestHost } from '../helpers/host';
import { privateDir } from '../helpers/tmp';

let t: TestHost | undefined;
afterEach(async () => t?.close());

describe('auth', () => {
  it('a known token id with a wrong secret is 401; the right one passes', async () => {
    t = await makeTestHost({ routes: POD_ROUTES });
    const good = await t.token(['pod:read']);
    const m = /^blt_([^_]+)_(.+)$/.exec(good)!;
    const last = m[2].slice(-1);
    const wrong = `blt_${m[1]}_${m[2].slice(0, -1)}${last === 'a' ? 'b' : 'a'}`;
    const ok = await t.call('GET', '/api/v2/pod/suggested', { token: good });
    const bad = await t.call<{ error: { code: string; message: string } }>('GET', '/api/v2/pod/suggested', {
      token: wrong,
    });
    expect([ok.status, bad.status, bad.json.error.code, bad.json.error.message]).toEqual([
      200,
      401,
      'unauthorized',
      'invalid token',
    ]);
  });
});

describe('path confinement', () => {
  it("a root's sibling that shares its prefix is outside it", () => {
    const dir = privateDir('confine-sibling');
    for (const d of ['data', 'data2', 'dat']) mkdirSync(join(dir, d), { recursive: true });
    const c = new PathConfinement({ mount: '/usr/bin/mount' });
    c.addRoots('fs.mount', [join(dir, 'data')]);
    expect(c.resolve(join(dir, 'data/x'), 'fs.mount')).toBe(join(dir, 'data/x'));
    expect(c.resolve(join(dir, 'data'), 'fs.mount')).toBe(join(dir, 'data'));
    expect(() => c.resolve(join(dir, 'data'), 'fs.mount', true)).toThrow(/outside the fs.mount roots/);
    expect(() => c.resolve(join(dir, 'data2/x'), 'fs.mount')).toThrow(/outside the fs.mount roots/);
    expect(() => c.resolve(join(dir, 'dat'), 'fs.mount')).toThrow(/outside the fs.mount roots/);
    expect(() => c.resolve(join(dir, 'data/../data2'), 'fs.mount')).toThrow(/outside the fs.mount roots/);
  });
});

describe('the host listeners a compose file may not publish', () => {
  it('reads TCP LISTEN and bound UDP sockets of IPv4 and IPv6, and nothing else', async () => {
    const net = privateDir('proc-net');
    const head = '  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n';
    const row = (local: string, st: string) =>
      `   0: ${local} 00000000:0000 ${st} 00000000:00000000 00:00000000 00000000     0        0 1 1 0\n`;
    writeFileSync(
      join(net, 'tcp'),
      head + row('00000000:0016', '0A') + row('0100007F:1F90', '01') + row('0100007F:0050', '0A'),
    );
    writeFileSync(join(net, 'tcp6'), head + row('00000000000000000000000000000000:01BB', '0A'));
    writeFileSync(join(net, 'udp'), head + row('00000000:0035', '07') + row('00000000:0044', '01'));
    // udp6 missing: skipped, not an error
    expect([...(await hostListeners(net))].sort()).toEqual(['22/tcp', '443/tcp', '53/udp', '80/tcp']);
  });
});

describe('intent journal recovery', () => {
  it('puts the files back, then undoes the steps newest first', async () => {
    const dir = privateDir('journal-recovery');
    const root = join(dir, 'etc');
    mkdirSync(root, { recursive: true });
    const existing = join(root, 'a.conf');
    const created = join(root, 'b.conf');
    writeFileSync(existing, 'old\n', { mode: 0o640 });
    const files = new ConfinedFiles([{ path: root, writable: true }], join(dir, 'backups'));
    const db = openDatabase(join(dir, 'ballast.db'));
    const journal = new IntentJournal(db, files);
    const { id } = await journal.begin('network', [existing, created], 'req-1');
    journal.step(id, [
      ['/bin/undo', 'first-a'],
      ['/bin/undo', 'first-b'],
    ]);
    journal.step(id, [['/bin/undo', 'second']]);
    writeFileSync(existing, 'new\n');
    writeFileSync(created, 'made\n');
    // the host dies here; a new one recovers from the same database
    const ran: string[][] = [];
    const after = new IntentJournal(db, files);
    const [rec] = await after.recover(async (argv) => {
      ran.push(argv);
      return argv[1] === 'first-b' ? { code: 1, stderr: 'never ran\n' } : { code: 0, stderr: '' };
    });
    expect(ran).toEqual([
      ['/bin/undo', 'second'],
      ['/bin/undo', 'first-a'],
      ['/bin/undo', 'first-b'],
    ]);
    expect(readFileSync(existing, 'utf8')).toBe('old\n');
    expect(() => readFileSync(created)).toThrow(/ENOENT/);
    expect(rec).toMatchObject({
      area: 'network',
      requestId: 'req-1',
      failed: [{ step: '/bin/undo first-b', error: 'never ran' }],
    });
    expect(db.prepare('SELECT COUNT(*) AS n FROM intents').get()).toEqual({ n: 0 });
    db.close();
  });
});

describe('bounds', () => {
  it('S3 ports are 1024-65535', () => {
    for (const p of ['1024', '65535', '8000']) expect(createBody.shape.port.safeParse(p).success).toBe(true);
    for (const p of ['1023', '1000', '65536', '99999', '0800', '80'])
      expect([p, createBody.shape.port.safeParse(p).success]).toEqual([p, false]);
  });
  it('an S3 access key of 3 characters is the minimum', () => {
    expect(credentialWarnings('abc', 'secret-key-1')).toEqual([]);
    expect(credentialWarnings('ab', 'secret-key-1')[0]).toMatch(/shorter than 3/);
    expect(createBody.shape.rootUser.safeParse('abc').success).toBe(true);
  });
  it('ss: a port above 65535 is not a port', () => {
    const row = (port: string) => `LISTEN 0 4096 0.0.0.0:${port} 0.0.0.0:*\n`;
    expect(parseSsListening(row('65535') + row('9000'))).toEqual([9000, 65535]);
    expect(() => parseSsListening(row('65536'))).toThrow(/port out of range/);
  });
  it('tc sizes: b, Kb, Mb, Gb are powers of 1024', () => {
    expect([
      parseTcSize('1600b'),
      parseTcSize('15Kb'),
      parseTcSize('1Mb'),
      parseTcSize('2Gb'),
      parseTcSize('1.5Gb'),
    ]).toEqual([1600, 15360, 1048576, 2147483648, 1610612736]);
    expect(parseTcSize('2Tb')).toBeNull();
  });
});

describe('explore: the directory read is still the one lstat saw', () => {
  it('a directory swapped for a link or another directory between lstat and read is not the same', async () => {
    const { lstatSync, renameSync, symlinkSync } = await import('node:fs');
    const { stillTheDirectory } = await import('../../runtime/areas/fs/explore-common');
    const dir = privateDir('explore-swap');
    const d = join(dir, 'd');
    mkdirSync(d);
    mkdirSync(join(dir, 'other'));
    const was = lstatSync(d);
    expect(stillTheDirectory(lstatSync(d), was)).toBe(true);
    renameSync(d, join(dir, 'd-old'));
    symlinkSync('/etc', d);
    expect(stillTheDirectory(lstatSync(d), was)).toBe(false);
    renameSync(join(dir, 'other'), join(dir, 'd2'));
    expect(stillTheDirectory(lstatSync(join(dir, 'd2')), was)).toBe(false);
    expect(stillTheDirectory(lstatSync(join(dir, 'd-old')), was)).toBe(true);
  });
});
