/**
 * Route tier: the pod routes with the replay back end (exact argv, files written and their
 * modes, events, refusals), for each compose flavour's `ps` output, and permissions.
 */
import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { Fixture } from '../../runtime/system/fixture-file';
import { readFixture } from '../../runtime/system/fixture-file';
import { fixture, makeTestHost, repo, type TestHost } from '../helpers/host';
import { POD_ROUTES } from './pod-helpers';
import { errorOf, issuePaths, detail } from '../helpers/answers';

const SC = '/usr/bin/systemctl';
const PROPS = '--property=Id,LoadState,ActiveState,SubState,UnitFileState';
const show = (unit: string, active = 'inactive', file = 'disabled') =>
  fixture(
    [SC, 'show', '--no-pager', PROPS, '--', unit],
    `Id=${unit}\nLoadState=loaded\nActiveState=${active}\nSubState=dead\nUnitFileState=${file}\n`,
  );
const ok = (argv: string[], stdout = '', o: Partial<Fixture> = {}) => fixture(argv, stdout, o);

let t: TestHost;
afterEach(async () => t?.close());

async function host(fixtures: Fixture[] = [], pod: Record<string, unknown> = {}, configured = true): Promise<TestHost> {
  t = await makeTestHost({
    routes: POD_ROUTES,
    fixtures,
    config: { settings: { pod: { checkHostPorts: false, engineCheck: false, ...pod } } },
  });
  if (configured)
    writeFileSync(t.config.paths.fstab, '/dev/sda1 / ext4 defaults 0 1\nUUID=abc /srv/pods xfs defaults 0 2\n');
  return t;
}

const paths = () => {
  const dir = (n: string) => join(t.config.paths.podData, `ballast-pod-${n}`);
  const filesDir = (n: string) => join(t.config.paths.podFiles, `ballast-pod-${n}`);
  return {
    dir,
    filesDir,
    compose: (n: string) => join(filesDir(n), 'compose.json'),
    unit: (n: string) => join(t.config.paths.podUnitDir, `ballast-pod-${n}.service`),
  };
};
const SEEDED = { version: '3.8', services: { web: { image: 'nginx' } } };
const SEEDED_COMPOSE = `${JSON.stringify(SEEDED, null, 2)}\n`;
function seedPod(name: string, compose: unknown = SEEDED) {
  const p = paths();
  mkdirSync(p.dir(name), { recursive: true });
  mkdirSync(p.filesDir(name), { recursive: true });
  writeFileSync(p.compose(name), `${JSON.stringify(compose, null, 2)}\n`);
  writeFileSync(p.unit(name), '[Unit]\n');
}
const composeOf = (n: string) => ['/usr/bin/docker', 'compose', '-p', `ballast-pod-${n}`, '-f', paths().compose(n)];
const argvs = () => t.replay!.calls.map((c) => c.argv);
const events = (kind: string) =>
  (t.host.db.prepare('SELECT data FROM events WHERE kind = ? ORDER BY seq').all(kind) as { data: string }[]).map(
    (e) => JSON.parse(e.data) as unknown,
  );
const stdoutOf = (name: string) => readFixture(join(repo, 'fixtures/compose', `${name}.yaml`)).stdout;

