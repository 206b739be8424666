/**
 * The compose check's edges, each with the exact answer (runtime/areas/pod/compose-check.ts): how
 * host ports are read from every form, how a schema error's path is written, the keys and depths
 * refused before anything else, the messages of interpolation and YAML errors, how many issues a
 * refusal carries, when the host's listeners are asked at all and which ports are the pod's own,
 * and the engine's verdict. Fast and self-contained: what mutation testing runs per mutant.
 */
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { COMPOSE_FILE_NAME, podSettings, type PodSettings, type ValidatePayload } from '../../handlers/pod/contract';
import { checkCompose, hostPorts, verifyStored, type CheckContext } from '../../runtime/areas/pod/compose-check';
import type { EngineRunner } from '../../runtime/areas/pod/admission/engine';
import { privateDir } from '../helpers/tmp';

const root = privateDir('pod-compose-edges');
const podData = join(root, 'srv/pods');
const podFiles = join(root, 'var/lib/ballast/pods');
const P = 'ballast-pod-e';
mkdirSync(join(podData, P), { recursive: true });
mkdirSync(join(podFiles, P), { recursive: true });
const settings = podSettings.parse({});

function ctx(o: { settings?: Partial<PodSettings>; ports?: string[]; engine?: EngineRunner } = {}) {
  const asked = { n: 0 };
  const c: CheckContext = {
    settings: { ...settings, ...o.settings },
    podData,
    podFiles,
    listeners: async () => {
      asked.n++;
      return new Set(o.ports ?? []);
    },
    engine: o.engine ?? null,
  };
  return { c, asked };
}
const payload = (fileContents: unknown, o: Partial<ValidatePayload> = {}): ValidatePayload => ({
  project: P,
  fileContents,
  requireVersion: true,
  probeHostPorts: true,
  ...o,
});
const svc = (a: Record<string, unknown>, top: Record<string, unknown> = {}) => ({
  version: '3.8',
  services: { a: { image: 'busybox', ...a } },
  ...top,
});
const run = async (fileContents: unknown, o: Partial<ValidatePayload> = {}, c = ctx().c) =>
  checkCompose(payload(fileContents, o), c);

describe('hostPorts', () => {
  it('reads no host port where none is published, whatever the form', () => {
    for (const e of [80, '80', '0:80', ':80', '1.2.3.4::80', { target: 80, published: '' }, { published: 0 }])
      expect([e, hostPorts(e)]).toEqual([e, null]);
    expect(hostPorts({ published: '0' })).toBeNull();
    expect(hostPorts(null)).toBeNull();
    expect(hostPorts(['8080:80'])).toBeNull();
  });

  it('takes the protocol and the host part of every form, and nothing from a host part that is no port', () => {
    expect(hostPorts({ target: 53, published: 5353, protocol: 'udp' })).toEqual({ ports: [5353], proto: 'udp' });
    expect(hostPorts({ target: 80, published: '8080-8081' })).toEqual({ ports: [8080, 8081], proto: 'tcp' });
    expect(hostPorts('10.0.0.1:7000-7001:80/sctp')).toEqual({ ports: [7000, 7001], proto: 'sctp' });
    expect(hostPorts('[fe80::1]:9000:9000/udp')).toEqual({ ports: [9000], proto: 'udp' });
    expect(hostPorts('web:80')).toEqual({ ports: [], proto: 'tcp' });
    expect(hostPorts('8001-8000:80')).toEqual({ ports: [], proto: 'tcp' });
    // a host part is a port or a range, whole: nothing is read out of `x8080` or `8080x`
    expect(hostPorts('x8080:80')).toEqual({ ports: [], proto: 'tcp' });
    expect(hostPorts('8080x:80')).toEqual({ ports: [], proto: 'tcp' });
    // an IPv6 address and a container port, no host port
    expect(hostPorts('[::1]:80')).toBeNull();
    // a range is cut at 65 536 ports, whatever it asks for
    expect(hostPorts('1-100000:80')?.ports.length).toBe(65536);
  });
});

