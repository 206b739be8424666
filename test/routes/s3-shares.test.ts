/**
 * Route tier: the five S3 routes over a replayed systemctl/ss, on a private root (unit and
 * environment directories under the test host's temporary directory, shared directories in a
 * private share root). Asserts the exact argv, the files written (bytes and modes), masking,
 * the permission on details, the S3 headers (success and errors), events and rollbacks.
 */
import { execFileSync } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import * as z from 'zod';
import type { RouteModule } from '../../handlers/core/route';
import { renderEnvFile } from '../../handlers/s3/render/env-file';
import { renderUnit } from '../../handlers/s3/render/unit';
import create from '../../handlers/s3/routes/create';
import del from '../../handlers/s3/routes/delete';
import details from '../../handlers/s3/routes/details';
import list from '../../handlers/s3/routes/list';
import update from '../../handlers/s3/routes/update';
import { s3Settings } from '../../handlers/s3/contract';
import { fixture, makeTestHost, type TestHost } from '../helpers/host';
import { privateDir } from '../helpers/tmp';

const ROUTES: RouteModule[] = [list, details, create, update, del];
const SC = '/usr/bin/systemctl';
const SS = ['/usr/bin/ss', '-Hltn'];
const SS_OUT =
  'LISTEN 0      128          0.0.0.0:22         0.0.0.0:*\nLISTEN 0      4096               *:9444             *:*\n';

let t: TestHost;
let data: string;
let reader: string;
let manager: string;
let unitDir: string;
let envDir: string;
const settings = s3Settings.parse({});

const ErrorJson = z.object({
  error: z.object({
    code: z.string(),
    message: z.string(),
    issues: z.array(z.object({ path: z.string(), message: z.string() })).optional(),
    details: z.record(z.string(), z.unknown()).optional(),
  }),
});
const errorOf = (json: unknown) => ErrorJson.parse(json).error;
const Changed = z.object({
  shareName: z.string(),
  serviceName: z.string(),
  raw: z.string(),
  warnings: z.string().optional(),
});

beforeAll(async () => {
  data = privateDir('s3-share-root');
  t = await makeTestHost({ routes: ROUTES, config: { settings: { s3: { shareRoots: [data] } } } });
  reader = await t.token(['s3:read']);
  manager = await t.token(['s3:manage']);
  unitDir = t.config.paths.s3UnitDir;
  envDir = t.config.paths.s3EnvDir;
});
afterAll(() => t.close());
beforeEach(() => {
  for (const d of [unitDir, envDir, data]) {
    rmSync(d, { recursive: true, force: true });
    mkdirSync(d, { recursive: true });
  }
  mkdirSync(join(data, 'media'));
  mkdirSync(join(data, 'backup'));
  t.replay!.calls.length = 0;
  t.replay!.load([
    fixture(SS, SS_OUT),
    fixture([SC, 'daemon-reload'], ''),
    ...['media', 'backup', 'other'].flatMap((s) => [
      fixture([SC, 'enable', '--', `s3-${s}.service`], '', {
        stderr: `Created symlink /etc/systemd/system/multi-user.target.wants/s3-${s}.service → /etc/systemd/system/s3-${s}.service.\n`,
      }),
      fixture([SC, 'start', '--', `s3-${s}.service`], ''),
      fixture([SC, 'stop', '--', `s3-${s}.service`], ''),
      fixture([SC, 'restart', '--', `s3-${s}.service`], ''),
      fixture([SC, 'try-restart', '--', `s3-${s}.service`], ''),
      fixture([SC, 'disable', '--', `s3-${s}.service`], '', {
        stderr: `Removed "/etc/systemd/system/multi-user.target.wants/s3-${s}.service".\n`,
      }),
      fixture([SC, 'is-enabled', '--', `s3-${s}.service`], 'enabled\n'),
    ]),
  ]);
});

const argvs = () => t.replay!.calls.map((c) => c.argv);
const events = (kind: string) =>
  (t.host.db.prepare('SELECT data FROM events WHERE kind = ? ORDER BY seq').all(kind) as { data: string }[]).map(
    (e) => JSON.parse(e.data) as unknown,
  );