describe('inspect reads every compose flavour', () => {
  const cases: { flavour: string; cmd: string[]; ps: string[]; fixture: string; pod: string; status: string }[] = [
    {
      flavour: 'docker compose v2 < 2.21 (array)',
      cmd: ['/usr/bin/docker', 'compose'],
      ps: ['ps', '-a', '--format', 'json'],
      fixture: 'v2-ps-json-array',
      pod: 'web',
      status:
        'partial\nballast-pod-web-web-1 web running (Up 7 hours) 0.0.0.0:8081->80/tcp\nballast-pod-web-cache-1 cache exited (Exited (0) 2 hours ago)',
    },
    {
      flavour: 'docker compose v2 ≥ 2.21 (JSON Lines)',
      cmd: ['/usr/bin/docker', 'compose'],
      ps: ['ps', '-a', '--format', 'json'],
      fixture: 'v2-ps-json-lines',
      pod: 'web',
      status:
        'partial\nballast-pod-web-web-1 web running (Up 7 hours) 0.0.0.0:8081->80/tcp\nballast-pod-web-cache-1 cache exited (Exited (0) 2 hours ago)',
    },
    {
      flavour: 'docker-compose 1.x (table)',
      cmd: ['/usr/bin/docker-compose'],
      ps: ['ps', '-a'],
      fixture: 'v1-ps-running',
      pod: 'x',
      status: 'running\nballast-pod-x_web_1 web running (Up) 0.0.0.0:18081->8080/tcp :::18081->8080/tcp',
    },
    {
      flavour: 'podman-compose (podman ps JSON)',
      cmd: ['/usr/bin/podman-compose'],
      ps: ['ps', '--format', 'json'],
      fixture: 'podman-ps-json',
      pod: 'web',
      status: 'running\nballast-pod-web_web_1 web running (Up 7 hours) 0.0.0.0:8081->80/tcp',
    },
  ];
  for (const c of cases) {
    it(c.flavour, async () => {
      const top =
        'ballast-pod-x_web_1\nUID     PID    PPID    C   STIME   TTY     TIME                  CMD             \n---------------------------------------------------------------------------------\nroot   11726   11705   0   03:52   ?     00:00:00   /bin/httpd -f -p 8080 -h /www\n';
      await host([], { composeCommand: c.cmd, env: { DOCKER_HOST: 'unix:///run/pod-test.sock' } });
      const p = paths();
      const base = [...c.cmd, '-p', `ballast-pod-${c.pod}`, '-f', p.compose(c.pod)];
      t.replay!.load([ok([...base, ...c.ps], stdoutOf(c.fixture)), ok([...base, 'top'], top)]);
      seedPod(c.pod);
      const r = await t.call('GET', `/api/v2/pod/${c.pod}/inspect`);
      expect(r.json).toEqual({
        name: `ballast-pod-${c.pod}`,
        container_status: c.status,
        running_processes: top.trimEnd(),
      });
      expect(argvs()).toEqual([
        [...base, ...c.ps],
        [...base, 'top'],
      ]);
      expect(t.replay!.calls.map((x) => x.env)).toEqual([
        { DOCKER_HOST: 'unix:///run/pod-test.sock' },
        { DOCKER_HOST: 'unix:///run/pod-test.sock' },
      ]);
    });
  }

  it('does not run top when nothing runs, and answers 502 on output it cannot read', async () => {
    await host();
    const base = ['/usr/bin/docker', 'compose', '-p', 'ballast-pod-web', '-f', paths().compose('web')];
    seedPod('web');
    t.replay!.load([
      ok([...base, 'ps', '-a', '--format', 'json'], '', { once: true }),
      ok([...base, 'ps', '-a', '--format', 'json'], 'garbage\n'),
    ]);
    expect((await t.call('GET', '/api/v2/pod/web/inspect')).json).toEqual({
      name: 'ballast-pod-web',
      container_status: 'none',
      running_processes: '',
    });
    expect((await t.call('GET', '/api/v2/pod/web/inspect')).status).toBe(502);
  });
});

