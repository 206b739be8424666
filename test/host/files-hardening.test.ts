/**
 * Hardening of the host's file operations: special files never block a read, a rollback keeps
 * the original mode and owner, and temp files an interrupted write left are removed at start.
 */
import { execFileSync } from 'node:child_process';
import { chownSync, mkdirSync, readFileSync, statSync, symlinkSync, writeFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfinedFiles } from '../../runtime/system/files';
import { PathConfinement } from '../../runtime/system/confine';
import { SystemRefusal } from '../../runtime/system/types';
import { makeTestHost } from '../helpers/host';
import { privateDir } from '../helpers/tmp';

const refusal = (f: () => unknown) =>
  Promise.resolve()
    .then(f)
    .then(
      () => null,
      (e: unknown) => (e instanceof SystemRefusal ? `${e.status} ${e.message}` : String(e)),
    );

describe('special files', () => {
  it('reading a FIFO, a socket-less device or a directory through the file ops answers at once', async () => {
    const dir = privateDir('ballast-files');
    execFileSync('/usr/bin/mkfifo', [join(dir, 'fifo')]);
    const files = new ConfinedFiles([{ path: dir, writable: true }], join(dir, '.backups'));
    expect(await refusal(() => files.read(join(dir, 'fifo')))).toBe(`400 not a regular file: ${join(dir, 'fifo')}`);
    // a write over a FIFO would read it for its backup first: refused too, nothing blocks
    expect(await refusal(() => files.write(join(dir, 'fifo'), 'x', { backup: true }))).toBe(
      `400 not a regular file: ${join(dir, 'fifo')}`,
    );
    expect(await refusal(() => files.remove(join(dir, 'fifo'), { backup: true }))).toBe(
      `400 not a regular file: ${join(dir, 'fifo')}`,
    );
    mkdirSync(join(dir, 'sub'));
    expect(await refusal(() => files.read(join(dir, 'sub')))).toBe(`409 is a directory: ${join(dir, 'sub')}`);
  });

  it('a command that would read a FIFO is refused by the SYSTEM binding before it runs', () => {
    const dir = privateDir('ballast-files');
    execFileSync('/usr/bin/mkfifo', [join(dir, 'fifo')]);
    writeFileSync(join(dir, 'plain'), 'x');
    const c = new PathConfinement({ xxhsum: '/usr/bin/xxhsum' });
    c.addRoots('fs.read', [dir]);
    c.addPolicy('xxhsum', (argv) => [{ path: argv[2], kind: 'fs.read', argvIndex: 2, readsFile: true }]);
    expect(() => c.check(['/usr/bin/xxhsum', '--', join(dir, 'fifo')], undefined)).toThrow(
      `${join(dir, 'fifo')} is not a regular file`,
    );
    expect(c.check(['/usr/bin/xxhsum', '--', join(dir, 'plain')], undefined)).toEqual([
      '/usr/bin/xxhsum',
      '--',
      join(dir, 'plain'),
    ]);
  });
});

describe('rollback and replacement keep mode and owner', () => {
  it('restore puts the original bytes back with the original mode and owner', async () => {
    const dir = privateDir('ballast-files');
    const f = join(dir, 'interfaces');
    writeFileSync(f, 'old\n', { mode: 0o640 });
    chownSync(f, 65534, 65534);
    const files = new ConfinedFiles([{ path: dir, writable: true }], join(dir, '.backups'));
    await files.write(f, 'new\n', { backup: true });
    // a replaced file keeps its owner and mode
    expect([statSync(f).mode & 0o7777, statSync(f).uid, statSync(f).gid]).toEqual([0o640, 65534, 65534]);
    await files.write(f, 'newer\n', { mode: 0o600 });
    expect(await files.restore(f)).toEqual({ restored: true });
    expect(readFileSync(f, 'utf8')).toBe('old\n');
    expect([statSync(f).mode & 0o7777, statSync(f).uid, statSync(f).gid]).toEqual([0o640, 65534, 65534]);
  });
});

describe('temp files of interrupted writes', () => {
  it('are removed when a host starts; other dot files stay', async () => {
    const { config } = (await import('../helpers/host')).makeTestConfig();
    const d = config.paths.krb5ConfD;
    mkdirSync(d, { recursive: true });
    const stale = join(d, '.lab.conf.tmp-0123456789ab');
    const kept = join(d, '.hidden.conf');
    writeFileSync(stale, 'half');
    writeFileSync(kept, 'keep');
    const conf = join(config.paths.krb5Conf, '..', '.krb5.conf.tmp-abcdefabcdef');
    writeFileSync(conf, 'half');
    const t = await makeTestHost({ config });
    try {
      expect(existsSync(stale)).toBe(false);
      expect(existsSync(conf)).toBe(false);
      expect(readFileSync(kept, 'utf8')).toBe('keep');
    } finally {
      await t.close();
    }
  });
});

