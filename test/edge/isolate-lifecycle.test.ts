/**
 * The isolate processes' life: what the Deno process may do (its permissions, checked by a probe
 * run with the very flags the host uses), that it is killed on stop, that its death stops the
 * host (serve() exits non-zero; here onIsolateDeath), the sockets' modes and their removal, the
 * clear error without Deno, and the command line (`--isolate deno`, `--isolate` = workerd).
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, lstatSync, mkdirSync, readFileSync, readdirSync, writeFileSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { denoArgs, denoBinary } from '../../runtime/isolate/deno';
import { serve } from '../../runtime/serve';
import { createToken } from '../../runtime/tokens';
import { distDir, makeTestConfig, makeTestHost, repo, type TestHost } from '../helpers/host';
import { startBindingSocket, type BindingSocket } from '../../runtime/bindings/socket';
import { launchIsolate } from '../../runtime/isolate/index';
import { privateDir } from '../helpers/tmp';

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

/** A host serving its routes from `isolate`; `death` resolves with why the isolate died. */
async function serveWatched(isolate: 'deno' | 'workerd') {
  const { config } = makeTestConfig({ isolate });
  let died!: (why: string) => void;
  const death = new Promise<string>((r) => (died = r));
  const s = await serve({
    config,
    distDir,
    signals: false,
    accessLog: false,
    log: () => undefined,
    onIsolateDeath: died,
  });
  return { config, s, death };
}