describe('set', () => {
  const body = {
    fileContents: { version: '3.8', services: { side: { image: 'busybox:1.36', command: ['sleep', 'infinity'] } } },
    recipes: ['web-server'],
  };

  it('is refused before the container system is configured', async () => {
    await host([], {}, false);
    const r = await t.call('POST', '/api/v2/pod/site/set', { body });
    expect([r.status, errorOf(r).message]).toEqual([409, 'container system not configured']);
    expect(argvs()).toEqual([]);
  });

  it('writes the compose file and a disabled unit, reloads systemd, emits pod.pod.created', async () => {
    await host([ok([SC, 'daemon-reload']), show('ballast-pod-site.service')]);
    // every host crossing the route makes (SYSTEM binding calls): at most 3 for a set
    const direct = t.host.env.SYSTEM_DIRECT!;
    const call = direct.call.bind(direct);
    const crossings: string[] = [];
    direct.call = (op, payload, requestId) => (crossings.push(op), call(op, payload, requestId));
    const r = await t.call('POST', '/api/v2/pod/ballast-pod-site/set', { body });
    direct.call = call;
    expect(crossings).toEqual(['file/read', 'pod/apply', 'exec']);
    const p = paths();
    const stored = {
      version: '3.8',
      services: {
        side: { image: 'busybox:1.36', command: ['sleep', 'infinity'] },
        web: {
          image: 'nginx:1.27-alpine',
          container_name: 'ballast-pod-site-web',
          environment: ['NGINX_ENTRYPOINT_QUIET_LOGS=1'],
          // host paths are stored resolved: what the next start checks again
          volumes: [`${p.dir('site')}/html:/usr/share/nginx/html:ro`],
          ports: ['8081:80'],
          restart: 'unless-stopped',
        },
      },
    };
    expect(r.json).toEqual({
      name: 'ballast-pod-site',
      compose_file: stored,
      service: [{ id: 'ballast-pod-site.service', state: 'disabled', locked: false }],
    });
    expect(readFileSync(p.compose('site'), 'utf8')).toBe(`${JSON.stringify(stored, null, 2)}\n`);
    expect(statSync(p.compose('site')).mode & 0o777).toBe(0o640);
    expect(statSync(p.unit('site')).mode & 0o777).toBe(0o644);
    expect(readFileSync(p.unit('site'), 'utf8')).toBe(
      [
        '[Unit]',
        'Description=Ballast pod ballast-pod-site',
        'Requires=docker.service',
        'After=docker.service network-online.target',
        'Wants=network-online.target',
        `RequiresMountsFor=${p.dir('site')} ${p.filesDir('site')}`,
        '',
        '[Service]',
        'Type=oneshot',
        'RemainAfterExit=yes',
        `WorkingDirectory=${p.filesDir('site')}`,
        'ExecStartPre=/usr/bin/ballast pod verify -- ballast-pod-site',
        `ExecStart=/usr/bin/docker compose -p ballast-pod-site -f ${p.compose('site')} up -d --remove-orphans`,
        `ExecStop=/usr/bin/docker compose -p ballast-pod-site -f ${p.compose('site')} down`,
        'TimeoutStartSec=300',
        'TimeoutStopSec=300',
        '',
        '[Install]',
        'WantedBy=multi-user.target',
        '',
      ].join('\n'),
    );
    expect(argvs()).toEqual([
      [SC, 'daemon-reload'],
      [SC, 'show', '--no-pager', PROPS, '--', 'ballast-pod-site.service'],
    ]);
    expect(events('pod.pod.created')).toEqual([{ name: 'ballast-pod-site', recipes: ['web-server'] }]);
    // the same pod again, by its short name
    expect((await t.call('POST', '/api/v2/pod/site/set', { body })).status).toBe(409);
  });

  it('refuses bad input with the field named, and conflicts', async () => {
    await host();
    seedPod('web');
    const post = (name: string, b: unknown) => t.call('POST', `/api/v2/pod/${name}/set`, { body: b });
    const priv = await post('bad', {
      fileContents: { version: '3.8', services: { a: { image: 'x', privileged: true } } },
    });
    expect([priv.status, errorOf(priv).issues]).toEqual([
      400,
      [
        {
          path: 'body.fileContents.services.a.privileged',
          message: 'privileged containers are not allowed (settings.pod.allow.privileged, root-equivalent)',
        },
      ],
    ]);
    const clash = await post('new', {
      fileContents: { version: '3.8', services: { web: { image: 'x' } } },
      recipes: ['web-server'],
    });
    expect([clash.status, errorOf(clash).message]).toEqual([
      409,
      'service web of a recipe is already defined in fileContents',
    ]);
    const unknown = await post('new', {
      fileContents: { version: '3.8', services: { a: { image: 'x' } } },
      recipes: ['nosuch'],
    });
    expect([unknown.status, issuePaths(unknown)[0]]).toEqual([400, 'body.recipes.0']);
    expect((await post('web', { fileContents: { version: '3.8', services: { a: { image: 'x' } } } })).status).toBe(409);
    for (const name of ['suggested', 'config', 'Upper', '-x', 'a.b', 'a%2fb', 'a%00b']) {
      const r = await post(name, { fileContents: { version: '3.8', services: { a: { image: 'x' } } } });
      expect([name, r.status]).toEqual([name, 400]);
    }
    expect(
      (await post('new', { fileContents: { version: '3.8', services: { a: { image: 'x' } } }, extra: 1 })).status,
    ).toBe(400);
    expect(argvs()).toEqual([]);
    expect(existsSync(paths().dir('new'))).toBe(false);
  });

  it('leaves nothing behind when systemd cannot reload', async () => {
    await host([ok([SC, 'daemon-reload'], '', { code: 1, stderr: 'Failed to reload daemon: Access denied' })]);
    const r = await t.call('POST', '/api/v2/pod/site/set', {
      body: { fileContents: { version: '3.8', services: { a: { image: 'x' } } } },
    });
    expect([r.status, detail(r, 'command')]).toEqual([502, [SC, 'daemon-reload']]);
    expect(errorOf(r).message).toBe(
      'systemctl failed (exit 1): Failed to reload daemon: Access denied; the pod was not created: putting the files back did not complete (the next change or start retries it)',
    );
    expect(existsSync(paths().compose('site'))).toBe(false);
    expect(existsSync(paths().unit('site'))).toBe(false);
    expect(events('pod.pod.created')).toEqual([]);
    // systemd did not reload after the files went: the intent stays for the next start to finish
    expect(t.host.db.prepare('SELECT area FROM intents').all()).toEqual([{ area: 'pod' }]);
  });
});