describe('temp files of interrupted backups', () => {
  it('are removed from stateDir/backups when a host starts; the backups and anything else stay', async () => {
    const { config, state } = (await import('../helpers/host')).makeTestConfig();
    const etc = join(state, 'backups', config.paths.krb5Conf, '..');
    const net = join(state, 'backups', config.paths.networkInterfaces, '..');
    mkdirSync(etc, { recursive: true });
    mkdirSync(net, { recursive: true });
    const stale = [
      join(etc, '.krb5.conf.prev.tmp-0123456789ab'),
      join(etc, '.krb5.conf.prev.meta.tmp-abcdef012345'),
      join(net, '.interfaces.prev.meta.tmp-00ff00ff00ff'),
    ];
    const kept = [
      join(etc, 'krb5.conf.prev'),
      join(etc, 'krb5.conf.prev.meta'),
      join(net, 'interfaces.prev'),
      // not the backup writes' names: not ours to remove
      join(etc, '.krb5.conf.prev.tmp-0123'),
      join(etc, '.notes.tmp-0123456789ab'),
    ];
    for (const f of [...stale, ...kept]) writeFileSync(f, 'x');
    // a symlink in the tree is not followed: what it leads to is not a backup
    const outside = privateDir('ballast-outside');
    const foreign = join(outside, '.x.prev.tmp-0123456789ab');
    writeFileSync(foreign, 'x');
    symlinkSync(outside, join(etc, 'link'));
    const t = await makeTestHost({ config });
    try {
      expect(stale.filter((f) => existsSync(f))).toEqual([]);
      expect(kept.map((f) => readFileSync(f, 'utf8'))).toEqual(kept.map(() => 'x'));
      expect(readFileSync(foreign, 'utf8')).toBe('x');
    } finally {
      await t.close();
    }
  });
});

describe('secrets on disk', () => {
  it('the state directory is 0700 and the database files 0600, also when they were looser before', async () => {
    const { config, state } = (await import('../helpers/host')).makeTestConfig();
    const { chmodSync } = await import('node:fs');
    chmodSync(state, 0o755);
    const first = await makeTestHost({ config });
    await first.token(['notification:read']);
    await first.host.close();
    const db = join(state, 'ballast.db');
    chmodSync(db, 0o644);
    chmodSync(state, 0o755);
    const { createHost } = await import('../../runtime/host');
    const { createToken } = await import('../../runtime/tokens');
    const host = await createHost({ config, distDir: '/nonexistent', routes: [], log: () => undefined });
    try {
      await createToken(host.db, 'second', ['kerberos:read']); // a write, so the WAL exists
      expect(statSync(state).mode & 0o777).toBe(0o700);
      for (const f of [db, `${db}-wal`, `${db}-shm`]) expect([f, statSync(f).mode & 0o777]).toEqual([f, 0o600]);
    } finally {
      await host.close();
    }
  });
});

describe('secrets at rest', () => {
  it('agent secrets stored before sealing existed are sealed at start; the key file is 0600 outside the DB', async () => {
    const { config, state } = (await import('../helpers/host')).makeTestConfig();
    const { createHost } = await import('../../runtime/host');
    const { SecretBox } = await import('../../runtime/system/secret-box');
    const first = await createHost({ config, distDir: '/nonexistent', routes: [], log: () => undefined });
    first.db
      .prepare(
        "INSERT INTO notification_agents (type, enabled, json, unix_time, created_at, updated_at) VALUES ('smtp', 1, ?, 0, '', '')",
      )
      .run(
        JSON.stringify({
          host: 'mail.example.test',
          port: 587,
          username: 'u',
          password: 'plain-old-secret',
          from: 'a@example.test',
          to: 'b@example.test',
        }),
      );
    await first.close();
    const second = await createHost({ config, distDir: '/nonexistent', routes: [], log: () => undefined });
    try {
      const row = second.db.prepare('SELECT json FROM notification_agents').get() as { json: string };
      expect(row.json).not.toContain('plain-old-secret');
      const sealed = (JSON.parse(row.json) as { password: string }).password;
      expect(sealed).toMatch(/^enc:v1:/);
      expect(new SecretBox(join(state, 'secret.key')).open(sealed)).toBe('plain-old-secret');
      expect(statSync(join(state, 'secret.key')).mode & 0o777).toBe(0o600);
    } finally {
      await second.close();
    }
  });
});