describe('before the schema', () => {
  it('refuses constructor and prototype keys anywhere, and nesting past 32', async () => {
    expect(await run(svc({ labels: { constructor: 'x' } }))).toEqual({
      ok: false,
      status: 400,
      message: expect.stringContaining('fileContents.services.a.labels.constructor'),
      issues: [{ path: 'fileContents.services.a.labels.constructor', message: 'is not an allowed key' }],
    });
    const listed = await run(svc({ command: ['x', { prototype: 1 }] }));
    expect(listed.ok ? [] : listed.issues).toEqual([
      { path: 'fileContents.services.a.command.1.prototype', message: 'is not an allowed key' },
    ]);
    let deep: Record<string, unknown> = { end: 1 };
    // values up to depth 32 (the document is 0): 30 wrappings under x-deep put `end` at 32
    for (let i = 0; i < 30; i++) deep = { d: deep };
    const ok = await run(svc({}, { 'x-deep': deep }));
    expect(ok.ok ? [] : ok.issues.map((i) => i.message)).toEqual([]);
    const tooDeep = await run(svc({}, { 'x-deep': { d: deep } }));
    expect(tooDeep.ok ? [] : tooDeep.issues.map((i) => i.message)).toEqual(['is nested too deeply']);
    // lists count as deep as mappings
    let list: unknown = 1;
    for (let i = 0; i < 31; i++) list = [list];
    const listed31 = await run(svc({}, { 'x-deep': list }));
    expect(listed31.ok ? [] : listed31.issues).toEqual([]);
    const listed32 = await run(svc({}, { 'x-deep': [list] }));
    expect(listed32.ok ? [] : listed32.issues).toEqual([
      { path: `fileContents.x-deep${'.0'.repeat(32)}`, message: 'is nested too deeply' },
    ]);
  });

  it('quotes an interpolated value (cut at 60 characters) and names a key that holds $', async () => {
    const long = `${'a'.repeat(58)}$HOME/x`;
    const r = await run(svc({ labels: { [`k$x`]: 'v' }, working_dir: long }));
    expect(r.ok ? [] : r.issues).toEqual([
      { path: 'fileContents.services.a.labels.k$x', message: 'a key may not hold $' },
      {
        path: 'fileContents.services.a.working_dir',
        message: `${JSON.stringify(`${long.slice(0, 60)}…`)}: compose would substitute a variable here; the appliance does no interpolation (write $$ for a literal $)`,
      },
    ]);
    const sixty = `/${'a'.repeat(54)}$HOME`; // 60 characters: quoted whole
    const whole = await run(svc({ working_dir: sixty }));
    expect(whole.ok ? '' : whole.issues[0].message).toBe(
      `${JSON.stringify(sixty)}: compose would substitute a variable here; the appliance does no interpolation (write $$ for a literal $)`,
    );
    const short = await run(svc({ working_dir: '/$X' }));
    expect(short.ok ? '' : short.issues[0].message).toBe(
      '"/$X": compose would substitute a variable here; the appliance does no interpolation (write $$ for a literal $)',
    );
  });

  it('says where YAML is bad, and what a document must be', async () => {
    const bad = await run('version: "3.8"\nservices:\n  a: [\n');
    expect(bad.ok ? '' : bad.issues[0].message).toMatch(/^not valid YAML \(line \d+, column \d+\): \S/);
    expect(bad.ok ? '' : bad.issues[0].message).not.toMatch(/at line \d+, column \d+:?$/);
    for (const doc of ['- a\n- b\n', '"text"', 42, null])
      expect([doc, await run(doc)]).toEqual([
        doc,
        {
          ok: false,
          status: 400,
          message: expect.any(String),
          issues: [{ path: 'fileContents', message: 'must be a mapping (version, services, …)' }],
        },
      ]);
    const noServices = await run({ version: '3.8', services: ['a'] });
    expect(noServices.ok ? [] : noServices.issues).toEqual([
      { path: 'fileContents.services', message: 'must be a mapping of service names to services' },
    ]);
    const neither = await run({ services: {} });
    expect(neither.ok ? [] : neither.issues).toEqual([{ path: 'fileContents.version', message: 'is required' }]);
    expect((await run({ services: {} }, { requireVersion: false })).ok).toBe(true);
  });
});

describe('the size of a document', () => {
  it('is its JSON once aliases are expanded: settings.pod.maxComposeBytes bytes pass, one more is refused', async () => {
    const doc = svc({ labels: { l: 'x'.repeat(5000) } });
    const bytes = JSON.stringify(doc).length;
    expect((await run(doc, {}, ctx({ settings: { maxComposeBytes: bytes } }).c)).ok).toBe(true);
    expect(await run(doc, {}, ctx({ settings: { maxComposeBytes: bytes - 1 } }).c)).toEqual({
      ok: false,
      status: 400,
      message: expect.any(String),
      issues: [
        {
          path: 'fileContents',
          message: `expands to ${bytes} bytes (YAML aliases included); at most ${bytes - 1} (settings.pod.maxComposeBytes)`,
        },
      ],
    });
  });
});