describe('update', () => {
  it('404 for a pod that does not exist', async () => {
    await host();
    expect(
      (
        await t.call('POST', '/api/v2/pod/nosuch/update', {
          body: { fileContents: { version: '3.8', services: { a: { image: 'x' } } } },
        })
      ).status,
    ).toBe(404);
  });

  it('restarts a running pod, and puts the old file back when the restart fails', async () => {
    await host([
      show('ballast-pod-web.service', 'active', 'enabled'),
      ok([SC, 'daemon-reload']),
      ok([SC, 'restart', '--', 'ballast-pod-web.service']),
    ]);
    seedPod('web');
    t.replay!.load([ok([...composeOf('web'), 'ps', '-a', '--format', 'json'], stdoutOf('v2-ps-json-lines'))]);
    const old = readFileSync(paths().compose('web'), 'utf8');
    const fileContents = { version: '3.8', services: { web: { image: 'nginx:1.27-alpine' } } };
    const r = await t.call<{ service: unknown; compose_file: { services: Record<string, unknown> } }>(
      'POST',
      '/api/v2/pod/web/update',
      { body: { fileContents, recipes: ['metrics-exporter'] } },
    );
    expect(r.status).toBe(200);
    expect(r.json.service).toEqual([{ id: 'ballast-pod-web.service', state: 'online', locked: false }]);
    expect(Object.keys(r.json.compose_file.services)).toEqual(['web', 'node-exporter']);
    expect(argvs()).toContainEqual([SC, 'restart', '--', 'ballast-pod-web.service']);
    expect(events('pod.pod.updated')).toEqual([{ name: 'ballast-pod-web', recipes: ['metrics-exporter'] }]);

    const written = readFileSync(paths().compose('web'), 'utf8');
    expect(written).not.toBe(old);
    t.replay!.load([
      ok([SC, 'restart', '--', 'ballast-pod-web.service'], '', {
        code: 1,
        stderr: 'Job for ballast-pod-web.service failed.',
        once: true,
      }),
    ]);
    const bad = await t.call('POST', '/api/v2/pod/web/update', {
      body: { fileContents: { version: '3.8', services: { other: { image: 'x' } } } },
    });
    expect(bad.status).toBe(502);
    expect(readFileSync(paths().compose('web'), 'utf8')).toBe(written);
  });
});

describe('state', () => {
  it('a unit systemd calls active is online only while a container runs or is paused', async () => {
    await host([show('ballast-pod-web.service', 'active', 'enabled')]);
    seedPod('web');
    const ps = (state: string) =>
      ok(
        [...composeOf('web'), 'ps', '-a', '--format', 'json'],
        `${JSON.stringify({ Name: 'ballast-pod-web-web-1', Project: 'ballast-pod-web', Service: 'web', State: state, Status: state })}\n`,
        { once: true },
      );
    const state = async () => {
      const list = await t.call<{ service: { state: string } }[]>('GET', '/api/v2/pod');
      const details = await t.call<{ service: { state: string }[] }>('GET', '/api/v2/pod/web/details');
      return [list.json[0].service.state, details.json.service[0].state];
    };
    t.replay!.load([ps('running'), ps('running')]);
    expect(await state()).toEqual(['online', 'online']);
    t.replay!.load([ps('paused'), ps('paused')]);
    expect(await state()).toEqual(['online', 'online']);
    // every container killed: the oneshot unit is still active, the pod is not online (enabled: offline)
    t.replay!.load([ps('exited'), ps('exited')]);
    expect(await state()).toEqual(['offline', 'offline']);
    t.replay!.load([ok([...composeOf('web'), 'ps', '-a', '--format', 'json'], '', { once: true }), ps('exited')]);
    expect((await state())[0]).toBe('offline');
  });
});