/** The unit file a create of the demo share `media` writes (known text, not just "a file"). */
const mediaUnit = () => renderUnit({ shareName: 'media', envFile: join(envDir, 'media.env'), settings });
const intents = () => t.host.db.prepare('SELECT share_name, op FROM s3_intents').all();
const post = (path: string, body: unknown, token?: string) => t.call('POST', path, { body, token });
const get = (path: string, token?: string) => t.call('GET', path, { token });
const mode = (p: string) => statSync(p).mode & 0o7777;

const MEDIA = () => ({
  shareName: 'media',
  path: join(data, 'media'),
  port: '9000',
  rootUser: 'media-admin',
  rootPassword: 'Media-Secret-2026',
});

function expectS3Headers(h: Headers) {
  expect(h.get('content-type')).toBe('application/string; charset=utf-8');
  expect(h.get('x-powered-by')).toBeNull();
  expect(h.get('access-control-allow-origin')).toBe('*');
}

async function createMedia() {
  const r = await post('/api/v2/s3/create', MEDIA());
  expect(r.status, r.text).toBe(200);
  t.replay!.calls.length = 0;
  return r;
}

describe('POST /s3/create', () => {
  it('writes the environment file (0600) and the unit (0644), then daemon-reload, enable, start', async () => {
    const r = await post('/api/v2/s3/create', MEDIA(), manager);
    expect(r.status, r.text).toBe(200);
    expectS3Headers(r.headers);
    const unitText = renderUnit({ shareName: 'media', envFile: join(envDir, 'media.env'), settings });
    expect(Changed.parse(r.json)).toEqual({ shareName: 'media', serviceName: 's3-media.service', raw: unitText });
    expect(readFileSync(join(unitDir, 's3-media.service'), 'utf8')).toBe(unitText);
    expect(mode(join(unitDir, 's3-media.service'))).toBe(0o644);
    const envFile = join(envDir, 'media.env');
    expect(readFileSync(envFile, 'utf8')).toBe(
      '# S3 share media, managed by Ballast (mode 0600, root only: holds the root password)\n' +
        `MINIO_ROOT_USER="media-admin"\nMINIO_ROOT_PASSWORD="Media-Secret-2026"\nMINIO_VOLUMES="${join(data, 'media')}"\nBALLAST_S3_PORT="9000"\n`,
    );
    expect(mode(envFile)).toBe(0o600);
    expect(statSync(envFile).uid).toBe(process.getuid?.());
    expect(unitText).toContain(
      `EnvironmentFile=${envFile}\nExecStart=/usr/local/bin/minio server \${MINIO_VOLUMES} --address :\${BALLAST_S3_PORT}\n`,
    );
    expect(argvs()).toEqual([
      SS,
      [SC, 'daemon-reload'],
      [SC, 'enable', '--', 's3-media.service'],
      [SC, 'start', '--', 's3-media.service'],
    ]);
    expect(events('s3.share.created').at(-1)).toEqual({ shareName: 'media', path: join(data, 'media'), port: '9000' });
    expect(JSON.stringify(t.host.db.prepare('SELECT * FROM events').all())).not.toContain('Media-Secret-2026');
    expect(JSON.stringify(t.host.db.prepare('SELECT * FROM audit_log').all())).not.toContain('Media-Secret-2026');
    expect(intents()).toEqual([]);
  });

  it('credentials below the S3 minimums: created, with warnings', async () => {
    const r = await post('/api/v2/s3/create', { ...MEDIA(), rootUser: 'ab', rootPassword: 'short' });
    expect(r.status, r.text).toBe(200);
    // a string of lines, as the spec's dfs `warnings`: one field name, one type in the whole API
    expect(Changed.parse(r.json).warnings).toBe(
      'rootUser is shorter than 3 characters (the S3 minimum): the service will not start\n' +
        'rootPassword is shorter than 8 characters (the S3 minimum): the service will not start',
    );
    expect(readFileSync(join(unitDir, 's3-media.service'), 'utf8')).toBe(mediaUnit());
  });

  it('stores the real path of a symlink inside a share root', async () => {
    symlinkSync(join(data, 'media'), join(data, 'link'));
    const r = await post('/api/v2/s3/create', { ...MEDIA(), path: join(data, 'link') });
    expect(r.status, r.text).toBe(200);
    expect(readFileSync(join(envDir, 'media.env'), 'utf8')).toContain(`MINIO_VOLUMES="${join(data, 'media')}"\n`);
  });

  it('refuses bad input with a 400 naming the field, before touching anything', async () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ shareName: '../x' }, 'body.shareName'],
      [{ shareName: '-x' }, 'body.shareName'],
      [{ shareName: 'a.b' }, 'body.shareName'],
      [{ shareName: 'a b' }, 'body.shareName'],
      [{ port: '80' }, 'body.port'],
      [{ port: '65536' }, 'body.port'],
      [{ port: '09000' }, 'body.port'],
      [{ port: 9000 }, 'body.port'],
      [{ path: 'srv/media' }, 'body.path'],
      [{ path: join(data, 'nosuch') }, 'body.path'],
      [{ rootPassword: 'a\nMINIO_ROOT_USER=x' }, 'body.rootPassword'],
      [{ rootUser: '' }, 'body.rootUser'],
      [{ extra: 1 }, 'body'],
    ];
    for (const [over, field] of cases) {
      const r = await post('/api/v2/s3/create', { ...MEDIA(), ...over });
      expect([r.status, errorOf(r.json).issues?.[0]?.path], JSON.stringify(over)).toEqual([400, field]);
      expectS3Headers(r.headers);
    }
    writeFileSync(join(data, 'file'), 'x');
    const f = await post('/api/v2/s3/create', { ...MEDIA(), path: join(data, 'file') });
    expect([f.status, errorOf(f.json).message]).toEqual([
      400,
      `invalid body.path: ${join(data, 'file')} is not a directory`,
    ]);
    expect(argvs()).toEqual([]);
    expect(existsSync(join(unitDir, 's3-media.service'))).toBe(false);
  });

  it('403 for a directory outside the share roots, also through a symlink', async () => {
    symlinkSync('/etc', join(data, 'etclink'));
    for (const p of ['/etc', join(data, 'etclink'), `${data}/../`]) {
      const r = await post('/api/v2/s3/create', { ...MEDIA(), path: p });
      expect([r.status, errorOf(r.json).code], p).toEqual([
        p.includes('..') ? 400 : 403,
        p.includes('..') ? 'validation_failed' : 'forbidden',
      ]);
    }
    expect(argvs()).toEqual([]);
  });

  it('409 for an existing share, a port of another share, a listening port', async () => {
    await createMedia();
    const dup = await post('/api/v2/s3/create', { ...MEDIA(), port: '9001' });
    expect([dup.status, errorOf(dup.json).message]).toEqual([409, 'S3 share media already exists']);
    const port = await post('/api/v2/s3/create', { ...MEDIA(), shareName: 'backup', path: join(data, 'backup') });
    expect([port.status, errorOf(port.json).message]).toEqual([409, 'port 9000 is already used by S3 share media']);
    expectS3Headers(port.headers);
    const listening = await post('/api/v2/s3/create', {
      ...MEDIA(),
      shareName: 'backup',
      path: join(data, 'backup'),
      port: '9444',
    });
    expect([listening.status, errorOf(listening.json).message]).toEqual([
      409,
      'port 9444 is in use: a process listens on it',
    ]);
    expect(argvs()).toEqual([SS]);
    expect(existsSync(join(envDir, 'backup.env'))).toBe(false);
  });

  it('a failed start rolls back: disable, files removed, daemon-reload; 502 naming the command', async () => {
    t.replay!.load([
      fixture([SC, 'start', '--', 's3-media.service'], '', {
        code: 1,
        once: true,
        stderr:
          'Job for s3-media.service failed because the control process exited with error code.\nSee "systemctl status s3-media.service" and "journalctl -xeu s3-media.service" for details.\n',
      }),
    ]);
    const r = await post('/api/v2/s3/create', MEDIA());
    expect(r.status).toBe(502);
    expectS3Headers(r.headers);
    const e = errorOf(r.json);
    expect(e.code).toBe('command_failed');
    expect(e.message).toBe(
      'create of S3 share media failed at `systemctl start -- s3-media.service` (exit 1: Job for s3-media.service failed because the control process exited with error code.); the share was rolled back: files removed, daemon reloaded',
    );
    expect(e.details).toMatchObject({
      command: [SC, 'start', '--', 's3-media.service'],
      exitCode: 1,
      rolledBack: true,
    });
    expect(argvs()).toEqual([
      SS,
      [SC, 'daemon-reload'],
      [SC, 'enable', '--', 's3-media.service'],
      [SC, 'start', '--', 's3-media.service'],
      [SC, 'disable', '--', 's3-media.service'],
      [SC, 'daemon-reload'],
    ]);
    expect(existsSync(join(unitDir, 's3-media.service'))).toBe(false);
    expect(existsSync(join(envDir, 'media.env'))).toBe(false);
    expect(readdirSync(join(data, 'media'))).toEqual([]); // the share's data directory stays
    expect(intents()).toEqual([]);
    expect(JSON.stringify(r.json)).not.toContain('Media-Secret-2026');
  });

  it('a failed daemon-reload rolls back without enable or disable', async () => {
    t.replay!.load([
      fixture([SC, 'daemon-reload'], '', { code: 1, once: true, stderr: 'Failed to reload daemon: Access denied\n' }),
    ]);
    const r = await post('/api/v2/s3/create', MEDIA());
    expect([r.status, errorOf(r.json).details?.rolledBack]).toEqual([502, true]);
    expect(argvs()).toEqual([SS, [SC, 'daemon-reload'], [SC, 'daemon-reload']]);
    expect(existsSync(join(unitDir, 's3-media.service'))).toBe(false);
  });
});

