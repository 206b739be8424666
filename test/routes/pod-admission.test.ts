/**
 * The pod admission policy (runtime/areas/pod/admission/) on the cases issue #27 names: no
 * interpolation, coerced booleans, a pod's own directory only, nested writable binds, the
 * isolation of pods, the check before every start (verify) and the engine's model.
 */
import { chmodSync, chownSync, mkdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { podSettings, type PodSettings, type ValidateResult } from '../../handlers/pod/contract';
import { engineRunner, type EngineExec } from '../../runtime/areas/pod/admission/engine';
import { checkCompose, verifyStored } from '../../runtime/areas/pod/compose-check';
import { verifyCommand } from '../../runtime/areas/pod/verify';
import type { HostConfig } from '../../runtime/config-types';
import type { CommandBackend } from '../../runtime/system/types';
import { privateDir } from '../helpers/tmp';

let podData: string;
let podFiles: string;
const P = 'ballast-pod-a';
const dir = () => join(podData, P);

beforeAll(() => {
  const root = privateDir('pod-admission');
  podData = join(root, 'srv/pods');
  podFiles = join(root, 'var/lib/ballast/pods');
  mkdirSync(join(podData, P, 'data'), { recursive: true });
  mkdirSync(join(podData, 'ballast-pod-b'), { recursive: true });
  mkdirSync(podFiles, { recursive: true });
});

const ctx = (settings: Partial<PodSettings> = {}, engine: ReturnType<typeof engineRunner> | null = null) => ({
  settings: { ...podSettings.parse({}), ...settings },
  podData,
  podFiles,
  listeners: async () => new Set<string>(),
  engine,
});
const svc = (a: Record<string, unknown>, top: Record<string, unknown> = {}) => ({
  version: '3.8',
  services: { a: { image: 'busybox', ...a } },
  ...top,
});
const check = (fileContents: unknown, settings: Partial<PodSettings> = {}) =>
  checkCompose({ project: P, fileContents, requireVersion: true }, ctx(settings));
const paths = (r: ValidateResult) => (r.ok ? [] : r.issues.map((i) => i.path));
const at = (k: string) => `fileContents.services.a.${k}`;

describe('what compose would interpolate or coerce', () => {
  it('refuses $ other than $$, in values and keys', async () => {
    expect(paths(await check(svc({ volumes: ['${X:-/etc}:/host-etc'] })))).toEqual([at('volumes.0')]);
    expect(paths(await check(svc({ volumes: ['$HOME/.ssh:/k'] })))).toEqual([at('volumes.0')]);
    expect(paths(await check(svc({ network_mode: '${N:-host}' })))).toEqual([at('network_mode')]);
    expect(paths(await check(svc({ security_opt: ['apparmor=${A:-unconf}ined'] })))).toEqual([at('security_opt.0')]);
    expect(paths(await check(svc({ environment: { ['X$Y']: '1' } })))).toEqual([at('environment.X$Y')]);
    const r = await check(svc({ command: ['sh', '-c', 'echo $$HOME'] }));
    expect(r.ok).toBe(true);
  });

  it('reads privileged as compose does: "true", "yes", 1 are privileged; anything else is refused', async () => {
    for (const v of [true, 'true', 'yes', 'on', 1, 'Y'])
      expect(paths(await check(svc({ privileged: v })))).toEqual([at('privileged')]);
    expect((await check(svc({ privileged: 'false' }))).ok).toBe(true);
    expect((await check(svc({ privileged: false }))).ok).toBe(true);
    expect(
      (await check(svc({ privileged: true }), { allow: { ...podSettings.parse({}).allow, privileged: true } })).ok,
    ).toBe(true);
  });

  it('bounds the document after aliases are expanded', async () => {
    const big = `version: "3.8"\nx-a: &a "${'x'.repeat(30000)}"\nservices:\n  a:\n    image: busybox\n    labels: [${Array(40).fill('*a').join(',')}]\n`;
    const r = await check(big);
    expect(r.ok ? '' : r.issues[0].message).toMatch(/^expands to \d+ bytes .*at most 1048576/);
  });
});

describe('host paths: the pod directory only', () => {
  it('stores relative paths resolved, and refuses ../ and another pod', async () => {
    const r = await check(svc({ volumes: ['./data:/d', './:/all:ro'] }));
    expect(r.ok && (r.data.services as Record<string, { volumes: string[] }>).a.volumes).toEqual([
      `${dir()}/data:/d`,
      `${dir()}:/all:ro`,
    ]);
    expect(paths(await check(svc({ volumes: ['../:/allpods'] })))).toEqual([at('volumes.0')]);
    expect(paths(await check(svc({ volumes: ['../ballast-pod-b:/b'] })))).toEqual([at('volumes.0')]);
    // a sibling whose name starts like the pod's directory is outside it
    mkdirSync(join(podData, `${P}2`), { recursive: true });
    expect(paths(await check(svc({ volumes: [`${dir()}2:/x`] })))).toEqual([at('volumes.0')]);
  });

  it('refuses a bind inside a writable bind (a container could swap it for a link)', async () => {
    expect(paths(await check(svc({ volumes: ['./:/all', './data:/d'] })))).toEqual([at('volumes.1')]);
    expect((await check(svc({ volumes: ['./:/all:ro', './data:/d'] }))).ok).toBe(true);
    expect(paths(await check(svc({ volumes: ['./data:/d'] }, { secrets: { s: { file: './data/s' } } })))).toEqual([
      'fileContents.secrets.s.file',
    ]);
  });

  it('refuses mounting volumes, external or foreign names, and host-wide sysctls', async () => {
    const vol = (v: Record<string, unknown>) => svc({ volumes: ['v:/v'] }, { volumes: { v } });
    expect(paths(await check(vol({ driver_opts: { type: 'ext4', device: '/dev/sda1' } })))).toEqual([
      'fileContents.volumes.v.driver_opts',
    ]);
    expect(paths(await check(vol({ driver_opts: { type: 'none', o: 'bind', device: '/etc' } })))).toEqual([
      'fileContents.volumes.v.driver_opts.device',
    ]);
    expect((await check(vol({ driver_opts: { type: 'none', o: 'bind', device: './data' } }))).ok).toBe(true);
    expect(paths(await check(vol({ external: true })))).toEqual(['fileContents.volumes.v.external']);
    expect(paths(await check(vol({ name: 'ballast-pod-b_data' })))).toEqual(['fileContents.volumes.v.name']);
    expect(paths(await check(svc({ sysctls: { 'kernel.core_pattern': '|/tmp/x' } })))).toEqual([
      at('sysctls.kernel.core_pattern'),
    ]);
    expect((await check(svc({ sysctls: ['net.ipv4.ip_unprivileged_port_start=80'] }))).ok).toBe(true);
  });
});

describe('pods stay apart', () => {
  it('refuses containers, networks and names of other pods; allows its own services', async () => {
    const two = (a: Record<string, unknown>, top: Record<string, unknown> = {}) => ({
      version: '3.8',
      services: { a: { image: 'busybox', ...a }, b: { image: 'busybox' } },
      ...top,
    });
    expect(paths(await check(two({ volumes_from: ['container:ballast-pod-b-web'] })))).toEqual([at('volumes_from.0')]);
    expect(paths(await check(two({ network_mode: 'container:ballast-pod-b-web' })))).toEqual([at('network_mode')]);
    expect(paths(await check(two({ pid: 'container:x' })))).toEqual([at('pid')]);
    expect((await check(two({ network_mode: 'service:b', volumes_from: ['b:ro'], pid: 'service:b' }))).ok).toBe(true);
    expect(paths(await check(two({ networks: ['h'] }, { networks: { h: { external: true, name: 'host' } } })))).toEqual(
      ['fileContents.networks.h.external', 'fileContents.networks.h.name'],
    );
    expect(paths(await check(two({ container_name: 'ballast-pod-b-web' })))).toEqual([at('container_name')]);
    expect(paths(await check(two({ external_links: ['x'] })))).toEqual([at('external_links')]);
  });

  it('refuses keys it does not know, and names the setting that would allow a refused one', async () => {
    expect(paths(await check(svc({ use_api_socket: true })))).toEqual([at('use_api_socket')]);
    const r = await check(svc({ devices: ['/dev/dri:/dev/dri'] }));
    expect(r.ok ? '' : r.message).toContain('settings.pod.allow.devices');
    const h = await check(svc({ network_mode: 'host' }));
    expect(h.ok ? '' : h.message).toContain('settings.pod.allow.hostNetwork');
  });
});

describe('checked again at every start (pod verify)', () => {
  it('refuses a stored bind source swapped for a symlink since it was admitted', async () => {
    const r = await check(svc({ volumes: ['./data/sub:/s'] }));
    expect(r.ok).toBe(true);
    const stored = JSON.stringify(r.ok ? r.data : {});
    expect(await verifyStored(P, stored, ctx())).toEqual([]);
    mkdirSync(join(dir(), 'data'), { recursive: true });
    symlinkSync('/', join(dir(), 'data', 'sub'));
    try {
      const issues = await verifyStored(P, stored, ctx());
      expect(issues.map((i) => i.path)).toEqual([at('volumes.0')]);
      expect(issues[0].message).toMatch(/outside the pod's data directory/);
    } finally {
      rmSync(join(dir(), 'data', 'sub'));
    }
    // a relative path in a stored file is refused: stored files carry resolved paths
    expect((await verifyStored(P, JSON.stringify(svc({ volumes: ['./data:/d'] })), ctx())).map((i) => i.path)).toEqual([
      at('volumes.0'),
    ]);
  });
});

describe("the engine's model", () => {
  it('runs the compose tool on stdin and refuses what its resolved model asks for', async () => {
    const calls: { argv: string[]; stdin: string }[] = [];
    const answer =
      (stdout: string, code = 0): EngineExec =>
      async (argv, o) => {
        calls.push({ argv, stdin: o.stdin });
        return { code, stdout, stderr: code ? 'Traceback (most recent call last):\n  ...\nERROR: the cause\n' : '' };
      };
    const s = podSettings.parse({ composeCommand: ['/usr/bin/docker-compose'] });
    const file = svc({ volumes: ['./data:/d'] });
    const harmful = `services:\n  a:\n    image: busybox\n    privileged: true\n`;
    const r = await checkCompose({ project: P, fileContents: file }, ctx(s, engineRunner(s, answer(harmful))));
    expect(calls[0].argv).toEqual([
      '/usr/bin/docker-compose',
      '-p',
      P,
      '--project-directory',
      podFiles,
      '-f',
      '-',
      'config',
    ]);
    expect(JSON.parse(calls[0].stdin)).toEqual({
      ...file,
      services: { a: { image: 'busybox', volumes: [`${dir()}/data:/d`] } },
    });
    expect(r.ok ? [] : r.issues).toEqual([
      {
        path: at('privileged'),
        message:
          'as the compose tool resolves the file: privileged containers are not allowed (settings.pod.allow.privileged, root-equivalent)',
      },
    ]);
    const refused = await checkCompose({ project: P, fileContents: file }, ctx(s, engineRunner(s, answer('', 1))));
    expect(refused.ok ? '' : refused.message).toBe('fileContents: the compose tool refused the file: ERROR: the cause');
    const v2 = podSettings.parse({});
    await checkCompose(
      { project: P, fileContents: file },
      ctx(v2, engineRunner(v2, answer('{"services":{"a":{"image":"busybox"}}}'))),
    );
    expect(calls[2].argv.slice(-3)).toEqual(['config', '--format', 'json']);
  });
});

describe('ballast pod verify (the units’ ExecStartPre)', () => {
  it('runs only a regular stored file that only root could have written', async () => {
    const errs: string[] = [];
    const settings = { ...podSettings.parse({}), engineCheck: false };
    const run = (args = [P]) =>
      verifyCommand.run({
        args,
        config: { paths: { podData, podFiles } } as unknown as HostConfig,
        settings,
        backend: undefined as unknown as CommandBackend,
        err: (l) => errs.push(l),
      });
    const file = join(podFiles, P, 'compose.json');
    mkdirSync(join(podFiles, P), { recursive: true });
    const r = await check(svc({ volumes: ['./data:/d'] }));
    writeFileSync(file, JSON.stringify(r.ok ? r.data : {}), { mode: 0o640 });
    expect([await run(), errs]).toEqual([0, []]);
    chmodSync(file, 0o660);
    expect(await run()).toBe(1);
    expect(errs.pop()).toBe(`pod verify: ${P} refused: ${file} is writable by others than its owner`);
    chmodSync(file, 0o640);
    chownSync(file, 1000, 0);
    expect(await run()).toBe(1);
    expect(errs.pop()).toBe(`pod verify: ${P} refused: ${file} is not owned by root (uid 1000)`);
    rmSync(file);
    symlinkSync('/etc/hostname', file);
    expect(await run()).toBe(1);
    expect(errs.pop()).toBe(`pod verify: ${P} refused: not a regular file: ${file}`);
    rmSync(file);
    expect(await run()).toBe(1);
    expect(errs.pop()).toBe(`pod verify: ${P} refused: ${file} does not exist`);
    expect(await run(['ballast-pod-a', 'extra'])).toBe(2);
    expect(await run(['other-pod-a'])).toBe(2);
  });
});