describe('destroy', () => {
  it('stops, disables, downs, removes the unit and the pod directory', async () => {
    await host([
      ok([SC, 'stop', '--', 'ballast-pod-web.service']),
      ok([SC, 'disable', '--', 'ballast-pod-web.service'], '', {
        stderr: 'Removed "/etc/systemd/system/multi-user.target.wants/ballast-pod-web.service".\n',
      }),
      ok([SC, 'daemon-reload']),
    ]);
    seedPod('web');
    writeFileSync(join(paths().dir('web'), 'data.txt'), 'x');
    const down = [
      '/usr/bin/docker',
      'compose',
      '-p',
      'ballast-pod-web',
      '-f',
      paths().compose('web'),
      'down',
      '--remove-orphans',
    ];
    t.replay!.load([
      ok(down, '', {
        stderr: ' Network ballast-pod-web_default  Removing\n Network ballast-pod-web_default  Removed\n',
      }),
    ]);
    const r = await t.call('POST', '/api/v2/pod/web/destroy');
    expect(r.json).toEqual({
      containerResponse: 'Network ballast-pod-web_default  Removing\n Network ballast-pod-web_default  Removed',
      serviceResponse: {
        id: 'ballast-pod-web.service',
        stopped: true,
        disabled: true,
        unitFileRemoved: true,
        podFilesRemoved: true,
      },
    });
    expect(argvs()).toEqual([
      down,
      [SC, 'stop', '--', 'ballast-pod-web.service'],
      [SC, 'disable', '--', 'ballast-pod-web.service'],
      [SC, 'daemon-reload'],
    ]);
    expect(existsSync(paths().dir('web'))).toBe(false);
    expect(existsSync(paths().filesDir('web'))).toBe(false);
    expect(existsSync(paths().unit('web'))).toBe(false);
    expect(events('pod.pod.destroyed')).toEqual([{ name: 'ballast-pod-web', recipes: [] }]);
    expect((await t.call('POST', '/api/v2/pod/web/destroy')).status).toBe(404);
  });

  it('keeps the pod when compose down fails', async () => {
    await host([
      ok([SC, 'stop', '--', 'ballast-pod-web.service']),
      ok([SC, 'disable', '--', 'ballast-pod-web.service']),
    ]);
    seedPod('web');
    t.replay!.load([
      ok(
        [
          '/usr/bin/docker',
          'compose',
          '-p',
          'ballast-pod-web',
          '-f',
          paths().compose('web'),
          'down',
          '--remove-orphans',
        ],
        '',
        {
          code: 1,
          stderr: `Traceback (most recent call last):\n${'  File "x.py", line 1, in <module>\n'.repeat(80)}docker.errors.DockerException: Error while fetching server API version\n`,
        },
      ),
    ]);
    const r = await t.call('POST', '/api/v2/pod/web/destroy');
    expect([r.status, errorOf(r).code, errorOf(r).message]).toEqual([
      502,
      'command_failed',
      'compose down of ballast-pod-web failed (exit 1); the pod was kept as it was: docker.errors.DockerException: Error while fetching server API version',
    ]);
    // nothing was stopped or disabled: all or nothing
    expect(argvs().filter((a) => a[0] === SC)).toEqual([]);
    expect(readFileSync(paths().compose('web'), 'utf8')).toBe(SEEDED_COMPOSE);
    expect(readFileSync(paths().unit('web'), 'utf8')).toBe('[Unit]\n');
  });
});