describe('GET /s3/list and /s3/{share_name}/details', () => {
  it('lists every field, the password masked, enabled from systemctl is-enabled; a read token may list', async () => {
    await createMedia();
    await post('/api/v2/s3/create', {
      shareName: 'backup',
      path: join(data, 'backup'),
      port: '9100',
      rootUser: 'bk',
      rootPassword: 'short7!',
    });
    t.replay!.load([fixture([SC, 'is-enabled', '--', 's3-backup.service'], 'disabled\n', { code: 1 })]);
    t.replay!.calls.length = 0;
    const r = await get('/api/v2/s3/list', reader);
    expect(r.status, r.text).toBe(200);
    expectS3Headers(r.headers);
    const media = renderUnit({ shareName: 'media', envFile: join(envDir, 'media.env'), settings });
    expect(r.json).toEqual({
      backup: {
        shareName: 'backup',
        path: join(data, 'backup'),
        enabled: false,
        port: '9100',
        user: 'root',
        rootUser: 'bk',
        rootPassword: '*******',
        raw: renderUnit({ shareName: 'backup', envFile: join(envDir, 'backup.env'), settings }),
      },
      media: {
        shareName: 'media',
        path: join(data, 'media'),
        enabled: true,
        port: '9000',
        user: 'root',
        rootUser: 'media-admin',
        rootPassword: '***************26',
        raw: media,
      },
    });
    expect(r.text).not.toContain('Media-Secret');
    expect(argvs().sort()).toEqual([
      [SC, 'is-enabled', '--', 's3-backup.service'],
      [SC, 'is-enabled', '--', 's3-media.service'],
    ]);
  });

  it('a missing token is a 401 with the S3 headers; a wrong method (answered before the route runs) has the default ones', async () => {
    const r = await t.call('GET', '/api/v2/s3/list', { token: null });
    expect([r.status, errorOf(r.json).code]).toEqual([401, 'unauthorized']);
    expectS3Headers(r.headers);
    const m = await t.call('PUT', '/api/v2/s3/list');
    expect(m.status).toBe(405);
    expect(m.headers.get('content-type')).toBe('application/json; charset=utf-8');
  });

  it('an empty unit directory lists nothing; other units there are not shares', async () => {
    writeFileSync(join(unitDir, 'ssh.service'), '[Service]\nExecStart=/usr/sbin/sshd\n');
    writeFileSync(join(unitDir, 's3-.service'), '[Service]\n');
    const r = await get('/api/v2/s3/list');
    expect([r.status, r.json]).toEqual([200, {}]);
  });

  it('details needs s3:manage and shows the clear password, raw and conf', async () => {
    await createMedia();
    const denied = await get('/api/v2/s3/media/details', reader);
    expect([denied.status, errorOf(denied.json).code]).toEqual([403, 'forbidden']);
    expectS3Headers(denied.headers);
    const r = await get('/api/v2/s3/media/details', manager);
    expect(r.status, r.text).toBe(200);
    expectS3Headers(r.headers);
    const envFile = join(envDir, 'media.env');
    expect(r.json).toEqual({
      shareName: 'media',
      path: join(data, 'media'),
      enabled: true,
      port: '9000',
      user: 'root',
      rootUser: 'media-admin',
      rootPassword: 'Media-Secret-2026',
      raw: readFileSync(join(unitDir, 's3-media.service'), 'utf8'),
      conf: readFileSync(envFile, 'utf8'),
    });
    const none = await get('/api/v2/s3/nosuch/details');
    expect([none.status, errorOf(none.json).message]).toEqual([404, 'no S3 share nosuch']);
    const bad = await get('/api/v2/s3/..%2Fetc/details');
    expect([bad.status, errorOf(bad.json).issues?.[0]?.path]).toEqual([400, 'params.share_name']);
  });

  it('an environment file that is a FIFO (502) or a symlink out of the configured directories (403) is never read', async () => {
    await createMedia();
    const envFile = join(envDir, 'media.env');
    rmSync(envFile);
    execFileSync('/usr/bin/mkfifo', ['-m', '600', envFile]);
    const r = await get('/api/v2/s3/media/details');
    expect([r.status, errorOf(r.json).message]).toEqual([
      502,
      `${envFile} is not a regular file (other); it was not written by this service`,
    ]);
    rmSync(envFile);
    symlinkSync('/etc/shadow', envFile);
    const l = await get('/api/v2/s3/list');
    // a link leading outside the configured directories is refused by the host's confinement
    expect([l.status, errorOf(l.json).code]).toEqual([403, 'forbidden']);
  });

  it('a broken environment file is a 502 naming the line, never the secret', async () => {
    await createMedia();
    writeFileSync(join(envDir, 'media.env'), 'MINIO_ROOT_USER=a\nMINIO_ROOT_PASSWORD="Media-Secret-2026\n', {
      mode: 0o600,
    });
    const r = await get('/api/v2/s3/list');
    expect([r.status, errorOf(r.json).message]).toEqual([
      502,
      'could not read the output of environment file (line 2)',
    ]);
    expect(r.text).not.toContain('Media-Secret');
  });
});