describe('schema errors', () => {
  it('stop at the first: two unknown keys are one issue', async () => {
    const r = await run(svc({}, { bogus: 1, other: 2 }));
    expect(r.ok ? [] : r.issues).toEqual([
      { path: 'fileContents.bogus', message: 'is not allowed here by the Compose Specification' },
    ]);
  });

  it('name the path with / and ~ in keys written back, and say what is wrong', async () => {
    const r = await run(svc({ sysctls: { 'a/b~c': {} } }));
    // the first of the schema's alternatives that failed names the key as written
    expect((r.ok ? [] : r.issues)[0]).toEqual({
      path: 'fileContents.services.a.sysctls.a/b~c',
      message: expect.stringMatching(/^must be /),
    });
    const extra = await run(svc({}, { bogus: 1 }));
    expect(extra.ok ? [] : extra.issues).toEqual([
      { path: 'fileContents.bogus', message: 'is not allowed here by the Compose Specification' },
    ]);
    const required = await run(svc({ volumes: [{ source: 'v', target: '/y' }] }));
    // the short form (a string) and the long form (type required) both failed: both are named
    expect((required.ok ? [] : required.issues).slice(0, 2)).toEqual([
      { path: 'fileContents.services.a.volumes.0', message: 'must be string' },
      { path: 'fileContents.services.a.volumes.0.type', message: 'is required' },
    ]);
  });
});

describe('a refusal', () => {
  it('carries at most 50 issues, and its message names them all', async () => {
    const services: Record<string, unknown> = {};
    for (let i = 0; i < 60; i++) services[`s${i}`] = { image: 'busybox', privileged: true };
    const r = await run({ version: '3.8', services });
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.issues.length).toBe(50);
    expect(r.issues[49].path).toBe('fileContents.services.s49.privileged');
    expect(r.message).toContain('fileContents.services.s59.privileged: privileged containers are not allowed');
  });

  it('a recipe service whose name is taken: 409 naming it', async () => {
    expect(await run(svc({}), { merge: { a: { image: 'x' } } })).toEqual({
      ok: false,
      status: 409,
      message: 'service a of a recipe is already defined in fileContents',
      issues: [{ path: 'fileContents.services.a', message: 'is also a recipe service' }],
    });
  });
});

describe("the host's listeners", () => {
  it('are asked only when ports are published, probing is asked for and the settings check them', async () => {
    const cases: [unknown, Partial<ValidatePayload>, Partial<PodSettings>, number][] = [
      [svc({ ports: ['8080:80'] }), {}, {}, 1],
      [svc({ ports: ['80'] }), {}, {}, 0],
      [svc({}), {}, {}, 0],
      [svc({ ports: ['8080:80'] }), { probeHostPorts: false }, {}, 0],
      [svc({ ports: ['8080:80'] }), {}, { checkHostPorts: false }, 0],
    ];
    for (const [doc, o, s, n] of cases) {
      const { c, asked } = ctx({ settings: s });
      expect((await run(doc, o, c)).ok).toBe(true);
      expect([doc, o, s, asked.n]).toEqual([doc, o, s, n]);
    }
  });

  it("a pod's own published ports are not a clash when it is updated, anyone else's are", async () => {
    writeFileSync(
      join(podFiles, P, COMPOSE_FILE_NAME),
      JSON.stringify(svc({ ports: ['8080:80', { target: 53, published: 5353, protocol: 'udp' }] })),
    );
    const { c } = ctx({ ports: ['8080/tcp', '5353/udp', '9090/tcp'] });
    const doc = svc({ ports: ['8080:80', '5353:53/udp', '9090:90'] });
    expect(await run(doc, { ignoreOwnPorts: true }, c)).toMatchObject({
      ok: false,
      issues: [
        { path: 'fileContents.services.a.ports.2', message: 'host port 9090/tcp is already in use on this host' },
      ],
    });
    const notOwn = await run(doc, {}, c);
    expect(notOwn.ok ? [] : notOwn.issues.map((i) => i.path)).toEqual([
      'fileContents.services.a.ports.0',
      'fileContents.services.a.ports.1',
      'fileContents.services.a.ports.2',
    ]);
    // a stored file that is not JSON is no pod's: nothing is exempt
    writeFileSync(join(podFiles, P, COMPOSE_FILE_NAME), '{');
    const broken = await run(doc, { ignoreOwnPorts: true }, c);
    expect(broken.ok ? 0 : broken.issues.length).toBe(3);
  });

  it('the same port twice within one entry list is one clash per repeat', async () => {
    const r = await run(svc({ ports: ['7000:80', '7000:81', '7000:82/udp'] }));
    expect(r.ok ? [] : r.issues).toEqual([
      {
        path: 'fileContents.services.a.ports.1',
        message: 'host port 7000/tcp is also published by fileContents.services.a.ports.0',
      },
    ]);
  });
});

