/**
 * Ballast as an installed package: `npm pack` → install the tarball into a temp project → there,
 * `import app from 'ballast'` (typed), serve a route inside Hono with `app.mount` under a custom
 * prefix (VARS.basePath '/'), the host API from `ballast/host`, the typed client from
 * `ballast/client`, and `npx ballast --help`. Needs the npm registry (or its cache) for the
 * tarball's dependencies; installs with --ignore-scripts and links the repo's built better-sqlite3.
 */
import { execFile, spawn } from 'node:child_process';
import { promisify } from 'node:util';
import {
  cpSync,
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative, resolve } from 'node:path';
import { filesUnder } from '../helpers/files';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const repo = resolve(import.meta.dirname, '../..');
const tsc = join(repo, 'node_modules/typescript/bin/tsc');
let dir: string;
let tarball: string;

// Not execFileSync: a build of over a minute would block this worker's event loop, and vitest's
// own RPC with the worker times out ("Timeout calling onTaskUpdate") though every test passed.
const execFileAsync = promisify(execFile);
const run = async (cmd: string, args: string[], cwd = dir): Promise<string> =>
  (await execFileAsync(cmd, args, { cwd, encoding: 'utf8', timeout: 300_000, maxBuffer: 64 * 1024 * 1024 })).stdout;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'ballast-package-'));
  await run(process.execPath, ['build.mjs', '--if-stale'], repo);
  const before = readFileSync(join(repo, 'package/openapi.d.ts'), 'utf8');
  // what `prepare` adds to the build: the client's types and the declarations
  await run(process.execPath, ['build.mjs', '--package-only'], repo);
  expect(
    readFileSync(join(repo, 'package/openapi.d.ts'), 'utf8'),
    'package/openapi.d.ts is stale: run node build.mjs --package and commit it',
  ).toBe(before);
  const packed = JSON.parse(
    await run('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', dir], repo),
  ) as {
    filename: string;
    files: { path: string }[];
  }[];
  tarball = join(dir, packed[0].filename);
  writeFileSync(join(dir, 'files.json'), JSON.stringify(packed[0].files.map((f) => f.path)));
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'embedder', private: true, type: 'module' }));
  await run('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund', '--ignore-scripts', tarball, 'hono']);
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
      'dist/openapi.json',
      'dist/manifest.json',
      'dist/docs/swagger-ui-bundle.js',
      'LICENSE',
      'package.json',
    ]) {
      expect(files).toContain(f);
    }
    expect(files.some((f) => f.startsWith('dist/routes/kerberos/'))).toBe(true);
    expect(files.filter((f) => /^(test|handlers|runtime|node_modules)\//.test(f))).toEqual([]);
    // the README is short and its links resolve inside the package (docs/ travels with it);
    // no document points at a file outside the repository
    const readme = readFileSync(join(repo, 'README.md'), 'utf8');
    expect(readme.split('\n').length).toBeLessThanOrEqual(250);
    const links = [...readme.matchAll(/\]\(([^)#]+)\)/g)].map((m) => m[1]).filter((l) => !/^[a-z]+:/.test(l));
    expect(links.length).toBeGreaterThanOrEqual(9);
    for (const l of links) expect(files, `README link ${l}`).toContain(l);
    for (const d of ['README.md', ...files.filter((f) => /^docs\/.*\.md$/.test(f))])
      expect(readFileSync(join(repo, d), 'utf8'), d).not.toMatch(/\.\.\/(?:\.\.\/)*shared\//);
    // the checkout's code cache is its own Node's (runtime/launch.ts): an install writes its own
    expect(files.filter((f) => f.endsWith('.v8cache'))).toEqual([]);
  });

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
  });

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
      expect(existsSync(join(dir, 'var/demo/admin.token'))).toBe(true);
      const pkg = join(dir, 'node_modules/ballast');
      expect(existsSync(join(pkg, 'var'))).toBe(false);
      expect(readdirSync(join(pkg, 'dist/host')).filter((f) => f.endsWith('.v8cache'))).toEqual([]);
    } finally {
      child.kill('SIGTERM');
      await new Promise((r) => child.once('exit', r));
    }
  });

  it('a second build of the same tree, elsewhere, is byte for byte the same dist/', async () => {
    // the tree without its outputs, and node_modules hard-linked (a real directory: a symlink
    // would show in the bundles' path comments)
    const copy = join(dir, 'rebuild');
    for (const f of readdirSync(repo)) {
      if (['node_modules', 'dist', 'var', '.git', '.build.lock'].includes(f)) continue;
      cpSync(join(repo, f), join(copy, f), { recursive: true });
    }
    await run('cp', ['-al', join(repo, 'node_modules'), join(copy, 'node_modules')]).catch(() =>
      run('cp', ['-a', join(repo, 'node_modules'), join(copy, 'node_modules')]),
    );
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
  }, 600_000);

  it('npx ballast --help prints the usage', async () => {
    const out = await run('npx', ['--no-install', 'ballast', '--help']);
    expect(out).toMatch(/^usage:\n {2}ballast serve \[--config FILE \| --demo\]/);
  });
});
