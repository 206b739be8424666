/**
 * The built CLI (dist/host/cli.mjs, runtime/launch.ts) runs its bundle from V8's code cache: a
 * `serve` without a usable cache writes one once it listens, the next start takes it and still imports route
 * bundles (code from a cache loses import() on Node 20), a corrupt cache is replaced, and a
 * cache that cannot be written changes nothing. Run in a private copy of the install layout, so
 * the checkout's own cache is not touched.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { spawn, type ChildProcess } from 'node:child_process';
import {
  cpSync,
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
import { stringify } from 'yaml';
import { distDir, repo } from '../helpers/host';
import { freePort } from '../bench/lib';
import { privateDir } from '../helpers/tmp';
import { pathToFileURL } from 'node:url';

const root = privateDir('ballast-codecache');
mkdirSync(join(root, 'dist/host'), { recursive: true });
for (const f of ['cli.mjs', 'cli-main.cjs']) cpSync(join(distDir, 'host', f), join(root, 'dist/host', f));
for (const f of ['routes', 'manifest.json', 'openapi.json']) symlinkSync(join(distDir, f), join(root, 'dist', f));
symlinkSync(join(repo, 'node_modules'), join(root, 'node_modules'));
writeFileSync(join(root, 'package.json'), '{"type":"module"}\n');
const cli = join(root, 'dist/host/cli.mjs');
const cache = join(root, `dist/host/cli-main.${process.version}.v8cache`);
const hostFiles = () => readdirSync(join(root, 'dist/host')).sort();

const running: ChildProcess[] = [];
afterAll(() => {
  for (const c of running) c.kill('SIGKILL');
});

/** serve on a fresh port; resolves with the token once it listens */
async function serve(): Promise<{ port: number; token: string; stop: () => Promise<void> }> {
  const port = await freePort();
  const state = privateDir('ballast-codecache-state');
  const config = join(state, 'config.yaml');
  writeFileSync(
    config,
    stringify({ stateDir: state, listen: { host: '127.0.0.1', port }, system: { mode: 'replay', fixtures: [] } }),
  );
  const child = spawn(process.execPath, [cli, 'serve', '--config', config], { stdio: ['ignore', 'pipe', 'pipe'] });
  running.push(child);
  let out = '';
  await new Promise<void>((resolve, reject) => {
    const on = (c: Buffer) => {
      out += String(c);
      if (out.includes('listening')) resolve();
    };
    child.stdout!.on('data', on);
    child.stderr!.on('data', on);
    child.on('exit', (code) => reject(new Error(`serve exited ${code}: ${out}`)));
  });
  const token = /blt_[0-9a-f]{12}_[A-Za-z0-9_-]{43}/.exec(out)![0];
  return {
    port,
    token,
    stop: () =>
      new Promise<void>((r) => {
        child.once('exit', () => r());
        child.kill('SIGTERM');
      }),
  };
}

async function routeAnswers(s: { port: number; token: string }): Promise<number> {
  const r = await fetch(`http://127.0.0.1:${s.port}/api/v2/notification/agent`, { headers: { token: s.token } });
  await r.text();
  return r.status;
}

const wait = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** the cache is written right after the listening line: give it the moment between */
async function until(what: () => boolean): Promise<void> {
  for (let i = 0; i < 100 && !what(); i++) await wait(20);
}
const bigCache = () => existsSync(cache) && statSync(cache).isFile() && statSync(cache).size > 100_000;

describe('the CLI from V8’s code cache', () => {
  it('a serve without a cache writes one once it listens; the next start takes it and still imports route bundles', async () => {
    expect(existsSync(cache)).toBe(false);
    const first = await serve();
    await until(bigCache);
    expect(await routeAnswers(first)).toBe(200);
    await first.stop();
    expect(existsSync(cache)).toBe(true);
    expect(statSync(cache).mode & 0o777).toBe(0o644);
    expect(statSync(cache).size).toBeGreaterThan(100_000);
    expect(hostFiles().filter((f) => f.endsWith('.tmp'))).toEqual([]);

    const bytes = readFileSync(cache);
    const inode = statSync(cache).ino;
    const second = await serve();
    // a route bundle is import()ed from code that came from the cache
    expect(await routeAnswers(second)).toBe(200);
    await wait(200);
    await second.stop();
    // taken, so not written again (a rewrite is a rename: a new inode)
    expect(statSync(cache).ino).toBe(inode);
    expect(readFileSync(cache).equals(bytes)).toBe(true);
  }, 20_000);

  it('a corrupt cache is rejected by V8, the start compiles as before and the cache is replaced', async () => {
    writeFileSync(cache, 'not a code cache');
    const s = await serve();
    await until(bigCache);
    expect(await routeAnswers(s)).toBe(200);
    await s.stop();
    expect(statSync(cache).size).toBeGreaterThan(100_000);
  }, 20_000);

  it('a cache that cannot be written changes nothing (a read-only install)', async () => {
    rmSync(cache, { force: true });
    mkdirSync(cache); // where the file would go: rename fails as on a read-only directory
    const before = hostFiles();
    const s = await serve();
    expect(await routeAnswers(s)).toBe(200);
    await wait(200);
    await s.stop();
    expect(hostFiles()).toEqual(before);
    expect(statSync(cache).isDirectory()).toBe(true);
  }, 20_000);

  it('build.mjs refuses an import() left in the cached bundle, apart from importModule’s own', async () => {
    // a computed specifier: build.mjs has no type declarations
    const { assertNoDynamicImport } = (await import(pathToFileURL(join(repo, 'build.mjs')).href)) as {
      assertNoDynamicImport(text: string, name: string): void;
    };
    const ok =
      'function importModule(url2) {\n  const outer = globalThis[IMPORTER];\n  return outer ? outer(url2) : import(url2);\n}\n';
    expect(() => assertNoDynamicImport(`${ok}const s = "import(x)"; a.import(y);`, 'f.cjs')).not.toThrow();
    expect(() =>
      assertNoDynamicImport(`${ok}\nasync function f() {\n  await import("nodemailer");\n}`, 'f.cjs'),
    ).toThrow(/^f\.cjs:7 calls import\(\): use importModule/);
  });
});
