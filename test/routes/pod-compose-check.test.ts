/**
 * Compose validation (runtime/areas/pod/compose-check.ts) on real compose files
 * (fixtures/compose-files): the Compose Specification schema through ajv, the appliance limits,
 * path confinement resolved on the real filesystem, and host port clashes.
 */
import { mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { podSettings, type PodSettings, type ValidateResult } from '../../handlers/pod/contract';
import { checkCompose, hostListeners, hostPorts } from '../../runtime/areas/pod/compose-check';
import { repo } from '../helpers/host';
import { privateDir } from '../helpers/tmp';

const file = (n: string) => readFileSync(join(repo, 'fixtures/compose-files', n), 'utf8');
let podData: string;
let settings: PodSettings;
const listening = new Set(['22/tcp', '18443/tcp', '53/udp']);

beforeAll(() => {
  podData = join(privateDir('pod-check'), 'srv/pods');
  mkdirSync(join(podData, 'ballast-pod-a'), { recursive: true });
  // a link inside the pod directory that leads out of it
  symlinkSync('/etc', join(podData, 'ballast-pod-a', 'etclink'));
  settings = podSettings.parse({});
});

const check = (
  fileContents: unknown,
  o: { settings?: Partial<PodSettings>; merge?: Record<string, Record<string, unknown>>; ports?: Set<string> } = {},
): Promise<ValidateResult> =>
  checkCompose(
    { project: 'ballast-pod-a', fileContents, merge: o.merge, requireVersion: true, probeHostPorts: true },
    {
      settings: { ...settings, ...o.settings },
      podData,
      podFiles: join(podData, '../../var/lib/ballast/pods'),
      listeners: async () => o.ports ?? new Set(),
      engine: null,
    },
  );

const issues = (r: ValidateResult) => (r.ok ? [] : r.issues);

describe('compose files against the Compose Specification and the limits', () => {
  it('accepts a typical web + database file (YAML text) and answers it as data', async () => {
    const r = await check(file('valid-web-db.yaml'));
    expect(r.ok).toBe(true);
    if (r.ok)
      expect((r.data.services as Record<string, { ports: unknown[] }>).web.ports[1]).toEqual({
        target: 443,
        published: '18443',
        protocol: 'tcp',
      });
  });

  it('accepts YAML anchors, merge keys and x- extensions', async () => {
    const r = await check(file('valid-anchors.yaml'));
    expect(r).toMatchObject({
      ok: true,
      data: { services: { a: { restart: 'unless-stopped', logging: { driver: 'json-file' } } } },
    });
  });

  it('names the JSON path of schema errors', async () => {
    expect(issues(await check(file('invalid-schema.yaml')))).toEqual([
      { path: 'fileContents.services.web.portz', message: 'is not allowed here by the Compose Specification' },
    ]);
    expect(issues(await check(file('invalid-ports-type.yaml')))).toEqual([
      { path: 'fileContents.services.web.ports', message: 'must be array' },
    ]);
    expect(issues(await check({ version: '3.8', services: { web: { image: 5 } } }))).toEqual([
      { path: 'fileContents.services.web.image', message: 'must be string' },
    ]);
  });

  it('refuses privileged, host namespaces, capabilities, devices, unconfined and binds outside the pod data', async () => {
    const r = await check(file('refused-options.yaml'));
    const at = (k: string) => `fileContents.services.root.${k}`;
    expect(issues(r).map((i) => i.path)).toEqual([
      at('privileged'),
      at('network_mode'),
      at('pid'),
      at('cap_add.0'),
      at('cap_add.1'),
      at('devices'),
      at('security_opt.0'),
      at('volumes.0'),
      at('volumes.1'),
      at('volumes.2'),
      at('volumes.3'),
      at('volumes.4'),
    ]);
    expect(issues(r)[7].message).toBe(
      `bind source / is outside the pod's data directory ${podData}/ballast-pod-a and settings.pod.bindRoots`,
    );
    // where a path outside leads is not said (test answers a read token)
    expect(issues(r)[10].message).toBe(
      `bind source ../../escape is outside the pod's data directory ${podData}/ballast-pod-a and settings.pod.bindRoots`,
    );
  });

  it('allows what the settings allow', async () => {
    const r = await check(
      {
        version: '3.8',
        services: {
          s: {
            image: 'a',
            privileged: true,
            network_mode: 'host',
            pid: 'host',
            cap_add: ['NET_ADMIN', 'CAP_SYS_TIME'],
          },
        },
      },
      {
        settings: {
          allow: {
            privileged: true,
            hostNetwork: true,
            hostNamespaces: true,
            capabilities: ['NET_ADMIN', 'SYS_TIME'],
            devices: false,
            sysctls: [],
          },
        },
      },
    );
    expect(r.ok).toBe(true);
  });

  it('refuses includes, build contexts, env files, secret files and bind volumes outside the roots', async () => {
    expect(issues(await check(file('refused-paths.yaml'))).map((i) => i.path)).toEqual([
      'fileContents.include',
      'fileContents.volumes.data.driver_opts.device',
      'fileContents.secrets.key.file',
      'fileContents.services.app.build',
      'fileContents.services.app.env_file.0',
    ]);
  });

  it('follows symlinks: a link in the pod directory to /etc is outside; bindRoots widen the allow-list', async () => {
    const viaLink = { version: '3.8', services: { s: { image: 'a', volumes: ['./etclink/ssh:/x'] } } };
    expect(issues(await check(viaLink))).toEqual([
      {
        path: 'fileContents.services.s.volumes.0',
        message: `bind source ./etclink/ssh is outside the pod's data directory ${podData}/ballast-pod-a and settings.pod.bindRoots`,
      },
    ]);
    expect((await check(viaLink, { settings: { bindRoots: ['/etc/ssh'] } })).ok).toBe(true);
    expect(
      (await check({ version: '3.8', services: { s: { image: 'a', volumes: ['./data:/data', 'named:/n', '/anon'] } } }))
        .ok,
    ).toBe(true);
  });

  it('refuses duplicate keys and bad YAML with the line', async () => {
    expect(issues(await check(file('duplicate-key.yaml')))[0]).toMatchObject({
      path: 'fileContents',
      message: 'not valid YAML (line 5, column 3): Map keys must be unique',
    });
    expect(issues(await check('services: [\n'))[0]).toEqual({
      path: 'fileContents',
      message: expect.stringMatching(/^not valid YAML \(line \d+, column \d+\): /),
    });
    expect(issues(await check('- a\n- b\n'))).toEqual([
      { path: 'fileContents', message: 'must be a mapping (version, services, …)' },
    ]);
  });

  it('requires version and services', async () => {
    expect(issues(await check({ services: { a: { image: 'x' } } }))).toEqual([
      { path: 'fileContents.version', message: 'is required' },
    ]);
    expect(issues(await check({ version: '3.8' }))).toEqual([
      { path: 'fileContents.services', message: 'is required' },
    ]);
  });

  it('refuses __proto__ keys', async () => {
    const r = await check(
      JSON.parse('{"version":"3.8","services":{"a":{"image":"x","__proto__":{"privileged":true}}}}'),
    );
    expect(issues(r)).toEqual([{ path: 'fileContents.services.a.__proto__', message: 'is not an allowed key' }]);
  });

  it('merges recipe services, and a taken name is a conflict', async () => {
    const merged = await check(
      { version: '3.8', services: { a: { image: 'x' } } },
      { merge: { web: { image: 'nginx:1.27-alpine' } } },
    );
    expect(merged).toMatchObject({
      ok: true,
      data: { services: { a: { image: 'x' }, web: { image: 'nginx:1.27-alpine' } } },
    });
    const clash = await check(
      { version: '3.8', services: { web: { image: 'x' } } },
      { merge: { web: { image: 'nginx' } } },
    );
    expect(clash).toMatchObject({ ok: false, status: 409 });
  });

  it('never tells test (a read token) which host ports listen: only set and update probe them', async () => {
    const sshd = { version: '3.8', services: { a: { image: 'x', ports: ['22:22'] } } };
    const ctx = {
      settings,
      podData,
      podFiles: join(podData, '../../var/lib/ballast/pods'),
      listeners: async () => listening,
      engine: null,
    };
    expect((await checkCompose({ project: 'ballast-pod-a', fileContents: sshd }, ctx)).ok).toBe(true);
    expect(
      issues(await checkCompose({ project: 'ballast-pod-a', fileContents: sshd, probeHostPorts: true }, ctx)),
    ).toEqual([
      { path: 'fileContents.services.a.ports.0', message: 'host port 22/tcp is already in use on this host' },
    ]);
  });

  it('refuses host ports the host listens on and ports published twice', async () => {
    expect(issues(await check(file('valid-web-db.yaml'), { ports: listening }))).toEqual([
      { path: 'fileContents.services.web.ports.1', message: 'host port 18443/tcp is already in use on this host' },
    ]);
    const twice = {
      version: '3.8',
      services: { a: { image: 'x', ports: ['8000-8002:80-82'] }, b: { image: 'x', ports: ['127.0.0.1:8001:80'] } },
    };
    expect(issues(await check(twice))).toEqual([
      {
        path: 'fileContents.services.b.ports.0',
        message: 'host port 8001/tcp is also published by fileContents.services.a.ports.0',
      },
    ]);
    expect(
      (
        await check(
          { version: '3.8', services: { a: { image: 'x', ports: ['53:53/tcp', '80'] } } },
          { ports: listening },
        )
      ).ok,
    ).toBe(true);
    expect(
      (
        await check(
          { version: '3.8', services: { a: { image: 'x', ports: ['22:22'] } } },
          { ports: listening, settings: { checkHostPorts: false } },
        )
      ).ok,
    ).toBe(true);
  });

  it('reads host ports of every ports syntax', () => {
    expect(hostPorts('8080:80')).toEqual({ ports: [8080], proto: 'tcp' });
    expect(hostPorts('127.0.0.1:8080:80/udp')).toEqual({ ports: [8080], proto: 'udp' });
    expect(hostPorts('[::1]:9000:9000')).toEqual({ ports: [9000], proto: 'tcp' });
    expect(hostPorts('8000-8001:80-81')).toEqual({ ports: [8000, 8001], proto: 'tcp' });
    expect(hostPorts('80')).toBeNull();
    expect(hostPorts(80)).toBeNull();
    expect(hostPorts({ target: 80, published: 8080 })).toEqual({ ports: [8080], proto: 'tcp' });
    expect(hostPorts({ target: 80 })).toBeNull();
  });

  it('reads TCP LISTEN and bound UDP sockets of /proc/net (v4 and v6), by local port, and nothing else', async () => {
    const net = privateDir('proc-net');
    const head = '  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n';
    const row = (local: string, peer: string, st: string) =>
      `   0: ${local} ${peer} ${st} 00000000:00000000 00:00000000 00000000     0        0 1234 1 0000000000000000 100 0 0 10 0\n`;
    writeFileSync(
      join(net, 'tcp'),
      head +
        row('00000000:0016', '00000000:0000', '0A') + // 22, listening
        row('0100007F:1F90', '0100007F:01BB', '01') + // 8080 -> 443, an established connection
        row('00000000:0000', '00000000:0000', '0A'), // port 0: not a port anyone can publish
    );
    writeFileSync(
      join(net, 'tcp6'),
      head + row('00000000000000000000000000000000:20FB', '00000000000000000000000000000000:0000', '0A'),
    );
    writeFileSync(
      join(net, 'udp'),
      head + row('00000000:0035', '00000000:0000', '07') + row('0100007F:1234', '0100007F:0035', '01'),
    );
    // no udp6 file (IPv6 disabled): the others still count
    expect([...(await hostListeners(net))].sort()).toEqual(['22/tcp', '53/udp', '8443/tcp']);
    writeFileSync(
      join(net, 'udp6'),
      head + row('00000000000000000000000000000000:14E9', '00000000000000000000000000000000:0000', '07'),
    );
    expect([...(await hostListeners(net))].sort()).toEqual(['22/tcp', '53/udp', '5353/udp', '8443/tcp']);
  });

  it('reads the listeners of this machine from /proc/net, a socket opened here among them', async () => {
    const server = createServer();
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const port = (server.address() as AddressInfo).port;
    try {
      const l = await hostListeners();
      expect(l.has(`${port}/tcp`)).toBe(true);
      expect([...l].every((k) => /^\d+\/(tcp|udp)$/.test(k))).toBe(true);
    } finally {
      await new Promise((r) => server.close(r));
    }
    expect((await hostListeners()).has(`${port}/tcp`)).toBe(false);
  });
});