describe("the engine's model", () => {
  it("is admitted again, its issues said to be the engine's; an engine that refuses the file is a 400", async () => {
    const seen: { project: string; projectDir: string; json: string }[] = [];
    const engine: EngineRunner = async (cand) => {
      seen.push(cand);
      return { ok: true, model: { services: { a: { image: 'busybox', privileged: true } } } };
    };
    const r = await run(svc({}), {}, ctx({ engine }).c);
    expect(r.ok ? [] : r.issues).toEqual([
      {
        path: 'fileContents.services.a.privileged',
        message:
          'as the compose tool resolves the file: privileged containers are not allowed (settings.pod.allow.privileged, root-equivalent)',
      },
    ]);
    expect(seen).toEqual([{ project: P, projectDir: podFiles, json: JSON.stringify(svc({})) }]);
    const refusing: EngineRunner = async () => ({ ok: false, message: 'docker-compose config: bad file' });
    const no = await run(svc({}), {}, ctx({ engine: refusing }).c);
    expect(no.ok ? [] : no.issues).toEqual([{ path: 'fileContents', message: 'docker-compose config: bad file' }]);
  });
});

describe("the engine's model and links", () => {
  // the engine resolves a path as it finds it; only a stored file's paths must resolve to themselves
  const linked = join(podData, P, 'linked');
  mkdirSync(join(podData, P, 'real'), { recursive: true });
  symlinkSync(join(podData, P, 'real'), linked);
  const engine: EngineRunner = async () => ({
    ok: true,
    model: { services: { a: { image: 'busybox', volumes: [{ type: 'bind', source: linked, target: '/d' }] } } },
  });

  it('is admitted as the engine resolves it when a file is checked', async () => {
    expect(await run(svc({}), {}, ctx({ engine }).c)).toMatchObject({ ok: true });
  });

  it('must resolve to itself before a start, as the stored file must', async () => {
    expect(await verifyStored(P, JSON.stringify(svc({})), ctx({ engine }).c)).toEqual([
      {
        path: 'fileContents.services.a.volumes.0.source',
        message: `as the compose tool resolves the file: bind source ${linked} resolves to ${join(podData, P, 'real')} now: a link was put in its path since the pod was admitted`,
      },
    ]);
  });
});

describe('verifyStored (before every start)', () => {
  it('answers the first stage that refuses: interpolation, schema, policy, then the engine', async () => {
    const { c } = ctx();
    expect(await verifyStored(P, JSON.stringify(svc({ working_dir: '/$X' })), c)).toEqual([
      {
        path: 'fileContents.services.a.working_dir',
        message:
          '"/$X": compose would substitute a variable here; the appliance does no interpolation (write $$ for a literal $)',
      },
    ]);
    expect(await verifyStored(P, JSON.stringify(svc({}, { bogus: 1 })), c)).toEqual([
      { path: 'fileContents.bogus', message: 'is not allowed here by the Compose Specification' },
    ]);
    expect(await verifyStored(P, JSON.stringify(svc({ privileged: true })), c)).toEqual([
      {
        path: 'fileContents.services.a.privileged',
        message: 'privileged containers are not allowed (settings.pod.allow.privileged, root-equivalent)',
      },
    ]);
    expect(await verifyStored(P, '[', c)).toEqual([
      { path: 'fileContents', message: expect.stringMatching(/^not valid YAML/) },
    ]);
    const engine: EngineRunner = async () => ({ ok: false, message: 'engine says no' });
    expect(await verifyStored(P, JSON.stringify(svc({})), ctx({ engine }).c)).toEqual([
      { path: 'fileContents', message: 'engine says no' },
    ]);
    expect(await verifyStored(P, JSON.stringify(svc({})), c)).toEqual([]);
  });
});