describe('POST /s3/{share_name}/update', () => {
  it('rewrites the environment file (0600), restarts the service only if it runs (try-restart), answers the file text', async () => {
    await createMedia();
    const r = await post('/api/v2/s3/media/update', { rootPassword: 'N3w"Secret$Key' }, manager);
    expect(r.status, r.text).toBe(200);
    expectS3Headers(r.headers);
    const envFile = join(envDir, 'media.env');
    const text = renderEnvFile({
      shareName: 'media',
      rootUser: 'media-admin',
      rootPassword: 'N3w"Secret$Key',
      path: join(data, 'media'),
      port: '9000',
      env: settings.env,
    });
    expect(text).toContain('MINIO_ROOT_PASSWORD="N3w\\"Secret\\$Key"\n');
    expect(Changed.parse(r.json)).toEqual({ shareName: 'media', serviceName: 's3-media.service', raw: text });
    expect(readFileSync(envFile, 'utf8')).toBe(text);
    expect(mode(envFile)).toBe(0o600);
    expect(existsSync(`${envFile}.prev`)).toBe(false);
    // a stopped share stays stopped: never `restart`, which would start it
    expect(argvs()).toEqual([[SC, 'try-restart', '--', 's3-media.service']]);
    expect(events('s3.share.updated').at(-1)).toEqual({ shareName: 'media', changed: ['rootPassword'] });
    expect(intents()).toEqual([]);
    const weak = await post('/api/v2/s3/media/update', { rootUser: 'x' });
    expect(Changed.parse(weak.json).warnings).toBe(
      'rootUser is shorter than 3 characters (the S3 minimum): the service will not start',
    );
  });

  it('a failed restart puts the previous file back (0600) and restarts it if running', async () => {
    await createMedia();
    const envFile = join(envDir, 'media.env');
    const before = readFileSync(envFile, 'utf8');
    t.replay!.load([
      fixture([SC, 'try-restart', '--', 's3-media.service'], '', {
        code: 1,
        once: true,
        stderr: 'Job for s3-media.service failed.\n',
      }),
    ]);
    const r = await post('/api/v2/s3/media/update', { rootUser: 'new-admin' });
    expect(r.status).toBe(502);
    expect(errorOf(r.json).message).toBe(
      'update of S3 share media failed at `systemctl try-restart -- s3-media.service` (exit 1: Job for s3-media.service failed.); the share was rolled back: the previous environment file was put back (the service restarted if it runs)',
    );
    expect(readFileSync(envFile, 'utf8')).toBe(before);
    expect(mode(envFile)).toBe(0o600);
    expect(existsSync(`${envFile}.prev`)).toBe(false);
    expect(argvs()).toEqual([
      [SC, 'try-restart', '--', 's3-media.service'],
      [SC, 'try-restart', '--', 's3-media.service'],
    ]);
    expect(intents()).toEqual([]);
  });

  it('404 for an unknown share, 400 for an empty body, 403 for a read token', async () => {
    expect((await post('/api/v2/s3/nosuch/update', { rootUser: 'abc' })).status).toBe(404);
    await createMedia();
    const empty = await post('/api/v2/s3/media/update', {});
    expect([empty.status, errorOf(empty.json).message]).toEqual([
      400,
      'invalid body: body: give rootUser, rootPassword or both',
    ]);
    expect((await post('/api/v2/s3/media/update', { rootUser: 'abc' }, reader)).status).toBe(403);
    expect(argvs()).toEqual([]);
  });
});