describe('pause, unpause, kill and log', () => {
  it('answer the tool output as a JSON string and emit events', async () => {
    await host();
    seedPod('web');
    const base = ['/usr/bin/docker', 'compose', '-p', 'ballast-pod-web', '-f', paths().compose('web')];
    t.replay!.load([
      ok([...base, 'pause'], '', { stderr: ' Container ballast-pod-web-web-1  Paused\n' }),
      ok([...base, 'kill'], '', { code: 1, stderr: 'no container to kill' }),
    ]);
    expect((await t.call('POST', '/api/v2/pod/web/pause')).json).toBe('Container ballast-pod-web-web-1  Paused');
    expect(events('pod.pod.paused')).toEqual([{ name: 'ballast-pod-web' }]);
    const k = await t.call('POST', '/api/v2/pod/web/kill');
    expect([k.status, detail(k, 'command')]).toEqual([502, [...base, 'kill']]);
    expect(events('pod.pod.killed')).toEqual([]);
    expect((await t.call('POST', '/api/v2/pod/nosuch/unpause')).status).toBe(404);
  });

  it('log: lines and since reach journalctl as single words; the answer is bounded and oldest first', async () => {
    await host([], { logMaxBytes: 1024, logMaxLines: 100 });
    seedPod('web');
    const lines = Array.from(
      { length: 60 },
      (_, i) =>
        `2026-11-25T21:02:${String(59 - i).padStart(2, '0')}+0000 nas01 docker[1]: line ${59 - i} ${'x'.repeat(20)}`,
    );
    const argv = [
      '/usr/bin/journalctl',
      '--no-pager',
      '--output=short-iso',
      '--reverse',
      '--lines=60',
      '--unit=ballast-pod-web.service',
      '--since=-1h',
    ];
    t.replay!.load([
      ok(argv, `${lines.join('\n')}\n`),
      ok(
        [
          '/usr/bin/journalctl',
          '--no-pager',
          '--output=short-iso',
          '--reverse',
          '--lines=100',
          '--unit=ballast-pod-web.service',
        ],
        '-- No entries --\n',
      ),
    ]);
    const r = await t.call('GET', '/api/v2/pod/web/log?lines=60&since=-1h');
    const got = (r.json as string).split('\n');
    expect(new TextEncoder().encode(r.json as string).length).toBeLessThanOrEqual(1024);
    expect(got[got.length - 1]).toBe(lines[0]);
    expect(got[0]).toBe(lines[got.length - 1]);
    expect((await t.call('GET', '/api/v2/pod/web/log')).json).toBe('');
    for (const q of ['lines=101', 'lines=0', 'lines=-5', 'since=--all', 'since=-1h%3B%20rm', 'since=2026-11-25%0A']) {
      expect([q, (await t.call('GET', `/api/v2/pod/web/log?${q}`)).status]).toEqual([q, 400]);
    }
  });
});

