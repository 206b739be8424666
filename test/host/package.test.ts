/**
 * Ballast as an installed package: `npm pack` → install the tarball into a temp project with
 * Hono, deno@2.9.6, workerd and @types/node from the npm registry → there: every file under
 * examples/ type-checks (nodenext, strict) and runs; `import app from 'ballast'` (typed) inside
 * Hono under a custom prefix; the host API from `ballast/host`, the typed client from
 * `ballast/client`; `ballast serve --demo` as installed, in-process and with the routes in Deno
 * and in workerd; `@arethetypeswrong/cli` on the tarball; `npx ballast --help`. Installs with
 * --ignore-scripts and links the repo's built better-sqlite3.
 */
import { execFile, spawn } from 'node:child_process';
import { promisify } from 'node:util';
import {
  cpSync,
  existsSync,
  lstatSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join, relative, resolve } from 'node:path';
import { filesUnder } from '../helpers/files';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const repo = resolve(import.meta.dirname, '../..');
const tsc = join(repo, 'node_modules/typescript/bin/tsc');
let dir: string;
let tarball: string;
interface Pkg {
  version: string;
}
interface Doc {
  paths: Record<string, unknown>;
}

// Not execFileSync: a build of over a minute would block this worker's event loop, and vitest's
// own RPC with the worker times out ("Timeout calling onTaskUpdate") though every test passed.
const execFileAsync = promisify(execFile);
const run = async (cmd: string, args: string[], cwd = dir, env: Record<string, string> = {}): Promise<string> =>
  (
    await execFileAsync(cmd, args, {
      cwd,
      encoding: 'utf8',
      timeout: 300_000,
      maxBuffer: 64 * 1024 * 1024,
      env: { ...process.env, ...env },
    })
  ).stdout;

/**
 * The installed bin itself (npx would not pass SIGTERM on to it), on a free port, in the temp
 * project: resolves once it prints its docs URL, with the origin it listens on.
 */
async function serveInstalled(args: string[]): Promise<{ banner: string; origin: string; stop(): Promise<void> }> {
  const child = spawn(process.execPath, [join(dir, 'node_modules/.bin/ballast'), ...args], {
    cwd: dir,
    env: { ...process.env, PORT: '0', BALLAST_DEMO_DIR: '' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stderr.on('data', (d: Buffer) => (err += d.toString()));
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      await exited;
    }
  };
  try {
    await new Promise<void>((res, rej) => {
      const t = setTimeout(() => rej(new Error(`not listening after 60 s: ${out}${err}`)), 60_000);
      child.once('exit', (code) => (clearTimeout(t), rej(new Error(`exited ${code}: ${out}${err}`))));
      child.stdout.on('data', (d: Buffer) => {
        out += d.toString();
        // the start-up lines are JSON log lines (`msg`) by default, text with --log-format text
        if (/docs: http/.test(out)) {
          clearTimeout(t);
          res();
        }
      });
    });
  } catch (e) {
    await stop();
    throw e;
  }
  const url = /listening on (http:\/\/[^\s/]+)/.exec(out)?.[1];
  if (!url) throw new Error(`no URL in ${out}`);
  return { banner: out, origin: url, stop };
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'ballast-package-'));
  await run(process.execPath, ['build.mjs', '--if-stale'], repo);
  writeFileSync(join(dir, 'openapi.before.json'), readFileSync(join(repo, 'dist/openapi.json')));
  // what `prepack` adds to the build: the declarations
  await run(process.execPath, ['build.mjs', '--package-only'], repo);
  const packed = JSON.parse(
    await run('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', dir], repo),
  ) as {
    filename: string;
    files: { path: string }[];
  }[];
  tarball = join(dir, packed[0].filename);
  writeFileSync(join(dir, 'files.json'), JSON.stringify(packed[0].files.map((f) => f.path)));
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'embedder', private: true, type: 'module' }));
  // what an embedder installs beside it: Hono, the pinned Deno, workerd (Miniflare's, as pinned
  // here) for the isolates, and Node's types for the examples
  const workerd = (JSON.parse(readFileSync(join(repo, 'node_modules/workerd/package.json'), 'utf8')) as Pkg).version;
  const types = (JSON.parse(readFileSync(join(repo, 'node_modules/@types/node/package.json'), 'utf8')) as Pkg).version;
  await run('npm', [
    'install',
    '--prefer-offline',
    '--no-audit',
    '--no-fund',
    '--ignore-scripts',
    tarball,
    'hono',
    'deno@2.9.6',
    `workerd@${workerd}`,
    `@types/node@${types}`,
  ]);
  // the native module is not compiled with --ignore-scripts: use the repo's build of it
  rmSync(join(dir, 'node_modules/better-sqlite3'), { recursive: true, force: true });
  symlinkSync(join(repo, 'node_modules/better-sqlite3'), join(dir, 'node_modules/better-sqlite3'));
}, 600_000);

