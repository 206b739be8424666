/**
 * System tier: the pod routes against a real container engine. The test starts its own dockerd
 * (Debian's docker.io: private --data-root, --exec-root, --pidfile, a socket in its temp dir, no
 * bridge, no iptables, its own containerd namespaces), imports a one-binary image from a tar of
 * busybox-static (no registry), and drives the routes through a Ballast host in live mode with
 * docker-compose 1.x as the compose command (DOCKER_HOST through settings.pod.env):
 *   set → the unit file (systemd-analyze verify) → its ExecStart run directly (no systemd in CI)
 *   → inspect shows the container running → busybox httpd answers on the published port →
 *   pause / unpause / kill → log → destroy leaves no container, network or file behind.
 * systemctl is a recording stub (nothing here may talk to the machine's systemd); journalctl is
 * the real one. dockerd is stopped and every directory removed in afterAll, pass or fail.
 * Missing tools make beforeAll throw naming the Debian package: these tests fail, never skip.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
  copyFileSync,
} from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execStartOf } from '../helpers/unit-exec';
import { createHost, type Host } from '../../runtime/host';
import { createToken } from '../../runtime/tokens';
import { distDir, makeTestConfig } from '../helpers/host';
import { POD_ROUTES } from '../routes/pod-helpers';
import { exec } from './helpers/exec';

const TOOLS: [string, string][] = [
  ['/usr/sbin/dockerd', 'docker.io'],
  ['/usr/bin/docker', 'docker.io'],
  ['/usr/bin/docker-compose', 'docker-compose'],
  ['/bin/busybox', 'busybox-static'],
  ['/usr/bin/systemd-analyze', 'systemd'],
  ['/usr/bin/journalctl', 'systemd'],
];

const IMAGE = 'ballast-pod-busybox:test';
let tmp: string;
let dockerd: ChildProcess | undefined;
let dockerdExit: Promise<void> | undefined;
let dockerHost: string;
let host: Host | undefined;
let token: string;
let stateDir: string;
let root: string;
let port: number;
let calls: string;

const dockerEnv = () => ({ DOCKER_HOST: dockerHost });
const docker = (...args: string[]) => exec(['/usr/bin/docker', ...args], { env: dockerEnv(), timeoutMs: 120_000 });

async function freePort(): Promise<number> {
  const srv = createServer();
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  const a = srv.address();
  await new Promise<void>((r) => srv.close(() => r()));
  return typeof a === 'object' && a ? a.port : 0;
}

async function waitForEngine(): Promise<void> {
  const deadline = Date.now() + 60_000;
  let last = '';
  while (Date.now() < deadline) {
    if (dockerd?.exitCode !== null)
      throw new Error(
        `dockerd exited (${dockerd?.exitCode}): ${readFileSync(join(tmp, 'dockerd.log'), 'utf8').slice(-2000)}`,
      );
    const r = await docker('version', '--format', '{{.Server.Version}}');
    if (r.code === 0) return;
    last = r.stderr;
    await new Promise((res) => setTimeout(res, 250)); // readiness probe of a separate process, bounded
  }
  throw new Error(`dockerd did not answer within 60 s: ${last}`);
}

async function call(method: string, path: string, body?: unknown) {
  const res = await host!.app.fetch(
    new Request(`http://ballast.local/api/v2${path}`, {
      method,
      headers: { token, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    }),
    host!.env,
  );
  const json: unknown = await res.json();
  return { status: res.status, json };
}

beforeAll(async () => {
  const missing = TOOLS.filter(([p]) => !existsSync(p));
  if (missing.length)
    throw new Error(`pod system tests need ${missing.map(([p, pkg]) => `${p} (apt-get install ${pkg})`).join(', ')}`);
  // short: containerd's socket path under --exec-root must stay below 108 bytes
  tmp = mkdtempSync('/tmp/pod-eng-');
  const ns = `ballast-pod-test-${tmp.slice(-6)}`;
  dockerHost = `unix://${tmp}/docker.sock`;
  mkdirSync(join(tmp, 'data'));
  mkdirSync(join(tmp, 'exec'));
  const log = join(tmp, 'dockerd.log');
  writeFileSync(log, '');
  const out = (await import('node:fs')).openSync(log, 'a');
  dockerd = spawn(
    '/usr/sbin/dockerd',
    [
      '--data-root',
      join(tmp, 'data'),
      '--exec-root',
      join(tmp, 'exec'),
      '--pidfile',
      join(tmp, 'dockerd.pid'),
      '-H',
      dockerHost,
      '--bridge=none',
      '--iptables=false',
      '--ip-masq=false',
      '--containerd-namespace',
      ns,
      '--containerd-plugins-namespace',
      `${ns}-plugins`,
    ],
    { stdio: ['ignore', out, out] },
  );
  dockerdExit = new Promise((r) => dockerd!.once('exit', () => r()));
  await waitForEngine();

  // the image: busybox-static and an index page, nothing else
  const rootfs = join(tmp, 'rootfs');
  mkdirSync(join(rootfs, 'bin'), { recursive: true });
  mkdirSync(join(rootfs, 'www'));
  copyFileSync('/bin/busybox', join(rootfs, 'bin/busybox'));
  chmodSync(join(rootfs, 'bin/busybox'), 0o755);
  for (const a of ['sh', 'httpd', 'sleep']) symlinkSync('busybox', join(rootfs, 'bin', a));
  writeFileSync(join(rootfs, 'www/index.html'), 'hello from a ballast pod\n');
  const tar = await exec(['/usr/bin/tar', '-C', rootfs, '-cf', join(tmp, 'image.tar'), '.']);
  expect(tar.code).toBe(0);
  const imp = await docker('import', join(tmp, 'image.tar'), IMAGE);
  expect([imp.code, imp.stderr]).toEqual([0, '']);

  // systemctl: a stub that records its argv; `show` answers an inactive, disabled unit
  calls = join(tmp, 'systemctl.calls');
  const stub = join(tmp, 'systemctl');
  writeFileSync(
    stub,
    `#!/bin/sh\nprintf '%s\\n' "$*" >> ${calls}\nif [ "$1" = show ]; then\n  seen=0\n  for a in "$@"; do\n    if [ $seen = 1 ]; then printf 'Id=%s\\nLoadState=loaded\\nActiveState=inactive\\nSubState=dead\\nUnitFileState=disabled\\n\\n' "$a"; fi\n    [ "$a" = -- ] && seen=1\n  done\nfi\nexit 0\n`,
  );
  chmodSync(stub, 0o755);

  port = await freePort();
  const made = makeTestConfig();
  stateDir = made.state;
  root = made.root;
  const configFile = join(stateDir, 'config.yaml');
  const config = {
    ...made.config,
    system: {
      ...made.config.system,
      mode: 'live' as const,
      binaries: { ...made.config.system.binaries, systemctl: stub },
      envAllow: [...made.config.system.envAllow, 'DOCKER_HOST'],
    },
    settings: {
      pod: {
        composeCommand: ['/usr/bin/docker-compose'],
        env: { DOCKER_HOST: dockerHost },
        composeTimeoutMs: 120_000,
        bindRoots: [join(root, 'srv/shared')],
        // the units' check before every start is this host's own CLI on this host's config
        verifyCommand: [process.execPath, join(distDir, 'host/cli.mjs'), 'pod', 'verify', '--config', configFile],
      },
    },
  };
  writeFileSync(configFile, JSON.stringify(config));
  mkdirSync(join(root, 'etc'), { recursive: true });
  writeFileSync(config.paths.fstab, 'UUID=0000 /srv/pods ext4 defaults 0 2 # ballast:pod-data\n');
  host = await createHost({ config, distDir, routes: POD_ROUTES, log: () => undefined });
  token = (await createToken(host.db, 'admin', ['*'])).token;
}, 180_000);

afterAll(async () => {
  try {
    await host?.close();
  } finally {
    if (dockerHost && dockerd && dockerd.exitCode === null) {
      // containers left by a failed test go first, then the engine (its containerd stops with it)
      const ids = await docker('ps', '-aq');
      if (ids.code === 0 && ids.stdout.trim()) await docker('rm', '-f', ...ids.stdout.trim().split('\n'));
      dockerd.kill('SIGTERM');
      const killer = setTimeout(() => dockerd?.kill('SIGKILL'), 20_000);
      await dockerdExit;
      clearTimeout(killer);
    }
    if (tmp) {
      await exec(['/usr/bin/umount', '-R', join(tmp, 'data')]).catch(() => undefined);
      await exec(['/usr/bin/umount', '-R', join(tmp, 'exec')]).catch(() => undefined);
      rmSync(tmp, { recursive: true, force: true });
    }
    if (stateDir) rmSync(stateDir, { recursive: true, force: true });
  }
}, 60_000);

describe('a pod on a real engine (docker-compose 1.x)', () => {
  it('set, run its unit, inspect, serve, pause/unpause/kill, log, destroy', async () => {
    const fileContents = {
      version: '3.8',
      services: {
        web: {
          image: IMAGE,
          command: ['/bin/httpd', '-f', '-p', '8080', '-h', '/www'],
          ports: [`127.0.0.1:${port}:8080`],
        },
      },
    };
    const set = await call('POST', '/pod/web/set', { fileContents });
    expect(set).toEqual({
      status: 200,
      json: {
        name: 'ballast-pod-web',
        compose_file: fileContents,
        service: [{ id: 'ballast-pod-web.service', state: 'disabled', locked: false }],
      },
    });

    const unitFile = join(root, 'etc/systemd/system/ballast-pod-web.service');
    const composeFile = join(root, 'var/lib/ballast/pods/ballast-pod-web/compose.json');
    expect(statSync(unitFile).mode & 0o777).toBe(0o644);
    expect(statSync(composeFile).mode & 0o777).toBe(0o640);
    expect(JSON.parse(readFileSync(composeFile, 'utf8'))).toEqual(fileContents);
    const unit = readFileSync(unitFile, 'utf8');
    const verify = await exec(['/usr/bin/systemd-analyze', 'verify', unitFile]);
    expect([verify.code, verify.stderr.split('\n').filter((l) => l.includes('ballast-pod-web'))]).toEqual([0, []]);
    const start = execStartOf(unit);
    expect(start).toEqual([
      '/usr/bin/docker-compose',
      '-p',
      'ballast-pod-web',
      '-f',
      composeFile,
      'up',
      '-d',
      '--remove-orphans',
    ]);
    expect(unit).toContain(`Environment=DOCKER_HOST=${dockerHost}`);
    const cwd = join(root, 'var/lib/ballast/pods/ballast-pod-web');
    expect(unit).toContain(`WorkingDirectory=${cwd}`);
    const pre = await exec(execStartOf(unit, 'ExecStartPre'), { env: dockerEnv(), timeoutMs: 120_000, cwd });
    expect([pre.code, pre.stderr]).toEqual([0, '']);
    const up = await exec(start, { env: dockerEnv(), timeoutMs: 120_000, cwd });
    expect([up.code, up.stderr]).toEqual([0, expect.stringContaining('Creating ballast-pod-web_web_1')]);

    const inspect = async () =>
      (await call('GET', '/pod/web/inspect')).json as { container_status: string; running_processes: string };
    const running = await inspect();
    expect(running.container_status.split('\n')[0]).toBe('running');
    expect(running.container_status).toContain(`ballast-pod-web_web_1 web running (Up) 127.0.0.1:${port}->8080/tcp`);
    expect(running.running_processes).toContain('/bin/httpd -f -p 8080 -h /www');

    expect(await (await fetch(`http://127.0.0.1:${port}/`)).text()).toBe('hello from a ballast pod\n');

    const pause = await call('POST', '/pod/web/pause');
    expect(pause).toEqual({ status: 200, json: expect.stringContaining('Pausing ballast-pod-web_web_1') });
    expect((await inspect()).container_status.split('\n')[0]).toBe('paused');
    expect((await call('POST', '/pod/web/unpause')).json).toEqual(
      expect.stringContaining('Unpausing ballast-pod-web_web_1'),
    );
    expect((await inspect()).container_status.split('\n')[0]).toBe('running');
    expect((await call('POST', '/pod/web/kill')).json).toEqual(
      expect.stringContaining('Killing ballast-pod-web_web_1'),
    );
    const killed = await inspect();
    expect(killed.container_status).toMatch(/^stopped\nballast-pod-web_web_1 web exited \(Exit 137\)/);
    expect(killed.running_processes).toBe('');

    const log = await call('GET', '/pod/web/log?lines=20');
    expect(log.status).toBe(200);
    expect(typeof log.json).toBe('string');

    const list = await call('GET', '/pod');
    expect(list.json).toEqual([
      { name: 'ballast-pod-web', service: { id: 'ballast-pod-web.service', state: 'disabled', locked: false } },
    ]);

    const destroy = await call('POST', '/pod/web/destroy');
    expect(destroy).toEqual({
      status: 200,
      json: {
        containerResponse: expect.stringContaining('Removing network ballast-pod-web_default'),
        serviceResponse: {
          id: 'ballast-pod-web.service',
          stopped: true,
          disabled: true,
          unitFileRemoved: true,
          podFilesRemoved: true,
        },
      },
    });
    expect((await docker('ps', '-aq', '--filter', 'label=com.docker.compose.project=ballast-pod-web')).stdout).toBe('');
    expect((await docker('network', 'ls', '-q', '--filter', 'name=ballast-pod-web')).stdout).toBe('');
    expect(existsSync(unitFile)).toBe(false);
    expect(existsSync(join(root, 'srv/pods/ballast-pod-web'))).toBe(false);
    expect(existsSync(cwd)).toBe(false);
    expect(readFileSync(calls, 'utf8').split('\n').filter(Boolean)).toEqual([
      'daemon-reload',
      'show --no-pager --property=Id,LoadState,ActiveState,SubState,UnitFileState -- ballast-pod-web.service',
      'show --no-pager --property=Id,LoadState,ActiveState,SubState,UnitFileState -- ballast-pod-web.service',
      'stop -- ballast-pod-web.service',
      'disable -- ballast-pod-web.service',
      'daemon-reload',
    ]);
    expect((await call('GET', '/pod/web/details')).status).toBe(404);
  }, 240_000);

  it("an admitted pod's container sees no compose file; a bind source it swapped for a link stops the next start", async () => {
    const shared = join(root, 'srv/shared');
    mkdirSync(join(shared, 'y'), { recursive: true });
    const sleeper = (volumes: string[]) => ({
      version: '3.8',
      services: { a: { image: IMAGE, command: ['/bin/sleep', '600'], volumes } },
    });
    // x may write its whole data directory and the shared root; y reads one directory of that root
    expect((await call('POST', '/pod/x/set', { fileContents: sleeper(['./:/pod', `${shared}:/shared`]) })).status).toBe(
      200,
    );
    expect((await call('POST', '/pod/y/set', { fileContents: sleeper([`${shared}/y:/y:ro`]) })).status).toBe(200);
    const unitOf = (n: string) => readFileSync(join(root, `etc/systemd/system/ballast-pod-${n}.service`), 'utf8');
    const cwdOf = (n: string) => join(root, `var/lib/ballast/pods/ballast-pod-${n}`);
    const run = (n: string, key: 'ExecStartPre' | 'ExecStart') =>
      exec(execStartOf(unitOf(n), key), { env: dockerEnv(), timeoutMs: 120_000, cwd: cwdOf(n) });
    const preX = await run('x', 'ExecStartPre');
    expect([preX.code, preX.stderr]).toEqual([0, '']);
    expect((await run('x', 'ExecStart')).code).toBe(0);

    const inX = (script: string) => docker('exec', 'ballast-pod-x_a_1', '/bin/sh', '-c', script);
    // nothing a container can reach holds a compose file: not its own, not another pod's
    const found = await inX('find / -xdev -name compose.json 2>/dev/null; ls -a /pod');
    expect(found.code).toBe(0);
    expect(found.stdout).not.toContain('compose.json');
    // a .env written into its data directory is not where compose looks (the unit works in cwdOf)
    expect((await inX('echo COMPOSE_FILE=/pod/evil.yml > /pod/.env && echo ok')).stdout).toBe('ok\n');
    expect((await run('x', 'ExecStartPre')).code).toBe(0);

    // x replaces y's bind source with a link to / : y's next start is refused before compose runs
    expect((await inX('rmdir /shared/y && ln -s / /shared/y && echo swapped')).stdout).toBe('swapped\n');
    const pre = await run('y', 'ExecStartPre');
    expect(pre.code).toBe(1);
    expect(pre.stderr).toContain('pod verify: ballast-pod-y refused: fileContents.services.a.volumes.0: bind source');
    expect((await docker('ps', '-aq', '--filter', 'label=com.docker.compose.project=ballast-pod-y')).stdout).toBe('');

    for (const n of ['x', 'y']) expect((await call('POST', `/pod/${n}/destroy`)).status).toBe(200);
    expect((await docker('ps', '-aq')).stdout).toBe('');
  }, 240_000);

  it('refuses a second pod publishing the port the engine now listens on', async () => {
    const p2 = await freePort();
    const fileContents = {
      version: '3.8',
      services: {
        a: { image: IMAGE, command: ['/bin/httpd', '-f', '-p', '8080', '-h', '/www'], ports: [`127.0.0.1:${p2}:8080`] },
      },
    };
    expect((await call('POST', '/pod/one/set', { fileContents })).status).toBe(200);
    const up = await exec(execStartOf(readFileSync(join(root, 'etc/systemd/system/ballast-pod-one.service'), 'utf8')), {
      env: dockerEnv(),
      timeoutMs: 120_000,
    });
    expect(up.code).toBe(0);
    // set probes the host's ports (test does not: a read token may call it)
    const clash = await call('POST', '/pod/two/set', { fileContents });
    expect(clash.status).toBe(400);
    expect(clash.json).toMatchObject({
      error: {
        issues: [
          {
            path: 'body.fileContents.services.a.ports.0',
            message: `host port ${p2}/tcp is already in use on this host`,
          },
        ],
      },
    });
    // the pod's own ports are not a clash when it is updated
    expect((await call('POST', '/pod/one/update', { fileContents })).status).toBe(200);
    expect((await call('POST', '/pod/one/destroy')).status).toBe(200);
    expect((await docker('ps', '-aq')).stdout).toBe('');
  }, 240_000);
});
