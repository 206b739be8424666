/**
 * dist/host/cli.mjs: starts the CLI (runtime/cli.ts, bundled as dist/host/cli-main.cjs) from
 * V8's code cache.
 *
 * Why: compiling the ~900 KB bundle and then, as start-up runs, each function it calls (zod's,
 * yaml's, the config check's, the host's) was ~70-80 ms of a 350 ms cold start; from the cache
 * it is a deserialisation (time to listening 359 → 275 ms median on the 2-core box).
 *
 * How: the bundle runs as a vm.Script given the cache file beside it when there is one. A
 * `serve` that started without a usable cache (none yet, a new bundle, a new Node: V8 checks
 * the source and its own version and flags, and rejects a mismatch) writes one as soon as it
 * listens (runtime/launcher-bridge.ts), so it holds what start-up compiled; written to a temp
 * file and renamed, so a reader never sees half of one. An installed package (the bundle under
 * node_modules) or a read-only directory gets no cache: the start compiles as it always did.
 * Other commands only read the cache.
 *
 * The cache is code the host runs as root: it lives beside the bundle, written with the same
 * owner and mode, so whoever can change it could change the bundle itself.
 */
import { readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Script } from 'node:vm';
import { IMPORTER, STARTED, type Bridge } from './launcher-bridge';

const dir = dirname(fileURLToPath(import.meta.url));
const file = join(dir, 'cli-main.cjs');
/** per Node version, so two Nodes on one box do not take turns rejecting each other's */
const cacheFile = join(dir, `cli-main.${process.version}.v8cache`);

let cachedData: Buffer | undefined;
try {
  cachedData = readFileSync(cacheFile);
} catch {
  // no cache yet
}
// the same wrapper Node gives a CommonJS file
const source = `(function (exports, require, module, __filename, __dirname) {${readFileSync(file, 'utf8')}\n})`;
const script = new Script(source, { filename: file, cachedData });

const bridge = globalThis as Bridge;
// an installed package (under node_modules) is not ours to write: it starts without a cache
const installed = dir.split(sep).includes('node_modules');
if (process.argv[2] === 'serve' && !installed && (!cachedData || script.cachedDataRejected)) {
  bridge[STARTED] = () => {
    bridge[STARTED] = undefined;
    const tmp = `${cacheFile}.${process.pid}.tmp`;
    try {
      writeFileSync(tmp, script.createCachedData(), { mode: 0o644 });
      renameSync(tmp, cacheFile);
    } catch {
      rmSync(tmp, { force: true }); // read-only install: starts compile as before
    }
  };
}
bridge[IMPORTER] = (url) => import(url);
const module = { exports: {}, id: file, filename: file, loaded: false };
(script.runInThisContext() as (...a: unknown[]) => void).call(
  module.exports,
  module.exports,
  createRequire(file),
  module,
  file,
  dir,
);