describe('config', () => {
  const lsblk = (dev: string, json: string, code = 0) =>
    ok(['/usr/bin/lsblk', '-J', '-d', '-o', 'PATH,TYPE,FSTYPE,UUID,MOUNTPOINTS', '--', dev], json, { code });
  const findmnt = (p: string, target: string | null) =>
    ok(
      ['/usr/bin/findmnt', '-J', '-o', 'TARGET,SOURCE,FSTYPE', '--mountpoint', p],
      target ? `{"filesystems":[{"target":"${target}","source":"/dev/sdb","fstype":"xfs"}]}` : '',
      { code: target ? 0 : 1 },
    );

  it('writes daemon.json and the fstab entries, restarts the engine; GET reads them back', async () => {
    await host(
      [
        lsblk(
          '/dev/sdc',
          '{"blockdevices":[{"path":"/dev/sdc","type":"disk","fstype":"xfs","uuid":"u-1","mountpoints":[null]}]}',
        ),
        findmnt('/srv/data', '/srv/data'),
        ok([SC, 'daemon-reload']),
        ok([SC, 'restart', '--', 'docker.service']),
      ],
      {},
      false,
    );
    writeFileSync(t.config.paths.fstab, '/dev/sda1 / ext4 defaults 0 1\n');
    const r = await t.call('POST', '/api/v2/pod/config', {
      body: {
        configJson: { 'storage-driver': 'overlay2', 'live-restore': true },
        podImageFs: '/dev/sdc',
        podDataFs: '/srv/data',
      },
    });
    expect(r.json).toEqual({ podImageFs: '/dev/sdc', podDataFs: '/srv/data' });
    expect(readFileSync(t.config.paths.dockerDaemonJson, 'utf8')).toBe(
      '{\n  "storage-driver": "overlay2",\n  "live-restore": true\n}\n',
    );
    expect(readFileSync(t.config.paths.fstab, 'utf8')).toBe(
      '/dev/sda1 / ext4 defaults 0 1\nUUID=u-1 /var/lib/docker xfs defaults,nofail 0 2 # ballast:pod-images\n/srv/data /srv/pods none bind,nofail 0 0 # ballast:pod-data\n',
    );
    expect(argvs().slice(2)).toEqual([
      [SC, 'daemon-reload'],
      [SC, 'restart', '--', 'docker.service'],
    ]);
    expect(events('pod.config.updated')).toEqual([{ podImageFs: '/dev/sdc', podDataFs: '/srv/data' }]);
    expect((await t.call('GET', '/api/v2/pod/config')).json).toEqual({
      daemonJson: { 'storage-driver': 'overlay2', 'live-restore': true },
      podDataMount: {
        source: '/srv/data',
        mountpoint: '/srv/pods',
        type: 'none',
        options: { rw: true, mand: false, noatime: false, xattr: false, posixacl: false },
        fs_freq: 0,
        fs_passno: 0,
      },
    });
  });

  it('asks blkid when lsblk has no udev data', async () => {
    await host([
      lsblk(
        '/dev/loop7',
        '{"blockdevices":[{"path":"/dev/loop7","type":"loop","fstype":null,"uuid":null,"mountpoints":[null]}]}',
      ),
      ok(
        ['/usr/sbin/blkid', '-p', '-o', 'export', '--', '/dev/loop7'],
        'DEVNAME=/dev/loop7\nUUID=72c9d572-723e-49cd-8263-f9176ab9cd41\nVERSION=1.0\nBLOCK_SIZE=1024\nTYPE=ext4\nUSAGE=filesystem\n',
      ),
      findmnt('/srv/data', '/srv/data'),
      ok([SC, 'daemon-reload']),
      ok([SC, 'restart', '--', 'docker.service']),
    ]);
    expect(
      (
        await t.call('POST', '/api/v2/pod/config', {
          body: { configJson: {}, podImageFs: '/dev/loop7', podDataFs: '/srv/data' },
        })
      ).status,
    ).toBe(200);
    expect(readFileSync(t.config.paths.fstab, 'utf8')).toContain(
      'UUID=72c9d572-723e-49cd-8263-f9176ab9cd41 /var/lib/docker ext4 defaults,nofail 0 2 # ballast:pod-images\n',
    );
  });

  it('puts both files back when the engine does not restart', async () => {
    await host([
      findmnt('/srv/images', '/srv/images'),
      findmnt('/srv/data', '/srv/data'),
      ok([SC, 'daemon-reload']),
      ok([SC, 'restart', '--', 'docker.service'], '', { code: 1, stderr: 'Job for docker.service failed', once: true }),
      ok([SC, 'restart', '--', 'docker.service']),
    ]);
    mkdirSync(join(t.config.paths.dockerDaemonJson, '..'), { recursive: true });
    writeFileSync(t.config.paths.dockerDaemonJson, '{"log-driver":"journald"}\n');
    const fstabBefore = readFileSync(t.config.paths.fstab, 'utf8');
    const r = await t.call('POST', '/api/v2/pod/config', {
      body: { configJson: {}, podImageFs: '/srv/images', podDataFs: '/srv/data' },
    });
    expect(r.status).toBe(502);
    expect(readFileSync(t.config.paths.dockerDaemonJson, 'utf8')).toBe('{"log-driver":"journald"}\n');
    expect(readFileSync(t.config.paths.fstab, 'utf8')).toBe(fstabBefore);
    expect(argvs().filter((a) => a[1] === 'restart')).toHaveLength(2);
  });

  it('refuses unknown keys, devices without a filesystem and mounts outside the roots', async () => {
    await host([
      lsblk('/dev/sdz', '', 32),
      lsblk(
        '/dev/sdb',
        '{"blockdevices":[{"path":"/dev/sdb","type":"disk","fstype":null,"uuid":null,"mountpoints":[null]}]}',
      ),
      ok(['/usr/sbin/blkid', '-p', '-o', 'export', '--', '/dev/sdb'], '', { code: 2 }),
      findmnt('/home/x', '/home/x'),
      findmnt('/srv/nomount', null),
      findmnt('/srv', '/srv'),
      lsblk(
        '/dev/sdc',
        '{"blockdevices":[{"path":"/dev/sdc","type":"disk","fstype":"xfs","uuid":"u-1","mountpoints":[null]}]}',
      ),
      findmnt('/srv/data', '/srv/data'),
    ]);
    const post = (b: unknown) => t.call('POST', '/api/v2/pod/config', { body: b });
    const issue = async (b: unknown) => {
      const r = await post(b);
      return [r.status, errorOf(r).issues?.[0]?.path, errorOf(r).message];
    };
    expect(
      (
        await issue({ configJson: { hosts: ['tcp://0.0.0.0:2375'] }, podImageFs: '/dev/sdc', podDataFs: '/srv/data' })
      )[0],
    ).toBe(400);
    expect((await issue({ configJson: {}, podImageFs: '/dev/sdz', podDataFs: '/srv/data' })).slice(0, 2)).toEqual([
      400,
      'body.podImageFs',
    ]);
    expect((await issue({ configJson: {}, podImageFs: '/dev/sdb', podDataFs: '/srv/data' }))[2]).toMatch(
      /has no filesystem/,
    );
    expect((await issue({ configJson: {}, podImageFs: '/home/x', podDataFs: '/srv/data' }))[2]).toMatch(
      /not under the mount roots/,
    );
    expect((await issue({ configJson: {}, podImageFs: '/srv/nomount', podDataFs: '/srv/data' }))[2]).toMatch(
      /neither a block device/,
    );
    expect((await issue({ configJson: {}, podImageFs: '/srv', podDataFs: '/srv/data' }))[2]).toMatch(
      /not under the mount roots/,
    );
    expect((await issue({ configJson: {}, podImageFs: '/srv/a', podDataFs: '/srv/a' })).slice(0, 2)).toEqual([
      400,
      'body.podDataFs',
    ]);
    // a device for images is mounted at data-root at boot: never over a system directory
    for (const root of ['/etc', '/usr/lib/docker', '/srv']) {
      const r = await issue({ configJson: { 'data-root': root }, podImageFs: '/dev/sdc', podDataFs: '/srv/data' });
      expect([root, r[0], r[1]]).toEqual([root, 400, 'body.configJson.data-root']);
    }
    expect(existsSync(t.config.paths.dockerDaemonJson)).toBe(false);
  });
});