describe('the Deno process', () => {
  it('runs with exactly these flags: no run, env, ffi, sys; read only the bundle and its socket', () => {
    expect(denoArgs('/opt/b/dist', '/s/isolate-deno.sock')).toEqual([
      'run',
      '--no-prompt',
      '--no-config',
      '--no-lock',
      '--no-remote',
      '--no-npm',
      '--allow-read=/opt/b/dist,/s/isolate-deno.sock',
      '--allow-write=/s/isolate-deno.sock',
      '--allow-net=unix:/s/isolate-deno.sock',
      '/opt/b/dist/deno.mjs',
    ]);
  });

  it('with those flags can read its bundle and nothing else, and cannot run, read env or reach the network', () => {
    const dir = privateDir('edge-deno-perms');
    const bundle = join(dir, 'dist');
    mkdirSync(bundle);
    writeFileSync(join(bundle, 'app.mjs'), 'export default 1;\n');
    writeFileSync(join(dir, 'secret.key'), 'k');
    symlinkSync(join(dir, 'secret.key'), join(bundle, 'link.key'));
    // the probe replaces dist/deno.mjs; every attempt prints its outcome
    writeFileSync(
      join(bundle, 'deno.mjs'),
      `const out = {};
const tryIt = async (k, f) => { try { await f(); out[k] = 'allowed'; } catch (e) { out[k] = e.name; } };
await tryIt('readBundle', () => Deno.readTextFile(${JSON.stringify(join(bundle, 'app.mjs'))}));
await tryIt('readStateDir', () => Deno.readTextFile(${JSON.stringify(join(dir, 'secret.key'))}));
await tryIt('readThroughSymlink', () => Deno.readTextFile(${JSON.stringify(join(bundle, 'link.key'))}));
await tryIt('readEtc', () => Deno.readTextFile('/etc/hostname'));
await tryIt('writeBundle', () => Deno.writeTextFile(${JSON.stringify(join(bundle, 'x'))}, 'x'));
await tryIt('env', () => Deno.env.get('HOME'));
await tryIt('run', () => new Deno.Command('/bin/true').output());
await tryIt('net', () => fetch('http://127.0.0.1:8080/'));
await tryIt('connect', () => Deno.connect({ hostname: '127.0.0.1', port: 22 }));
await tryIt('dns', () => Deno.resolveDns('example.com', 'A'));
await tryIt('ffi', () => Deno.dlopen('/lib/x86_64-linux-gnu/libc.so.6', {}));
await tryIt('bindingSocket', () => Deno.connect({ transport: 'unix', path: ${JSON.stringify(join(dir, 'b.sock'))} }));
console.log(JSON.stringify(out));
`,
    );
    const r = spawnSync(denoBinary(distDir), denoArgs(bundle, join(dir, 'i.sock')), {
      env: { DENO_DIR: join(dir, 'deno-cache'), NO_COLOR: '1' },
      encoding: 'utf8',
    });
    expect(r.status, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({
      readBundle: 'allowed',
      readStateDir: 'NotCapable',
      // Deno checks the path as given, not where a symlink leads: dist/ must hold none (next test)
      readThroughSymlink: 'allowed',
      readEtc: 'NotCapable',
      writeBundle: 'NotCapable',
      env: 'NotCapable',
      run: 'NotCapable',
      net: 'NotCapable',
      connect: 'NotCapable',
      dns: 'NotCapable',
      ffi: 'NotCapable',
      // the host's binding socket: its calls go back on the hop connection instead
      bindingSocket: 'NotCapable',
    });
  });

  it('the built dist/ holds no symlink (Deno would follow one out of its read permission)', () => {
    const walk = (d: string): string[] =>
      readdirSync(d, { withFileTypes: true }).flatMap((e) =>
        e.isSymbolicLink() ? [join(d, e.name)] : e.isDirectory() ? walk(join(d, e.name)) : [],
      );
    expect(walk(distDir)).toEqual([]);
  });

  it("finds Deno where Node finds the package (an embedder's install too), and names the exact version otherwise", () => {
    const tmp = privateDir('deno-resolve');
    expect(() => denoBinary('/nonexistent/dist', [join(tmp, 'x.js')])).toThrow(
      'isolate deno: the deno package is not installed; install the pinned Deno with: npm i deno@2.9.6',
    );
    // an embedder's project with its own deno package (not below ballast's directory)
    const consumer = join(tmp, 'consumer');
    mkdirSync(join(consumer, 'node_modules'), { recursive: true });
    symlinkSync(join(repo, 'node_modules/deno'), join(consumer, 'node_modules/deno'));
    expect(denoBinary('/nonexistent/dist', [join(consumer, 'x.js')])).toBe(join(repo, 'node_modules/deno/deno'));
    const old = join(tmp, 'old');
    mkdirSync(join(old, 'node_modules/deno'), { recursive: true });
    writeFileSync(join(old, 'node_modules/deno/package.json'), '{"name":"deno","version":"2.0.0"}');
    expect(() => denoBinary('/nonexistent/dist', [join(old, 'x.js')])).toThrow(
      `isolate deno: ${join(old, 'node_modules/deno/package.json')} is deno 2.0.0, not the pinned 2.9.6; install it with: npm i deno@2.9.6`,
    );
  });

  it('serves with 0600 sockets, is killed on stop, and the sockets are removed', async () => {
    const { config } = makeTestConfig({ isolate: 'deno' });
    const s = await serve({ config, distDir, signals: false, accessLog: false, log: () => undefined });
    const pid = s.isolate?.pid ?? 0;
    expect(s.isolate?.runtime).toBe('deno');
    expect(alive(pid)).toBe(true);
    for (const f of ['bindings.sock', 'isolate-deno.sock']) {
      const st = lstatSync(join(config.stateDir, f));
      expect([f, st.isSocket(), st.mode & 0o777]).toEqual([f, true, 0o600]);
    }
    const token = (await createToken(s.host.db, 'a', ['*'])).token;
    const r = await fetch(`${s.server.url}/api/v2/notification/agent`, { headers: { token } });
    expect([r.status, await r.text()]).toEqual([200, '[]']);
    await s.stop();
    // stop() resolves once the child's exit was reaped
    expect(alive(pid)).toBe(false);
    expect(existsSync(join(config.stateDir, 'bindings.sock'))).toBe(false);
    expect(existsSync(join(config.stateDir, 'isolate-deno.sock'))).toBe(false);
  });

  it('its death is logged and stops the host (which then exits non-zero)', async () => {
    const { config, s, death } = await serveWatched('deno');
    process.kill(s.isolate?.pid ?? 0, 'SIGKILL');
    expect(await death).toBe('deno SIGKILL');
    // onIsolateDeath runs after the host stopped: the listener is closed, the socket gone
    expect(existsSync(join(config.stateDir, 'bindings.sock'))).toBe(false);
    await expect(fetch(`${s.server.url}/api/v2/kerberos/conf`)).rejects.toThrow();
  });
});

describe('the workerd process', () => {
  it('serves on 0600 sockets, leaves no config (it holds the secret) on disk, and its death stops the host', async () => {
    const { config, s, death } = await serveWatched('workerd');
    expect(s.isolate?.runtime).toBe('workerd');
    for (const f of ['bindings.sock', 'isolate-workerd.sock']) {
      const st = lstatSync(join(config.stateDir, f));
      expect([f, st.isSocket(), st.mode & 0o777]).toEqual([f, true, 0o600]);
    }
    expect(existsSync(join(config.stateDir, 'isolate-workerd.capnp'))).toBe(false);
    const token = (await createToken(s.host.db, 'a', ['*'])).token;
    const r = await fetch(`${s.server.url}/api/v2/notification/agent`, { headers: { token } });
    expect([r.status, await r.text()]).toEqual([200, '[]']);
    process.kill(s.isolate?.pid ?? 0, 'SIGKILL');
    expect(await death).toBe('workerd SIGKILL');
    expect(existsSync(join(config.stateDir, 'bindings.sock'))).toBe(false);
    expect(existsSync(join(config.stateDir, 'isolate-workerd.sock'))).toBe(false);
  });
});

describe('ballast serve --isolate on the command line', () => {
  const cli = join(distDir, 'host', 'cli.mjs');

  it('--isolate takes workerd or deno', () => {
    const r = spawnSync(process.execPath, [cli, 'serve', '--demo', '--isolate=nodejs'], { encoding: 'utf8' });
    expect([r.status, r.stderr]).toEqual([2, 'ballast: --isolate takes workerd or deno (got "nodejs")\n']);
  });

  it('serve --isolate deno: when Deno is killed, the host logs it and exits 1', async () => {
    const state = privateDir('edge-cli-death');
    const child = spawn(process.execPath, [cli, 'serve', '--demo', '--isolate', 'deno'], {
      env: { ...process.env, BALLAST_DEMO_DIR: state, PORT: '0' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stderr.on('data', (c: Buffer) => (err += c.toString('utf8')));
    const exit = new Promise<number | null>((done) => child.once('exit', (c) => done(c)));
    await new Promise<void>((done) =>
      child.stdout.on('data', (c: Buffer) => {
        out += c.toString('utf8');
        if (out.includes('listening on')) done();
      }),
    );
    // the host's only child is the Deno process
    const kids = readFileSync(`/proc/${child.pid}/task/${child.pid}/children`, 'utf8').trim().split(/\s+/);
    expect(kids).toHaveLength(1);
    expect(readFileSync(`/proc/${kids[0]}/cmdline`, 'utf8')).toContain('deno.mjs');
    process.kill(Number(kids[0]), 'SIGKILL');
    expect(await exit).toBe(1);
    expect(err).toContain(`isolate deno (pid ${kids[0]}) died: SIGKILL`);
    expect(err).toContain('isolate deno SIGKILL: stopping the host');
    expect(existsSync(join(state, 'bindings.sock'))).toBe(false);
  }, 30_000);

  it('serve --demo --isolate deno answers GET /kerberos/conf with the plain host body; SIGTERM stops both', async () => {
    const answers: string[] = [];
    for (const flags of [[], ['--isolate', 'deno']]) {
      const state = privateDir('edge-cli');
      const child = spawn(process.execPath, [cli, 'serve', '--demo', ...flags], {
        env: { ...process.env, BALLAST_DEMO_DIR: state, PORT: '0' },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let out = '';
      const url = await new Promise<string>((done, fail) => {
        child.stdout.on('data', (c: Buffer) => {
          out += c.toString('utf8');
          const m = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(out);
          if (m) done(m[1]);
        });
        child.once('exit', (code) => fail(new Error(`serve exited ${code}: ${out}`)));
      });
      if (flags.length) expect(out).toContain('routes in deno');
      const token = readFileSync(join(state, 'admin.token'), 'utf8').trim();
      const r = await fetch(`${url}/api/v2/kerberos/conf`, { headers: { token } });
      expect(r.status).toBe(200);
      answers.push(await r.text());
      const code = new Promise<number | null>((done) => child.once('exit', (c) => done(c)));
      child.kill('SIGTERM');
      expect(await code).toBe(0);
      expect(existsSync(join(state, 'bindings.sock'))).toBe(false);
    }
    expect(answers[1]).toBe(answers[0]);
    expect(JSON.parse(answers[0])).toMatchObject({ raw: expect.stringContaining('[realms]') });
  }, 60_000);
});

/** An isolate of the test host's bundle, its bindings on `socket`. */
const launchOn = (runtime: 'deno' | 'workerd', t: TestHost, socket: BindingSocket) =>
  launchIsolate(runtime, {
    distDir,
    stateDir: t.config.stateDir,
    socket,
    vars: t.host.vars,
    hop: { secret: 'lifecycle-test-hop-secret' },
    log: () => undefined,
  });

describe("the isolates' connections to the binding socket", () => {
  it('deno makes none: its binding calls ride the hop connection', async () => {
    const t = await makeTestHost();
    let ends = 0;
    const socket = await startBindingSocket({
      bindings: t.host.bindings,
      path: join(t.config.stateDir, 'bindings.sock'),
      onConnectionEnd: () => ends++,
    });
    const iso = await launchOn('deno', t, socket);
    try {
      for (let i = 0; i < 3; i++) {
        const r = await iso.fetch(
          new Request('http://ballast.local/api/v2/notification/agent', { headers: { token: t.adminToken } }),
        );
        expect([r.status, await r.text()]).toEqual([200, '[]']);
      }
    } finally {
      await iso.close();
      // closing the socket ends any connection it still has
      await socket.close();
      await t.close();
    }
    expect(ends).toBe(0);
  });

  it.each(['workerd'] as const)(
    '%s resends a request on a fresh connection when the host closed the idle one',
    async (runtime) => {
      const t = await makeTestHost();
      let ended!: () => void;
      let connectionEnded = new Promise<void>((r) => (ended = r));
      const socket = await startBindingSocket({
        bindings: t.host.bindings,
        path: join(t.config.stateDir, 'bindings.sock'),
        idleTimeoutMs: 50,
        onConnectionEnd: () => ended(),
      });
      const iso = await launchOn(runtime, t, socket);
      try {
        const get = async () => {
          const r = await iso.fetch(
            new Request('http://ballast.local/api/v2/notification/agent', { headers: { token: t.adminToken } }),
          );
          return [r.status, await r.text()];
        };
        expect(await get()).toEqual([200, '[]']);
        // the host dropped Deno's idle connection: the next request must not fail
        await connectionEnded;
        connectionEnded = new Promise<void>((r) => (ended = r));
        expect(await get()).toEqual([200, '[]']);
        expect(await get()).toEqual([200, '[]']);
      } finally {
        await iso.close();
        await socket.close();
        await t.close();
      }
    },
  );
});