describe('POST /api/{version}/s3/{share_name}/delete', () => {
  it('stops, disables, removes both files, daemon-reload; the directory stays', async () => {
    await createMedia();
    writeFileSync(join(data, 'media', 'object.bin'), 'keep me');
    const r = await post('/api/v2/s3/media/delete', {}, manager);
    expect(r.status, r.text).toBe(200);
    expectS3Headers(r.headers);
    expect(r.json).toBe(
      'S3 share media deleted: service s3-media.service stopped, disabled and removed (the exported directory is unchanged)',
    );
    expect(argvs()).toEqual([
      [SC, 'stop', '--', 's3-media.service'],
      [SC, 'disable', '--', 's3-media.service'],
      [SC, 'daemon-reload'],
    ]);
    expect(existsSync(join(unitDir, 's3-media.service'))).toBe(false);
    expect(existsSync(join(envDir, 'media.env'))).toBe(false);
    expect(readFileSync(join(data, 'media', 'object.bin'), 'utf8')).toBe('keep me');
    expect(events('s3.share.deleted').at(-1)).toEqual({ shareName: 'media' });
    expect(intents()).toEqual([]);
  });

  it('only v2 is a version: others are 404; unknown shares 404; a failed stop keeps the share', async () => {
    await createMedia();
    for (const v of ['v1', 'v3', 'api']) {
      const r = await post(`/api/${v}/s3/media/delete`, {});
      expect([r.status, errorOf(r.json).code], v).toEqual([404, 'route_not_found']);
    }
    expect((await post('/api/v2/s3/nosuch/delete', {})).status).toBe(404);
    expect((await post('/api/v2/s3/media/delete', {}, reader)).status).toBe(403);
    expect(argvs()).toEqual([]);
    t.replay!.load([
      fixture([SC, 'stop', '--', 's3-media.service'], '', {
        code: 1,
        once: true,
        stderr: 'Failed to stop s3-media.service: Access denied\n',
      }),
    ]);
    const r = await post('/api/v2/s3/media/delete', {});
    expect([r.status, errorOf(r.json).message]).toEqual([
      502,
      'delete of S3 share media failed: systemctl failed (exit 1): Failed to stop s3-media.service: Access denied; the share still exists',
    ]);
    expect(readFileSync(join(unitDir, 's3-media.service'), 'utf8')).toBe(mediaUnit());
    expect(intents()).toEqual([]);
  });

  it('a unit that is not loaded (stop exit 5) is still deleted', async () => {
    await createMedia();
    t.replay!.load([
      fixture([SC, 'stop', '--', 's3-media.service'], '', {
        code: 5,
        once: true,
        stderr: 'Failed to stop s3-media.service: Unit s3-media.service not loaded.\n',
      }),
    ]);
    const r = await post('/api/v2/s3/media/delete', {});
    expect(r.status, r.text).toBe(200);
    expect(existsSync(join(unitDir, 's3-media.service'))).toBe(false);
  });
});