describe('permissions and recipes', () => {
  it('pod:read lists, tests and reads recipes; changes need pod:manage', async () => {
    await host([
      ok(
        [SC, 'show', '--no-pager', PROPS, '--', 'ballast-pod-web.service'],
        'Id=ballast-pod-web.service\nLoadState=masked\nActiveState=inactive\nSubState=dead\nUnitFileState=masked\n',
      ),
    ]);
    seedPod('web');
    const read = await t.token(['pod:read']);
    expect((await t.call('GET', '/api/v2/pod', { token: read })).json).toEqual([
      { name: 'ballast-pod-web', service: { id: 'ballast-pod-web.service', state: 'disabled', locked: true } },
    ]);
    expect((await t.call('GET', '/api/v2/pod/suggested', { token: read })).json).toEqual([
      'web-server',
      's3-gateway',
      'metrics-exporter',
    ]);
    expect(
      (await t.call<{ images: string[] }>('GET', '/api/v2/pod/suggested/metrics-exporter', { token: read })).json
        .images,
    ).toEqual(['prom/node-exporter:v1.8.2']);
    expect((await t.call('GET', '/api/v2/pod/suggested/nosuch', { token: read })).status).toBe(404);
    const tested = await t.call('POST', '/api/v2/pod/web/test', {
      token: read,
      body: { fileContents: 'version: "3.8"\nservices:\n  a:\n    image: x\n' },
    });
    expect(tested.json).toEqual({
      name: 'ballast-pod-web',
      data: { version: '3.8', services: { a: { image: 'x' } } },
      exists: true,
    });
    // a test with a read token writes nothing: the seeded file is as it was
    expect(readFileSync(paths().compose('web'), 'utf8')).toBe(SEEDED_COMPOSE);
    for (const [m, p] of [
      ['POST', '/api/v2/pod/x/set'],
      ['POST', '/api/v2/pod/web/update'],
      ['POST', '/api/v2/pod/web/destroy'],
      ['POST', '/api/v2/pod/web/pause'],
      ['POST', '/api/v2/pod/web/kill'],
      ['POST', '/api/v2/pod/config'],
    ]) {
      expect([p, (await t.call(m, p, { token: read, body: {} })).status]).toEqual([p, 403]);
    }
    const none = await t.token(['fs:read']);
    expect((await t.call('GET', '/api/v2/pod', { token: none })).status).toBe(403);
  });
});

describe('special files in a pod directory', () => {
  it('a FIFO in place of the compose file is never read (details, and the own-ports check of test)', async () => {
    await host([], { checkHostPorts: true });
    mkdirSync(paths().filesDir('web'), { recursive: true });
    const { execFileSync } = await import('node:child_process');
    execFileSync('/usr/bin/mkfifo', [paths().compose('web')]);
    const r = await t.call('GET', '/api/v2/pod/web/details');
    expect([r.status, errorOf(r).message]).toEqual([
      409,
      `${paths().compose('web')} is not a regular file (other); it is not read`,
    ]);
    const u = await t.call<{ exists: boolean }>('POST', '/api/v2/pod/web/test', {
      body: { fileContents: { version: '3.8', services: { a: { image: 'x', ports: ['1:80'] } } } },
    });
    expect([u.status, u.json.exists]).toEqual([200, true]);
  });
});
