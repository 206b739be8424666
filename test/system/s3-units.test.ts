/**
 * System tier for S3 shares, over real HTTP (runtime/serve.ts, the built bundles):
 *   - `ss -Hltn` runs for real (iproute2): a port a test socket listens on is refused with 409;
 *   - the unit the create route writes passes `systemd-analyze verify` (Debian's systemd package;
 *     it works without systemd as PID 1 and checks that ExecStart's binary exists: the server
 *     command is configured to a stand-in executable in the test directory);
 *   - the environment file is read back by a real run of the configured server command. MinIO
 *     is not installed here, so the command is a stand-in shell script that prints its argv and
 *     environment; no systemd manager runs here either, so the file is loaded by /bin/sh (`set -a;
 *     . file`), whose double-quote rules are the ones the renderer writes for systemd.
 * systemctl itself needs a running manager: its calls (daemon-reload, enable, start) are
 * replayed. A missing tool fails the test naming the Debian package; nothing is skipped.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseUnit } from '../../handlers/tools/systemd-unit';
import { backendFor } from '../../runtime/host';
import { serve, type Serving } from '../../runtime/serve';
import { ReplayBackend } from '../../runtime/system/replay';
import type { CommandBackend } from '../../runtime/system/types';
import { createToken } from '../../runtime/tokens';
import { distDir, fixture, makeTestConfig } from '../helpers/host';
import { privateDir } from '../helpers/tmp';

const SC = '/usr/bin/systemctl';
const SS = '/usr/bin/ss';
const ANALYZE = '/usr/bin/systemd-analyze';
const HOSTILE_PASSWORD = `p a$HOME "q" 'r' \`id\` \\n #x %n;`;

function requireTool(path: string, pkg: string) {
  if (!existsSync(path))
    throw new Error(`${path} is missing: install the Debian package ${pkg} (apt-get install -y ${pkg})`);
}

let s: Serving;
let token: string;
let dir: string;
let data: string;
let standIn: string;
let listener: Server;
let busyPort: number;
let replay: ReplayBackend;

beforeAll(async () => {
  requireTool(SS, 'iproute2');
  requireTool(ANALYZE, 'systemd');
  dir = privateDir('s3-system');
  data = join(dir, 'data');
  mkdirSync(join(data, 'media'), { recursive: true });
  standIn = join(dir, 'bin', 's3-standin-server');
  mkdirSync(join(dir, 'bin'));
  // prints each argument on its own line, then the S3 variables of its environment
  writeFileSync(
    standIn,
    '#!/bin/sh\nfor a in "$@"; do printf "arg=%s\\n" "$a"; done\nenv | grep -E "^(MINIO_|BALLAST_S3_)" | sort\n',
    { mode: 0o755 },
  );
  chmodSync(standIn, 0o755);
  listener = createServer();
  await new Promise<void>((r) => listener.listen(0, '127.0.0.1', r));
  const a = listener.address();
  busyPort = typeof a === 'object' && a ? a.port : 0;

  const { config } = makeTestConfig({
    settings: { s3: { shareRoots: [data], serverCommand: [standIn, 'server', '{path}', '--address', ':{port}'] } },
  } as Parameters<typeof makeTestConfig>[0]);
  config.system.mode = 'live';
  const live = backendFor(config);
  replay = new ReplayBackend([
    fixture([SC, 'daemon-reload'], ''),
    fixture([SC, 'enable', '--', 's3-media.service'], ''),
    fixture([SC, 'start', '--', 's3-media.service'], ''),
    fixture([SC, 'is-enabled', '--', 's3-media.service'], 'enabled\n'),
  ]);
  // ss for real, systemctl (which needs a running manager) replayed
  const backend: CommandBackend = {
    exec: (argv, opts) => (argv[0] === SS ? live.exec(argv, opts) : replay.exec(argv, opts)),
    pty: (argv, dialogue, opts) => replay.pty(argv, dialogue, opts),
  };
  s = await serve({ config, distDir, backend, signals: false, accessLog: false, log: () => undefined });
  token = (await createToken(s.host.db, 'admin', ['*'])).token;
});

afterAll(async () => {
  await s?.stop();
  await new Promise<void>((r) => (listener ? listener.close(() => r()) : r()));
});

async function post(path: string, body: unknown): Promise<{ status: number; headers: Headers; json: unknown }> {
  const res = await fetch(`${s.server.url}${path}`, {
    method: 'POST',
    headers: { token, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: res.status, headers: res.headers, json: (await res.json()) as unknown };
}

function freePort(): number {
  // a port no socket listens on now: ss is asked again by the route, so a race only gives a 409
  const out = execFileSync(SS, ['-Hltn'], { encoding: 'utf8' });
  for (let p = 19000; p < 20000; p++) if (!out.includes(`:${p} `)) return p;
  throw new Error('no free port in 19000-19999');
}

describe('S3 shares on the real tools', () => {
  it('a port a real socket listens on (ss -Hltn) is refused with 409', async () => {
    const r = await post('/api/v2/s3/create', {
      shareName: 'media',
      path: join(data, 'media'),
      port: String(busyPort),
      rootUser: 'media-admin',
      rootPassword: HOSTILE_PASSWORD,
    });
    expect(r.status).toBe(409);
    expect(r.headers.get('content-type')).toBe('application/string; charset=utf-8');
    expect(r.headers.has('x-powered-by')).toBe(false);
    expect(r.json).toMatchObject({
      error: { code: 'conflict', message: `port ${busyPort} is in use: a process listens on it` },
    });
  });

  let port = 0;
  it('create writes a unit that systemd-analyze verify accepts', async () => {
    port = freePort();
    const r = await post('/api/v2/s3/create', {
      shareName: 'media',
      path: join(data, 'media'),
      port: String(port),
      rootUser: 'media-admin',
      rootPassword: HOSTILE_PASSWORD,
    });
    expect(r.status, JSON.stringify(r.json)).toBe(200);
    expect(r.headers.get('content-type')).toBe('application/string; charset=utf-8');
    expect(r.headers.has('x-powered-by')).toBe(false);
    const unitFile = join(s.host.config.paths.s3UnitDir, 's3-media.service');
    const v = spawnSync(ANALYZE, ['verify', '--', unitFile], {
      encoding: 'utf8',
      env: { PATH: '/usr/bin:/bin', LC_ALL: 'C' },
    });
    expect([v.status, v.stderr]).toEqual([0, '']);
    // the check is real: the same unit pointing at a missing server fails verify
    const broken = join(dir, 's3-broken.service');
    writeFileSync(broken, readFileSync(unitFile, 'utf8').replace(standIn, `${standIn}-missing`));
    const b = spawnSync(ANALYZE, ['verify', '--', broken], {
      encoding: 'utf8',
      env: { PATH: '/usr/bin:/bin', LC_ALL: 'C' },
    });
    expect(b.status).not.toBe(0);
    expect(b.stderr).toContain('is not executable: No such file or directory');
  });

  it('stand-in server command (MinIO not installed, no systemd manager: the file loaded by /bin/sh) reads the environment file back exactly', () => {
    const envFile = join(s.host.config.paths.s3EnvDir, 'media.env');
    expect(statSync(envFile).mode & 0o777).toBe(0o600);
    const unit = parseUnit(readFileSync(join(s.host.config.paths.s3UnitDir, 's3-media.service'), 'utf8'));
    expect(unit.Service.EnvironmentFile).toBe(envFile);
    // ExecStart's words are bare here; `${NAME}` (one argument each in systemd) becomes "$NAME" for sh
    const exec = unit.Service.ExecStart;
    expect(exec).toBe(`${standIn} server \${MINIO_VOLUMES} --address :\${BALLAST_S3_PORT}`);
    const shCommand = `set -a; . "$0"; exec ${exec.replace(/\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g, '"$$$1"')}`;
    const run = spawnSync('/bin/sh', ['-c', shCommand, envFile], { encoding: 'utf8', env: { PATH: '/usr/bin:/bin' } });
    expect(run.stderr).toBe('');
    expect(run.status).toBe(0);
    expect(run.stdout).toBe(
      [
        'arg=server',
        `arg=${join(data, 'media')}`,
        'arg=--address',
        `arg=:${port}`,
        `BALLAST_S3_PORT=${port}`,
        'MINIO_ROOT_PASSWORD=' + HOSTILE_PASSWORD,
        'MINIO_ROOT_USER=media-admin',
        `MINIO_VOLUMES=${join(data, 'media')}`,
        '',
      ].join('\n'),
    );
  });
});