afterAll(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('the packed tarball', () => {
  it('holds the built artefacts, the license and the demo fixtures, and no sources or tests', () => {
    const files = JSON.parse(readFileSync(join(dir, 'files.json'), 'utf8')) as string[];
    for (const f of [
      'dist/app.mjs',
      'dist/app.d.ts',
      'dist/host/cli.mjs',
      'dist/host/cli-main.cjs',
      'dist/host/index.mjs',
      'dist/host/index.d.ts',
      'dist/client.mjs',
      'dist/client.d.ts',
      'dist/app.cjs',
      'dist/app.d.cts',
      'dist/host/index.cjs',
      'dist/host/index.d.cts',
      'dist/client.cjs',
      'dist/client.d.cts',
      'dist/openapi.json',
      'dist/manifest.json',
      'dist/docs/swagger-ui-bundle.js',
      'LICENSE',
      'package.json',
    ]) {
      expect(files).toContain(f);
    }
    expect(files.some((f) => f.startsWith('dist/routes/kerberos/'))).toBe(true);
    // no code: of handlers/ only the area READMEs (each area's routes, argv, errors, events) travel
    expect(
      files.filter(
        (f) => /^(test|handlers|runtime|node_modules)\//.test(f) && !/^handlers\/[a-z0-9]+\/README\.md$/.test(f),
      ),
    ).toEqual([]);
    expect(files).toContain('handlers/jobs/README.md');
    // the README is short and its links resolve inside the package (docs/ travels with it);
    // no document points at a file outside the repository
    const readme = readFileSync(join(repo, 'README.md'), 'utf8');
    expect(readme.split('\n').length).toBeLessThanOrEqual(250);
    const links = [...readme.matchAll(/\]\(([^)#]+)\)/g)].map((m) => m[1]).filter((l) => !/^[a-z]+:/.test(l));
    expect(links.length).toBeGreaterThanOrEqual(9);
    for (const l of links) expect(files, `README link ${l}`).toContain(l);
    for (const d of ['README.md', ...files.filter((f) => /^(docs|handlers)\/.*\.md$/.test(f))])
      expect(readFileSync(join(repo, d), 'utf8'), d).not.toMatch(/\.\.\/(?:\.\.\/)*shared\//);
    // the checkout's code cache is its own Node's (runtime/launch.ts): an install writes its own
    expect(files.filter((f) => f.endsWith('.v8cache'))).toEqual([]);
  });

  it('one document: package/openapi.d.ts is built, not in git; the package step leaves dist/openapi.json as the build wrote it', async () => {
    expect(await run('git', ['ls-files', 'package/openapi.d.ts'], repo)).toBe('');
    expect(await run('git', ['check-ignore', 'package/openapi.d.ts'], repo)).toBe('package/openapi.d.ts\n');
    expect(readFileSync(join(repo, 'package/openapi.d.ts'), 'utf8')).toMatch(
      /^\/\*\*\n \* Generated by openapi-typescript/,
    );
    expect(readFileSync(join(repo, 'dist/openapi.json')).equals(readFileSync(join(dir, 'openapi.before.json')))).toBe(
      true,
    );
    // installing or packing runs no build: what a consumer or CI does not need is an explicit step
    const { scripts } = JSON.parse(readFileSync(join(repo, 'package.json'), 'utf8')) as {
      scripts: Record<string, string>;
    };
    expect([scripts.prepare, scripts.install, scripts.postinstall]).toEqual([undefined, undefined, undefined]);
    expect([scripts.prepack, scripts['build:package']]).toEqual([
      'node build.mjs --package',
      'node build.mjs --package',
    ]);
  });

  it('@arethetypeswrong/cli: every entry point resolves, typed, in node10, node16 (CJS and ESM) and bundler', async () => {
    const attw = join(repo, 'node_modules/@arethetypeswrong/cli/dist/index.js');
    let out: string;
    try {
      out = await run(process.execPath, [attw, tarball, '--format', 'json']);
    } catch (e) {
      out = (e as { stdout: string }).stdout;
    }
    const report = JSON.parse(out) as {
      problems: unknown;
      analysis: {
        entrypoints: Record<
          string,
          { isWildcard: boolean; resolutions: Record<string, { resolution?: { fileName: string } }> }
        >;
      };
    };
    expect(Object.values(report.problems as object)).toEqual([]);
    const resolved: Record<string, string[]> = {};
    for (const [name, e] of Object.entries(report.analysis.entrypoints)) {
      if (e.isWildcard) continue;
      resolved[name] = Object.entries(e.resolutions)
        .filter(([, r]) => r.resolution?.fileName)
        .map(([mode]) => mode);
    }
    const all = ['node10', 'node16-cjs', 'node16-esm', 'bundler'];
    expect(resolved).toEqual({
      '.': all,
      './host': all,
      './client': all,
      './openapi.json': all,
      './manifest.json': all,
      './package.json': all,
    });
  }, 300_000);

  it('every file under examples/ type-checks as a consumer compiles it (nodenext, strict) and runs', async () => {
    const examples = readdirSync(join(repo, 'examples')).filter((f) => f.endsWith('.ts'));
    expect(examples.sort()).toEqual(['hono-mount.ts', 'isolate-deno.ts', 'typed-client.ts']);
    cpSync(join(repo, 'examples'), join(dir, 'examples'), { recursive: true });
    await run(process.execPath, [tsc, '-p', 'examples', '--noEmit', 'false', '--outDir', 'build']).catch(
      (e: { stdout: string }) => expect.fail(e.stdout),
    );
    const lab = readFileSync(join(repo, 'fixtures/demo/files/etc/krb5.conf.d/lab.conf'), 'utf8').split('\n')[0];
    expect(JSON.parse(await run(process.execPath, ['build/hono-mount.js']))).toEqual({
      realm: lab,
      // the document under the prefix: the same paths as dist/openapi.json's, /api/v2 → /mgmt
      documentPaths: Object.keys((JSON.parse(readFileSync(join(repo, 'dist/openapi.json'), 'utf8')) as Doc).paths)
        .filter((p) => p.startsWith('/api/v2/kerberos/realm'))
        .map((p) => p.replace('/api/v2/', '/mgmt/')),
      docsPage: 200,
    });
    expect(JSON.parse(await run(process.execPath, ['build/isolate-deno.js']))).toEqual({
      isolate: 'deno',
      status: 200,
      realm: lab,
    });
    // typed-client.ts runs against the installed CLI's servers (below)
  }, 300_000);

  for (const isolate of [undefined, 'deno', 'workerd'] as const) {
    it(`the installed ballast serve --demo${isolate ? ` --isolate ${isolate}` : ''} answers the typed-client example`, async () => {
      const served = await serveInstalled(['serve', '--demo', ...(isolate ? ['--isolate', isolate] : [])]);
      try {
        expect(served.banner).toContain(isolate ? `(replay system, routes in ${isolate};` : '(replay system;');
        const out = await run(process.execPath, ['build/typed-client.js'], dir, {
          BALLAST_URL: served.origin,
          BALLAST_TOKEN: readFileSync(join(dir, 'var/demo/admin.token'), 'utf8').trim(),
        });
        const lab = readFileSync(join(repo, 'fixtures/demo/files/etc/krb5.conf.d/lab.conf'), 'utf8').split('\n')[0];
        expect(JSON.parse(out)).toEqual({
          realm: lab,
          links: expect.arrayContaining(['eno1', 'eno2']),
          withoutToken: 401,
        });
      } finally {
        await served.stop();
      }
    }, 300_000);
  }

  it('serves a route inside Hono under a custom prefix (app.mount), with the host API from ballast/host', async () => {
    writeFileSync(
      join(dir, 'serve.mjs'),
      `import { Hono } from 'hono';
import app from 'ballast';
import doc from 'ballast/openapi.json' with { type: 'json' };
import { createHost, demoConfig, seedDemo, createToken } from 'ballast/host';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, dirname } from 'node:path';
import { createRequire } from 'node:module';
const pkg = dirname(createRequire(import.meta.url).resolve('ballast/package.json'));
const state = mkdtempSync(join(tmpdir(), 'ballast-package-demo-'));
const config = demoConfig(pkg, 0, state);
seedDemo(pkg, config);
const host = await createHost({ config, distDir: join(pkg, 'dist'), log: () => {} });
const { token } = await createToken(host.db, 'admin', ['*']);
const env = { ...host.env, VARS: { ...host.env.VARS, basePath: '/' } };
const h = new Hono();
h.mount('/appliance', (req) => app.fetch(req, env));
const ok = await h.request('/appliance/kerberos/realm/lab/details', { headers: { token } });
const noToken = await h.request('/appliance/kerberos/realm/lab/details');
const spec = await h.request('/appliance/openapi.json');
console.log(JSON.stringify({ status: ok.status, body: await ok.json(), noToken: noToken.status, spec: spec.status, version: doc.openapi }));
await host.close();
rmSync(state, { recursive: true, force: true });
`,
    );
    const out = JSON.parse(await run(process.execPath, ['serve.mjs'])) as {
      status: number;
      body: { raw: string };
      noToken: number;
      spec: number;
      version: string;
    };
    expect(out.status).toBe(200);
    expect(out.body.raw).toBe(readFileSync(join(repo, 'fixtures/demo/files/etc/krb5.conf.d/lab.conf'), 'utf8'));
    expect([out.noToken, out.spec, out.version]).toEqual([401, 200, '3.1.0']);
  });

  it('mounted under /mgmt (config.basePath, Hono without stripping): the routes, the document, the docs page and the typed client follow the prefix', async () => {
    writeFileSync(
      join(dir, 'mount.mjs'),
      `import { Hono } from 'hono';
import { createHost, demoConfig, seedDemo, createToken } from 'ballast/host';
import { createBallastClient } from 'ballast/client';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, dirname } from 'node:path';
import { createRequire } from 'node:module';
const pkg = dirname(createRequire(import.meta.url).resolve('ballast/package.json'));
const state = mkdtempSync(join(tmpdir(), 'ballast-package-mount-'));
const config = { ...demoConfig(pkg, 0, state), basePath: '/mgmt' };
seedDemo(pkg, config);
const host = await createHost({ config, distDir: join(pkg, 'dist'), log: () => {} });
const { token } = await createToken(host.db, 'admin', ['*']);
const h = new Hono();
h.mount('/mgmt', (req) => host.app.fetch(req, host.env), { replaceRequest: false });
const seen = [];
const api = createBallastClient({ baseUrl: 'http://embedder.test', basePath: '/mgmt', token, fetch: (r) => (seen.push(r.url), h.fetch(r)) });
const viaClient = await api.GET('/api/v2/kerberos/realm/{name}/details', { params: { path: { name: 'lab' } } });
const doc = await (await h.request('/mgmt/openapi.json')).json();
const docs = await h.request('/mgmt/docs');
const old = await h.request('/api/v2/kerberos/realm/lab/details', { headers: { token } });
console.log(JSON.stringify({
  client: viaClient.response.status,
  url: seen,
  raw: viaClient.data?.raw,
  docPaths: Object.keys(doc.paths).filter((p) => p.includes('realm/{name}/details')),
  docs: docs.status,
  docsType: docs.headers.get('content-type'),
  docsBody: (await docs.text()).includes('/mgmt/openapi.json'),
  old: old.status,
}));
await host.close();
rmSync(state, { recursive: true, force: true });
`,
    );
    const out = JSON.parse(await run(process.execPath, ['mount.mjs'])) as Record<string, unknown>;
    expect(out).toEqual({
      client: 200,
      url: ['http://embedder.test/mgmt/kerberos/realm/lab/details'],
      raw: readFileSync(join(repo, 'fixtures/demo/files/etc/krb5.conf.d/lab.conf'), 'utf8'),
      docPaths: ['/mgmt/kerberos/realm/{name}/details'],
      docs: 200,
      docsType: 'text/html; charset=utf-8',
      docsBody: true,
      old: 404,
    });
  });

  it('loads with require() from CommonJS: ballast, ballast/host and ballast/client answer like the ES modules', async () => {
    writeFileSync(
      join(dir, 'require.cjs'),
      `const app = require('ballast');
const { createBallast, createToken } = require('ballast/host');
const { createBallastClient } = require('ballast/client');
const { mkdtempSync, rmSync } = require('node:fs');
const { join } = require('node:path');
const { tmpdir } = require('node:os');
(async () => {
  const stateDir = mkdtempSync(join(tmpdir(), 'ballast-package-cjs-'));
  const ballast = await createBallast({ demo: { stateDir }, log: () => {} });
  const { token } = await createToken(ballast.host.db, 'cjs', ['*']);
  const api = createBallastClient({ baseUrl: 'http://x', token, fetch: (r) => ballast.fetch(r) });
  const viaClient = await api.GET('/api/v2/kerberos/realm/{name}/details', { params: { path: { name: 'lab' } } });
  const viaApp = await app.bind(ballast.env).fetch(new Request('http://x/api/v2/kerberos/conf', { headers: { token } }));
  console.log(JSON.stringify({ client: viaClient.response.status, app: viaApp.status, routes: app.routes.length, fetch: typeof app.fetch }));
  await ballast.close();
  rmSync(stateDir, { recursive: true, force: true });
})();
`,
    );
    const manifest = JSON.parse(readFileSync(join(repo, 'dist/manifest.json'), 'utf8')) as { routes: unknown[] };
    expect(JSON.parse(await run(process.execPath, ['require.cjs']))).toEqual({
      client: 200,
      app: 200,
      routes: manifest.routes.length,
      fetch: 'function',
    });
  });

  it('is typed: the app, Env, Vars, the host API and the client type-check in the embedder (bundler and nodenext)', async () => {
    writeFileSync(
      join(dir, 'main.ts'),
      `import app, { routes, type Env, type Vars, type App } from 'ballast';
import { createHost, type HostConfig } from 'ballast/host';
import { createBallastClient } from 'ballast/client';
const vars: Vars = { productName: 'p', hostId: 'h', paths: {}, bin: {}, settings: {}, basePath: '/' };
const env = { VARS: vars } as Env;
const r: Promise<Response> = app.fetch(new Request('http://x/kerberos/conf'), env);
const n: number = routes.length;
const h: typeof createHost = createHost;
let c: HostConfig | undefined;
let a: App | undefined;
// @ts-expect-error: the app has no such member (fails if the import were untyped)
app.nosuch();
const api = createBallastClient({ baseUrl: 'http://localhost:8080', token: 't' });
void api.GET('/api/v2/kerberos/realm/{name}/details', { params: { path: { name: 'lab' } } }).then((x) => x.data?.raw.length);
// @ts-expect-error: an unknown path
void api.GET('/api/v2/nosuch');
export { r, n, h, c, a };
`,
    );
    writeFileSync(
      join(dir, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          target: 'ES2022',
          module: 'ESNext',
          moduleResolution: 'Bundler',
          strict: true,
          noEmit: true,
          skipLibCheck: true,
          lib: ['ES2022', 'DOM'],
          types: [],
        },
        files: ['main.ts'],
      }),
    );
    const typeCheck = async (project: string) => {
      try {
        return await run(process.execPath, [tsc, '-p', project]);
      } catch (e) {
        return (e as { stdout: string }).stdout;
      }
    };
    expect(await typeCheck('.')).toBe('');
    // the resolution TypeScript recommends for Node ESM: every import of a declaration resolves
    // as Node would (extensions included), so the same file type-checks there too
    writeFileSync(
      join(dir, 'tsconfig.nodenext.json'),
      JSON.stringify({
        extends: './tsconfig.json',
        compilerOptions: { module: 'NodeNext', moduleResolution: 'NodeNext' },
      }),
    );
    expect(await typeCheck('tsconfig.nodenext.json')).toBe('');
    // two tsc runs over the packed declarations: ~20 s on a quiet 2-core machine, more on a busy one
  }, 120_000);

  it('the installed ballast serve --demo keeps its state in the working directory, nothing in the package', async () => {
    // the installed bin itself (npx would not pass SIGTERM on to it)
    const child = spawn(process.execPath, [join(dir, 'node_modules/.bin/ballast'), 'serve', '--demo'], {
      cwd: dir,
      env: { ...process.env, PORT: '0', BALLAST_DEMO_DIR: '' },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    try {
      await new Promise<void>((res, rej) => {
        let out = '';
        const t = setTimeout(() => rej(new Error(`not listening: ${out}`)), 60_000);
        child.stdout.on('data', (d: Buffer) => {
          out += d.toString();
          if (/docs: http/.test(out)) {
            clearTimeout(t);
            res();
          }
        });
      });
      expect(readFileSync(join(dir, 'var/demo/admin.token'), 'utf8')).toMatch(
        /^blt_[0-9a-f]{12}_[A-Za-z0-9_-]{43}\n?$/,
      );
      const pkg = join(dir, 'node_modules/ballast');
      expect(existsSync(join(pkg, 'var'))).toBe(false);
      expect(readdirSync(join(pkg, 'dist/host')).filter((f) => f.endsWith('.v8cache'))).toEqual([]);
    } finally {
      child.kill('SIGTERM');
      await new Promise((r) => child.once('exit', r));
    }
  });

  it('a second build of the same tree, elsewhere, is byte for byte the same dist/', async () => {
    // the tree without its outputs (and without var/: the examples' answers are not reused but
    // made again), and node_modules as a real directory, hard-linked: a symlink would show in
    // the bundles' path comments. A checkout whose node_modules IS a symlink (a git worktree
    // sharing one) gets the same symlink in a copy beside it, at the same depth: the comments'
    // relative paths to the linked directory are then the same in both builds.
    const linked = lstatSync(join(repo, 'node_modules')).isSymbolicLink();
    const copy = linked ? mkdtempSync(join(dirname(repo), `.${basename(repo)}-rebuild-`)) : join(dir, 'rebuild');
    try {
      for (const f of readdirSync(repo)) {
        if (['node_modules', 'dist', 'var', '.git', '.build.lock'].includes(f)) continue;
        cpSync(join(repo, f), join(copy, f), { recursive: true });
      }
      if (linked) symlinkSync(readlinkSync(join(repo, 'node_modules')), join(copy, 'node_modules'));
      else
        await run('cp', ['-al', join(repo, 'node_modules'), join(copy, 'node_modules')]).catch(() =>
          run('cp', ['-a', join(repo, 'node_modules'), join(copy, 'node_modules')]),
        );
      await rebuiltTheSame(copy);
    } finally {
      if (linked) rmSync(copy, { recursive: true, force: true });
    }
  }, 600_000);

  async function rebuiltTheSame(copy: string) {
    await run(process.execPath, ['build.mjs', '--package'], copy);
    const tree = (root: string) =>
      filesUnder(join(root, 'dist'), (n) => n !== '.build-stamp' && !n.endsWith('.v8cache'))
        .map((f) => relative(join(root, 'dist'), f))
        .sort();
    const ours = tree(repo);
    expect(tree(copy)).toEqual(ours);
    expect(ours.length).toBeGreaterThan(200);
    const differ = ours.filter((f) => !readFileSync(join(repo, 'dist', f)).equals(readFileSync(join(copy, 'dist', f))));
    expect(differ).toEqual([]);
  }

  it('npx ballast --help prints the usage', async () => {
    const out = await run('npx', ['--no-install', 'ballast', '--help']);
    expect(out).toMatch(/^usage:\n {2}ballast serve \[--config FILE \| --demo\]/);
  });
});