describe('an unfinished change is settled by the next change of its share, not by a host restart', () => {
  const RETRY =
    'no other change of this share is made until that is done (the next change of this share, or the next host start, retries it first)';
  const tryRestartFails = (n: number) =>
    Array.from({ length: n }, () =>
      fixture([SC, 'try-restart', '--', 's3-media.service'], '', {
        code: 1,
        once: true,
        stderr: 'Job for s3-media.service failed.\n',
      }),
    );
  const TRY_RESTART = [SC, 'try-restart', '--', 's3-media.service'];

  it('a failed update whose rollback fails too: 502 saying what is left (rolledBack false); the next update retries the rollback, then proceeds', async () => {
    await createMedia();
    const envFile = join(envDir, 'media.env');
    const original = readFileSync(envFile, 'utf8');
    t.replay!.load(tryRestartFails(2));
    const r = await post('/api/v2/s3/media/update', { rootUser: 'failed-admin' });
    expect(r.status).toBe(502);
    const e = errorOf(r.json);
    expect(e.details?.rolledBack).toBe(false);
    expect(e.message).toBe(
      `update of S3 share media failed at \`systemctl try-restart -- s3-media.service\` (exit 1: Job for s3-media.service failed.); the share was NOT rolled back fully: still to do: systemctl try-restart s3-media.service (exit 1: Job for s3-media.service failed.); remove ${envFile}.prev (not run: the previous version is kept for the retry); done: restore ${envFile}; ${RETRY}`,
    );
    expect(readFileSync(`${envFile}.prev`, 'utf8')).toBe(original);
    expect(intents()).toEqual([{ share_name: 'media', op: 'update' }]);
    t.replay!.calls.length = 0;

    const next = await post('/api/v2/s3/media/update', { rootPassword: 'Next-Secret-2027' });
    expect(next.status, next.text).toBe(200);
    // the rollback's try-restart first, then the update's own
    expect(argvs()).toEqual([TRY_RESTART, TRY_RESTART]);
    const text = renderEnvFile({
      shareName: 'media',
      rootUser: 'media-admin',
      rootPassword: 'Next-Secret-2027',
      path: join(data, 'media'),
      port: '9000',
      env: settings.env,
    });
    expect(readFileSync(envFile, 'utf8')).toBe(text);
    expect(existsSync(`${envFile}.prev`)).toBe(false);
    expect(intents()).toEqual([]);
    expect(events('s3.share.recovered').at(-1)).toEqual({
      shareName: 'media',
      op: 'update',
      outcome: 'rolled back',
      complete: true,
    });
  });

  it('a retry that fails again is a 409 saying what is left, and runs nothing else; a later change proceeds', async () => {
    await createMedia();
    const envFile = join(envDir, 'media.env');
    t.replay!.load(tryRestartFails(3));
    expect((await post('/api/v2/s3/media/update', { rootUser: 'failed-admin' })).status).toBe(502);
    t.replay!.calls.length = 0;

    const blocked = await post('/api/v2/s3/media/delete', {});
    expect(blocked.status).toBe(409);
    expectS3Headers(blocked.headers);
    const e = errorOf(blocked.json);
    expect(e.message).toBe(
      `an earlier update of S3 share media did not finish and rolling it back failed again: the share is NOT rolled back fully: still to do: systemctl try-restart s3-media.service (exit 1: Job for s3-media.service failed.); remove ${envFile}.prev (not run: the previous version is kept for the retry); done: restore ${envFile}; ${RETRY}`,
    );
    expect(e.details).toMatchObject({
      shareName: 'media',
      rolledBack: false,
      pending: { op: 'update', outcome: 'rolled back', complete: false },
    });
    expect(argvs()).toEqual([TRY_RESTART]);
    expect(readFileSync(join(unitDir, 's3-media.service'), 'utf8')).toBe(mediaUnit());
    expect(intents()).toEqual([{ share_name: 'media', op: 'update' }]);
    expect(events('s3.share.recovered').at(-1)).toEqual({
      shareName: 'media',
      op: 'update',
      outcome: 'rolled back',
      complete: false,
    });
    t.replay!.calls.length = 0;

    const del = await post('/api/v2/s3/media/delete', {});
    expect(del.status, del.text).toBe(200);
    expect(argvs()).toEqual([
      TRY_RESTART,
      [SC, 'stop', '--', 's3-media.service'],
      [SC, 'disable', '--', 's3-media.service'],
      [SC, 'daemon-reload'],
    ]);
    expect([existsSync(envFile), existsSync(`${envFile}.prev`)]).toEqual([false, false]);
    expect(intents()).toEqual([]);
  });

  it('a failed create whose rollback fails: the next create of the name finishes the rollback, then creates', async () => {
    t.replay!.load([
      fixture([SC, 'start', '--', 's3-media.service'], '', { code: 1, once: true, stderr: 'Job failed.\n' }),
      fixture([SC, 'daemon-reload'], '', { once: true }),
      fixture([SC, 'daemon-reload'], '', { code: 1, once: true, stderr: 'Failed to reload daemon: Access denied\n' }),
    ]);
    const r = await post('/api/v2/s3/create', MEDIA());
    expect(r.status).toBe(502);
    const e = errorOf(r.json);
    expect(e.details?.rolledBack).toBe(false);
    expect(e.message).toMatch(
      /; the share was NOT rolled back fully: still to do: systemctl daemon-reload \(exit 1: Failed to reload daemon: Access denied\); done: systemctl disable s3-media.service; remove .*media\.env; remove .*s3-media\.service; no other change/,
    );
    expect(intents()).toEqual([{ share_name: 'media', op: 'create' }]);
    t.replay!.calls.length = 0;

    const again = await post('/api/v2/s3/create', MEDIA());
    expect(again.status, again.text).toBe(200);
    expect(argvs()).toEqual([
      // the rollback, retried whole (stop and disable best effort)
      [SC, 'stop', '--', 's3-media.service'],
      [SC, 'disable', '--', 's3-media.service'],
      [SC, 'daemon-reload'],
      // the create
      SS,
      [SC, 'daemon-reload'],
      [SC, 'enable', '--', 's3-media.service'],
      [SC, 'start', '--', 's3-media.service'],
    ]);
    expect(readFileSync(join(unitDir, 's3-media.service'), 'utf8')).toBe(mediaUnit());
    expect(intents()).toEqual([]);
  });
});
