import { afterAll, describe, expect, it } from 'vitest';
import { mkdirSync, readFileSync, readdirSync, symlinkSync, writeFileSync, existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { LiveBackend } from '../../runtime/system/exec-live';
import { ReplayBackend } from '../../runtime/system/replay';
import { RecordBackend } from '../../runtime/system/record';
import { readFixture } from '../../runtime/system/fixture-file';
import { ConfinedFiles } from '../../runtime/system/files';
import { SystemService } from '../../runtime/system/service';
import { openDatabase } from '../../runtime/db/database';
import { SystemClient } from '../../handlers/core/system';
import { ApiError } from '../../handlers/core/errors';
import { privateDir } from '../helpers/tmp';

const dir = privateDir('ballast-sys');
const etc = join(dir, 'etc');
const outside = join(dir, 'outside');
mkdirSync(etc, { recursive: true });
mkdirSync(outside, { recursive: true });
writeFileSync(join(outside, 'secret'), 'nope');
symlinkSync(outside, join(etc, 'escape'));

const live = new LiveBackend({
  allowedBinaries: new Set([
    '/usr/bin/printf',
    '/usr/bin/sleep',
    '/usr/bin/cat',
    '/usr/bin/env',
    '/usr/bin/head',
    '/usr/bin/false',
    '/usr/bin/bash',
  ]),
  allowedEnv: new Set(['KRB5CCNAME']),
  baseEnv: { BALLAST_TEST: '1' },
  wrapper: [],
  limits: { timeoutMs: 2000, maxOutputBytes: 1000 },
});
const db = openDatabase(join(dir, 'db.sqlite'));
const service = new SystemService({
  backend: live,
  files: new ConfinedFiles(
    [
      { path: etc, writable: true },
      { path: '/usr/sbin', writable: false },
    ],
    join(dir, 'backups'),
  ),
  db,
  concurrency: 1,
  queue: 1,
});
const client = new SystemClient({ fetch: service.fetch }, 'req-system-test');

afterAll(() => db.close());

describe('live exec', () => {
  it('runs argv without a shell, with LC_ALL=C and the base env, and audits the call', async () => {
    const r = await client.exec(['/usr/bin/printf', '%s|', 'a b', '$(id)', ';rm -rf /']);
    expect(r).toMatchObject({ code: 0, stdout: 'a b|$(id)|;rm -rf /|', timedOut: false });
    const env = await client.exec(['/usr/bin/env'], { env: { KRB5CCNAME: 'FILE:/tmp/x' } });
    expect(env.stdout).toContain('LC_ALL=C\n');
    expect(env.stdout).toContain('BALLAST_TEST=1\n');
    expect(env.stdout).toContain('KRB5CCNAME=FILE:/tmp/x\n');
    const audit = db
      .prepare("SELECT argv, exit_code, request_id FROM audit_log WHERE kind = 'exec' ORDER BY id")
      .all() as { argv: string; exit_code: number; request_id: string }[];
    expect(JSON.parse(audit[0].argv)).toEqual(['/usr/bin/printf', '%s|', 'a b', '$(id)', ';rm -rf /']);
    expect(audit[0]).toMatchObject({ exit_code: 0, request_id: 'req-system-test' });
  });

  it('refuses binaries off the allow-list, relative binaries and unknown env names', async () => {
    await expect(client.exec(['/usr/bin/id'])).rejects.toMatchObject({
      status: 403,
      message: expect.stringContaining('allow-list'),
    });
    await expect(client.exec(['printf', 'x'])).rejects.toMatchObject({ status: 403 });
    await expect(client.exec(['/usr/bin/env'], { env: { LD_PRELOAD: '/x.so' } })).rejects.toMatchObject({
      status: 403,
    });
  });

  it('stdin is passed and never audited', async () => {
    const r = await client.exec(['/usr/bin/cat'], { stdin: 'hunter2\n' });
    expect(r.stdout).toBe('hunter2\n');
    expect(JSON.stringify(db.prepare('SELECT * FROM audit_log').all())).not.toContain('hunter2');
  });

  it('caps output and kills at the timeout', async () => {
    const big = await client.exec(['/usr/bin/head', '-c', '5000', '/dev/zero']);
    expect(big.stdout.length).toBe(1000);
    expect(big.truncated).toBe(true);
    const slow = await client.exec(['/usr/bin/sleep', '5'], { timeoutMs: 200 });
    expect(slow.timedOut).toBe(true);
    expect(slow.durationMs).toBeLessThan(4000);
    await expect(client.run(['/usr/bin/sleep', '5'], { timeoutMs: 200 })).rejects.toMatchObject({
      status: 504,
      code: 'command_timeout',
    });
  });

  it('a timeout stops the whole tool: what a script started in the background goes too', async () => {
    const r = await client.exec(
      ['/usr/bin/bash', '--norc', '--noprofile', '-c', 'sleep 30 >/dev/null 2>&1 & echo $!; wait'],
      { timeoutMs: 300 },
    );
    expect(r.timedOut).toBe(true);
    const pid = Number(r.stdout.trim());
    expect(pid).toBeGreaterThan(1);
    const alive = () => {
      try {
        process.kill(pid, 0);
        return true;
      } catch {
        return false;
      }
    };
    for (let i = 0; i < 40 && alive(); i++) await new Promise((res) => setTimeout(res, 50));
    expect(alive()).toBe(false);
  });

  it('run() turns a non-zero exit into a 502 naming the command, exit code and stderr', async () => {
    const e = (await client
      .run(['/usr/bin/bash', '--norc', '--noprofile', '-c', 'echo boom >&2; exit 3'])
      .catch((x) => x)) as ApiError;
    expect(e).toBeInstanceOf(ApiError);
    expect(e.status).toBe(502);
    expect(e.message).toBe('bash failed (exit 3): boom');
    expect(e.details).toMatchObject({
      exitCode: 3,
      stderr: 'boom',
      command: ['/usr/bin/bash', '--norc', '--noprofile', '-c', 'echo boom >&2; exit 3'],
    });
  });

  it('the concurrency cap queues, and answers 503 busy past the queue', async () => {
    const a = client.exec(['/usr/bin/sleep', '0.3']);
    const b = client.exec(['/usr/bin/sleep', '0.3']);
    const c = client.exec(['/usr/bin/sleep', '0.3']).catch((e) => e);
    expect(await c).toMatchObject({ status: 503, code: 'busy' });
    expect((await a).code).toBe(0);
    expect((await b).code).toBe(0);
  });

  it('pty answers a prompt and hides what a secret step sent', async () => {
    const r = await client.pty(
      ['/usr/bin/bash', '-c', 'read -p "Password for x@Y: " p; echo "got ${#p} chars"; echo "$p"'],
      [{ expect: 'Password for .*: ', send: 's3cret', secret: true }],
    );
    expect(r.code).toBe(0);
    expect(r.output).toContain('got 6 chars');
    expect(r.output).not.toContain('s3cret');
  });
});

describe('confined files', () => {
  it('writes atomically, keeps the previous version outside the tree, restores it', async () => {
    const f = join(etc, 'krb5.conf');
    await client.writeFile(f, 'one\n');
    const w = await client.writeFile(f, 'two\n', { backup: true });
    expect(readFileSync(f, 'utf8')).toBe('two\n');
    expect(w.backupPath).toBe(join(dir, 'backups', `${f}.prev`));
    expect(readFileSync(w.backupPath!, 'utf8')).toBe('one\n');
    expect(readdirSync(etc).filter((n) => n.includes('.tmp-'))).toEqual([]);
    expect(await client.restoreFile(f)).toEqual({ restored: true });
    expect(readFileSync(f, 'utf8')).toBe('one\n');
    expect(statSync(f).mode & 0o777).toBe(0o644);
  });

  it('exclusive create refuses an existing file with 409, and exactly one of racing creates wins', async () => {
    await client.writeFile(join(etc, 'x.conf'), 'a', { exclusive: true });
    await expect(client.writeFile(join(etc, 'x.conf'), 'b', { exclusive: true })).rejects.toMatchObject({
      status: 409,
    });
    expect(readFileSync(join(etc, 'x.conf'), 'utf8')).toBe('a');
    const racers = await Promise.allSettled(
      ['1', '2', '3', '4', '5'].map((c) => client.writeFile(join(etc, 'race.conf'), c, { exclusive: true })),
    );
    expect(racers.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    const winner = racers.findIndex((r) => r.status === 'fulfilled');
    expect(readFileSync(join(etc, 'race.conf'), 'utf8')).toBe(String(winner + 1));
    expect(readdirSync(etc).filter((n) => n.includes('.tmp-'))).toEqual([]);
  });

  it('refuses paths outside the roots, through symlinks, with .. and relative ones', async () => {
    await expect(client.readFile(join(outside, 'secret'))).rejects.toMatchObject({ status: 403 });
    await expect(client.readFile(join(etc, 'escape', 'secret'))).rejects.toMatchObject({ status: 403 });
    await expect(client.writeFile(join(etc, 'escape', 'new'), 'x')).rejects.toMatchObject({ status: 403 });
    expect(existsSync(join(outside, 'new'))).toBe(false);
    await expect(client.readFile(`${etc}/../outside/secret`)).rejects.toMatchObject({ status: 400 });
    await expect(client.readFile('etc/krb5.conf')).rejects.toMatchObject({ status: 400 });
  });

  it('read-only roots can be listed but not written', async () => {
    const entries = await client.listDir('/usr/sbin');
    expect(entries?.some((e) => e.name === 'ip')).toBe(true);
    await expect(client.writeFile('/usr/sbin/evil', 'x')).rejects.toMatchObject({
      status: 403,
      message: expect.stringContaining('read-only'),
    });
  });

  it('missing files read as null, remove reports absence', async () => {
    expect(await client.readFile(join(etc, 'none'))).toBeNull();
    expect(await client.removeFile(join(etc, 'none'))).toEqual({ removed: false });
    expect(await client.listDir(join(etc, 'nodir'))).toBeNull();
  });
});

describe('replay and record', () => {
  it('replay answers the exact argv, consumes once-fixtures in order, and names an unmatched argv', async () => {
    const r = new ReplayBackend([
      { source: 't', argv: ['/usr/sbin/ip', '-j', 'link'], code: 0, stdout: 'sticky', stderr: '' },
      { source: 't', argv: ['/usr/sbin/ip', '-j', 'link'], code: 0, stdout: 'first', stderr: '', once: true },
    ]);
    expect((await r.exec(['/usr/sbin/ip', '-j', 'link'], {})).stdout).toBe('first');
    expect((await r.exec(['/usr/sbin/ip', '-j', 'link'], {})).stdout).toBe('sticky');
    await expect(r.exec(['/usr/sbin/ip', 'link'], {})).rejects.toThrow(
      'replay: no recorded fixture for argv ["/usr/sbin/ip","link"]',
    );
  });

  it('record runs live and writes a replayable fixture', async () => {
    const out = join(dir, 'recorded');
    const rec = new RecordBackend(live, out);
    const r = await rec.exec(['/usr/bin/printf', 'line1\nline2\n'], {});
    expect(r.stdout).toBe('line1\nline2\n');
    const files = readdirSync(join(out, 'printf'));
    expect(files).toHaveLength(1);
    const f = readFixture(join(out, 'printf', files[0]));
    expect(f).toMatchObject({ argv: ['/usr/bin/printf', 'line1\nline2\n'], code: 0, stdout: 'line1\nline2\n' });
    expect(f.source).toMatch(/^recorded live on /);
    const replay = new ReplayBackend([f]);
    expect((await replay.exec(f.argv, {})).stdout).toBe('line1\nline2\n');
  });
});

describe('native modules', () => {
  it('better-sqlite3 and node-pty load on this machine', async () => {
    expect((db.prepare('SELECT sqlite_version() AS v').get() as { v: string }).v).toMatch(/^3\./);
    const pty = await import('node-pty');
    expect(typeof pty.spawn).toBe('function');
  });
});

describe('replay aliases', () => {
  it('a $ROOT placeholder in fixture argv matches the real root of this checkout', async () => {
    const r = new ReplayBackend(
      [
        {
          source: 't',
          argv: ['/usr/bin/klist', '-k', '--', '$ROOT/etc/krb5.keytab'],
          code: 0,
          stdout: 'ok',
          stderr: '',
        },
      ],
      { $ROOT: '/srv/demo/root' },
    );
    expect((await r.exec(['/usr/bin/klist', '-k', '--', '/srv/demo/root/etc/krb5.keytab'], {})).stdout).toBe('ok');
    await expect(r.exec(['/usr/bin/klist', '-k', '--', '$ROOT/etc/krb5.keytab'], {})).rejects.toThrow(
      /no recorded fixture/,
    );
  });
});
