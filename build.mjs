// Builds one ESM bundle per route (platform neutral, no node:*), an all-routes dist/app.mjs for
// embedding, dist/manifest.json, dist/openapi.json, and the Node host (dist/host/cli.mjs).
import * as esbuild from 'esbuild';
import {
  readdirSync,
  statSync,
  existsSync,
  mkdirSync,
  writeFileSync,
  rmSync,
  readFileSync,
  cpSync,
  renameSync,
} from 'node:fs';
import { createRequire } from 'node:module';
import { setTimeout as sleep } from 'node:timers/promises';
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { join, relative, resolve, dirname } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = dirname(fileURLToPath(import.meta.url));
const dist = join(root, 'dist');
/** Per-route budget: the entry plus every shared chunk it loads. zod alone is ~90 KB. */
const ROUTE_BUDGET_BYTES = 400 * 1024;
const APP_BUDGET_BYTES = 3 * 1024 * 1024;
/** what the host bundle leaves in node_modules (see the host build below) */
const HOST_EXTERNAL = ['better-sqlite3', 'node-pty', 'ajv', 'ajv-formats', 'nodemailer'];

function walk(dir, pred, out = []) {
  if (!existsSync(dir)) return out;
  for (const name of readdirSync(dir).sort()) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) walk(p, pred, out);
    else if (pred(p)) out.push(p);
  }
  return out;
}

/**
 * The CLI bundle runs from V8's code cache (runtime/launch.ts), where import() fails on Node 20:
 * any left in it, but importModule's own fallback (never reached there), stops the build.
 */
export function assertNoDynamicImport(text, name) {
  for (const m of text.matchAll(/(?<![\w$.'"`])import\s*\(/g)) {
    // esbuild may rename importModule's parameter
    if (/function importModule\(\w+\) \{\n[^}]*$/.test(text.slice(Math.max(0, m.index - 200), m.index))) continue;
    const line = text.slice(0, m.index).split('\n').length;
    throw new Error(`${name}:${line} calls import(): use importModule (runtime/launcher-bridge.ts)`);
  }
}

/** Route files: handlers/<area>/routes/<name>.ts, one route each. */
export function routeFiles() {
  return walk(
    join(root, 'handlers'),
    (p) => /\/handlers\/[a-z0-9-]+\/routes\/[^/]+\.ts$/.test(p) && !p.endsWith('.d.ts'),
  );
}

/** `handlers/kerberos/routes/conf-get.ts` → { area: 'kerberos', operationId: 'kerberos_confGet' } */
export function routeIdentity(file) {
  const m = /\/handlers\/([a-z0-9-]+)\/routes\/([^/]+)\.ts$/.exec(file);
  const camel = m[2].replace(/[-_]+(.)/g, (_, c) => c.toUpperCase());
  return { area: m[1], operationId: `${m[1]}_${camel}` };
}

/** The source of a route and of every file of its own area it imports (relative imports). */
function areaSources(file, area, seen = new Set()) {
  if (seen.has(file) || !existsSync(file)) return seen;
  seen.add(file);
  const src = readFileSync(file, 'utf8');
  for (const m of src.matchAll(/from '(\.{1,2}\/[^']+)'/g)) {
    const target = resolve(dirname(file), m[1]) + '.ts';
    if (target.includes(`/handlers/${area}/`)) areaSources(target, area, seen);
  }
  return seen;
}

/** Error statuses a route's code (and its area's helpers it imports) can answer, beyond 400/401/403/404/500. */
export function routeStatuses(file, area) {
  const src = [...areaSources(file, area)].map((f) => readFileSync(f, 'utf8')).join('\n');
  const s = new Set();
  if (/conflict\(|'conflict'|\b409\b/.test(src)) s.add(409);
  if (/\bsystem\b|\.exec\(|\.op\(|commandFailed|badGateway|command_failed/.test(src)) {
    s.add(501); // not_recorded on the demo appliance
    s.add(502);
    s.add(503);
    s.add(504);
  }
  if (/badGateway|bad_gateway|ParseError|parse\//.test(src)) s.add(502);
  return [...s].sort();
}

/** Tag descriptions: the first paragraph of handlers/<area>/README.md. */
function areaDescriptions(areas) {
  const out = {};
  for (const a of areas) {
    const f = join(root, 'handlers', a, 'README.md');
    if (!existsSync(f)) continue;
    const paras = readFileSync(f, 'utf8')
      .split(/\n\s*\n/)
      .map((p) => p.trim())
      .filter((p) => p && !p.startsWith('#'));
    const title = /^#\s+(.*)$/m.exec(readFileSync(f, 'utf8'))?.[1];
    if (paras[0]) out[a] = `${title ? `**${title}.** ` : ''}${paras[0].replace(/\s*\n\s*/g, ' ')}`;
  }
  out.notification ??=
    'Notification agents (mail, webhook…) that deliver the appliance events, and the event list itself.';
  return out;
}

/** dist/docs: Swagger UI (swagger-ui-dist) and the page's own files from package/docs. */
function copyDocsAssets() {
  const docs = join(dist, 'docs');
  mkdirSync(docs, { recursive: true });
  let ui;
  try {
    ui = dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));
  } catch {
    console.warn('  swagger-ui-dist is not installed: no docs page (npm install)');
    return;
  }
  for (const f of ['swagger-ui-bundle.js', 'swagger-ui.css', 'LICENSE'])
    cpSync(join(ui, f), join(docs, f === 'LICENSE' ? 'swagger-ui-LICENSE' : f));
  for (const f of readdirSync(join(root, 'package/docs'))) cpSync(join(root, 'package/docs', f), join(docs, f));
}

/**
 * The demo answers of every route's examples (each run on a fresh demo appliance, the 2xx
 * answers go in the document), made stable (times, inode numbers: stableExampleValue) so two
 * builds of one commit write the same document. Running them takes ~10 s; the result is kept in
 * var/cache/ under a hash of everything it depends on (the route bundles, the host bundle that
 * runs them, the manifest, the demo fixtures), so a build that changes none of them reuses it.
 */
async function exampleAnswers() {
  // this function's own text too: a change in what is kept makes the cached answers stale
  const hash = createHash('sha256').update(exampleAnswers.toString());
  const inputs = [
    ...walk(join(dist, 'routes'), () => true),
    join(dist, 'host/demo-examples.mjs'),
    join(dist, 'manifest.json'),
    ...walk(join(root, 'fixtures/demo'), () => true),
  ];
  for (const f of inputs)
    hash
      .update(`${relative(root, f)}\0`)
      .update(readFileSync(f))
      .update('\0');
  const key = hash.digest('hex');
  const cacheFile = join(root, 'var/cache/example-answers.json');
  try {
    const cached = JSON.parse(readFileSync(cacheFile, 'utf8'));
    if (cached.key === key) return cached.answers;
  } catch {
    // no cache yet, or an unreadable one: run the examples
  }
  const t0 = performance.now();
  const { runDemoExamples, stableExampleValue } = await import(
    pathToFileURL(join(dist, 'host/demo-examples.mjs')).href
  );
  const answers = {};
  // only what the document shows (a 2xx answer with a body): an error's body carries its
  // request's random id, which would make two builds of dist/app.mjs differ
  for (const run of await runDemoExamples(root, dist)) {
    if (run.status < 200 || run.status >= 300 || run.status === 204) continue;
    (answers[run.route.operationId] ??= [])[run.index] = { status: run.status, body: stableExampleValue(run.body) };
  }
  mkdirSync(dirname(cacheFile), { recursive: true });
  writeFileSync(`${cacheFile}.tmp`, JSON.stringify({ key, answers }));
  renameSync(`${cacheFile}.tmp`, cacheFile);
  console.log(`  ran every example on a fresh demo in ${Math.round(performance.now() - t0)} ms`);
  return answers;
}

/**
 * package/openapi.d.ts: the typed client's paths, generated by openapi-typescript from the
 * document (built, not committed; git-ignored). Rewritten only when the document changed (its
 * hash is in the header): its mtime must not make every later build look stale, and the
 * generation takes over a second.
 */
async function writeClientTypes(docText) {
  const sum = createHash('sha256').update(docText).digest('hex');
  const header = `/**\n * Generated by openapi-typescript from dist/openapi.json (node build.mjs). Do not edit.\n * document sha256: ${sum}\n */\n\n`;
  const typesFile = join(root, 'package/openapi.d.ts');
  if (existsSync(typesFile) && readFileSync(typesFile, 'utf8').startsWith(header)) return;
  const { default: openapiTS, astToString } = await import('openapi-typescript');
  writeFileSync(typesFile, header + astToString(await openapiTS(JSON.parse(docText))));
}

/**
 * `--package` (npm prepack, `npm run build:package`): the published package's declarations,
 * emitted by tsc (tsconfig.dist.json) into dist/types, and the .d.ts (ESM) and .d.cts
 * (CommonJS) beside each export. Not needed to run or test the checkout: only to pack it.
 */
async function packageExtras() {
  const t0 = performance.now();
  rmSync(join(dist, 'types'), { recursive: true, force: true });
  execFileSync(
    process.execPath,
    [join(root, 'node_modules/typescript/bin/tsc'), '-p', join(root, 'tsconfig.dist.json')],
    { stdio: 'inherit' },
  );
  cpSync(join(root, 'package/openapi.d.ts'), join(dist, 'types/package/openapi.d.ts'));
  withJsExtensions(join(dist, 'types'));
  withCommonJsTwins(join(dist, 'types'));
  for (const [file, target, hasDefault] of [
    ['app', './types/package/app', true],
    ['client', './types/package/client', false],
    ['host/index', '../types/runtime/index', false],
  ]) {
    writeFileSync(
      join(dist, `${file}.d.ts`),
      `export * from '${target}.js';\n${hasDefault ? `export { default } from '${target}.js';\n` : ''}`,
    );
    // CommonJS: the app's module object is the app itself (its fetch), see the app.cjs build
    writeFileSync(
      join(dist, `${file}.d.cts`),
      `export * from '${target}.cjs';\n${hasDefault ? `import type { BallastApp } from '${target}.cjs';\nexport declare const fetch: BallastApp['fetch'];\n` : ''}`,
    );
  }
  console.log(`package extras (declarations) in ${Math.round(performance.now() - t0)} ms`);
}

/**
 * Beside each declaration `x.d.ts` (ESM: the package is `type: module`), a `x.d.cts` whose
 * imports name `.cjs`: what a CommonJS consumer (`require`, node16 from CJS) resolves, so its
 * types describe the CommonJS build it loads, not the ES module.
 */
function withCommonJsTwins(dir) {
  for (const f of readdirSync(dir, { recursive: true })) {
    const file = join(dir, String(f));
    if (!file.endsWith('.d.ts')) continue;
    const text = readFileSync(file, 'utf8').replace(
      /((?:import|export)\s[^'"]*?from\s*|import\(\s*)(['"])(\.{1,2}\/[^'"]*)\.js\2/g,
      '$1$2$3.cjs$2',
    );
    writeFileSync(file.replace(/\.d\.ts$/, '.d.cts'), text);
  }
}

/**
 * Relative imports in the emitted declarations get the `.js` (or `/index.js`) that Node's own
 * resolution needs: the sources import without extensions (bundler resolution), and a consumer
 * with `moduleResolution: node16/nodenext` resolves a declaration's imports as Node would.
 */
function withJsExtensions(dir) {
  const spec = /((?:import|export)\s[^'"]*?from\s*|import\(\s*)(['"])(\.{1,2}\/[^'"]*)\2/g;
  for (const f of readdirSync(dir, { recursive: true })) {
    const file = join(dir, String(f));
    if (!file.endsWith('.d.ts')) continue;
    const text = readFileSync(file, 'utf8');
    const out = text.replace(spec, (all, head, q, rel) => {
      if (/\.(m?js|json)$/.test(rel)) return all;
      const target = join(dirname(file), rel);
      const withExt = existsSync(`${target}.d.ts`)
        ? `${rel}.js`
        : existsSync(join(target, 'index.d.ts'))
          ? `${rel}/index.js`
          : rel;
      return `${head}${q}${withExt}${q}`;
    });
    if (out !== text) writeFileSync(file, out);
  }
}

/**
 * dist/migrations/NNNN_<name>.sql, one per entry of runtime/db/migrations.ts (the single source),
 * for `wrangler d1 migrations apply` or any sqlite3 client. Each file is the migration's SQL as
 * the host applies it, plus the schema_migrations row the host's migrate() records, so a database
 * made from these files is one the Node host opens without re-applying anything.
 */
async function writeSqlMigrations() {
  const out = await esbuild.build({
    entryPoints: [join(root, 'runtime/db/migrations.ts')],
    bundle: true,
    format: 'esm',
    platform: 'neutral',
    write: false,
    logLevel: 'warning',
  });
  const url = `data:text/javascript;base64,${Buffer.from(out.outputFiles[0].text).toString('base64')}`;
  const { migrations } = await import(url);
  const dir = join(dist, 'migrations');
  mkdirSync(dir, { recursive: true });
  for (const m of migrations) {
    const slug = m.name
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, '_')
      .replace(/^_|_$/g, '')
      .slice(0, 48)
      .replace(/_$/, '');
    const file = `${String(m.version).padStart(4, '0')}_${slug}.sql`;
    // verbatim (indentation included): sqlite_master keeps the text, so the schemas compare equal
    const body = m.sql.replace(/^\n/, '').trimEnd();
    const name = m.name.replace(/'/g, "''");
    writeFileSync(
      join(dir, file),
      [
        `-- Migration ${m.version}: ${m.name}`,
        '-- Generated by build.mjs from runtime/db/migrations.ts. Do not edit.',
        'CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL);',
        body,
        `INSERT INTO schema_migrations (version, name, applied_at) VALUES (${m.version}, '${name}', CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER));`,
        '',
      ].join('\n'),
    );
  }
}

function newestMtime(paths) {
  let t = 0;
  for (const p of paths) t = Math.max(t, statSync(p).mtimeMs);
  return t;
}

function isStale() {
  const stamp = join(dist, '.build-stamp');
  if (!existsSync(stamp) || !existsSync(join(root, 'package/openapi.d.ts'))) return true;
  const sources = [
    // the areas' READMEs give the document its tag descriptions
    ...walk(join(root, 'handlers'), (p) => p.endsWith('.ts') || p.endsWith('.md')),
    // the demo's answers to the examples are in the document
    ...walk(join(root, 'fixtures/demo'), () => true),
    ...walk(join(root, 'runtime'), (p) => p.endsWith('.ts')),
    // package/openapi.d.ts is generated from the build, not a source of it
    ...walk(join(root, 'package'), (p) => !p.endsWith('openapi.d.ts')),
    join(root, 'build.mjs'),
    join(root, 'package.json'),
  ];
  return newestMtime(sources) > statSync(stamp).mtimeMs;
}

const nodeBuiltinGuard = {
  name: 'no-node-builtins',
  setup(build) {
    build.onResolve(
      { filter: /^node:|^(fs|path|child_process|os|net|http|https|crypto|stream|url|util|events|buffer|process)$/ },
      (args) => ({
        errors: [
          {
            text: `route code must not import ${args.path} (imported by ${relative(root, args.importer)}); ask the host through a binding`,
          },
        ],
      }),
    );
  },
};

const common = {
  bundle: true,
  format: 'esm',
  platform: 'neutral',
  mainFields: ['module', 'main'],
  conditions: ['worker', 'browser', 'import'],
  target: 'es2022',
  minify: true,
  legalComments: 'none',
  metafile: true,
  logLevel: 'warning',
  plugins: [nodeBuiltinGuard],
};

function fmt(n) {
  return n >= 1024 * 1024 ? `${(n / 1024 / 1024).toFixed(2)} MB` : `${(n / 1024).toFixed(1)} KB`;
}

async function build() {
  const t0 = performance.now();
  rmSync(dist, { recursive: true, force: true });
  mkdirSync(dist, { recursive: true });
  const routes = routeFiles();
  if (routes.length === 0) throw new Error('no route files under handlers/*/routes/');

  // Route bundles: one entry each, shared chunks split out so the host loads zod etc. once.
  const entryPoints = Object.fromEntries(
    routes.map((f) => [
      relative(join(root, 'handlers'), f)
        .replace(/\/routes\//, '/')
        .replace(/\.ts$/, ''),
      f,
    ]),
  );
  const r = await esbuild.build({
    ...common,
    entryPoints,
    outdir: join(dist, 'routes'),
    outExtension: { '.js': '.mjs' },
    splitting: true,
    chunkNames: 'chunks/[name]-[hash]',
  });
  const outputs = r.metafile.outputs;
  const closure = (out, seen = new Set()) => {
    if (seen.has(out)) return 0;
    seen.add(out);
    let size = outputs[out].bytes;
    for (const imp of outputs[out].imports) {
      if (imp.external) throw new Error(`${out} imports external ${imp.path}: route bundles must be self-contained`);
      size += closure(imp.path, seen);
    }
    return size;
  };
  const bundles = [];
  const over = [];
  for (const [out, meta] of Object.entries(outputs)) {
    if (!meta.entryPoint) continue;
    const total = closure(out);
    bundles.push({ out, entry: meta.entryPoint, own: meta.bytes, total });
    if (total > ROUTE_BUDGET_BYTES) over.push(`${out} ${fmt(total)}`);
  }

  // The Deno entry (isolate: deno): serves dist/app.mjs to the host's framed hop; no node: imports.
  await esbuild.build({
    ...common,
    metafile: false,
    minify: false,
    entryPoints: [join(root, 'runtime/isolate/deno-entry.ts')],
    outfile: join(dist, 'deno.mjs'),
  });

  // SQL migrations for other runtimes (D1/wrangler style), from runtime/db/migrations.ts.
  await writeSqlMigrations();

  // The Node host: pure-JS dependencies are bundled in (one file to load: resolving and compiling
  // zod's and yaml's hundreds of module files was ~60 ms of every cold start); native modules
  // (better-sqlite3, node-pty) cannot be, and the ones loaded only on first use (ajv for the
  // compose check, nodemailer for SMTP agents) stay in node_modules so a start never reads them.
  await esbuild.build({
    entryPoints: {
      // the CLI's launcher: runs cli-main.cjs (below) from V8's code cache (runtime/launch.ts)
      cli: join(root, 'runtime/launch.ts'),
      index: join(root, 'runtime/index.ts'),
      'demo-examples': join(root, 'runtime/demo-examples.ts'),
    },
    // the bundled CommonJS packages (yaml) require() Node's built-ins: give the ESM bundle a require
    banner: {
      js: "#!/usr/bin/env node\nimport { createRequire as __hostRequire } from 'node:module';\nconst require = __hostRequire(import.meta.url);",
    },
    outdir: join(dist, 'host'),
    outExtension: { '.js': '.mjs' },
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    external: HOST_EXTERNAL,
    sourcemap: true,
    logLevel: 'warning',
  });
  // The CLI itself, as CommonJS: a vm.Script can take V8's code cache, an ES module cannot on
  // Node 20. Code run from a cache loses import() there, so none may be left in it (the route
  // bundles are imported through runtime/launcher-bridge.ts). ballast/host's CommonJS twin
  // (`require('ballast/host')`) is built the same way.
  await esbuild.build({
    entryPoints: { 'cli-main': join(root, 'runtime/cli.ts'), index: join(root, 'runtime/index.ts') },
    define: { 'import.meta.url': '__hostUrl' },
    banner: { js: "const __hostUrl = require('node:url').pathToFileURL(__filename).href;" },
    outdir: join(dist, 'host'),
    outExtension: { '.js': '.cjs' },
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    external: HOST_EXTERNAL,
    sourcemap: true,
    logLevel: 'warning',
  });
  assertNoDynamicImport(readFileSync(join(dist, 'host/cli-main.cjs'), 'utf8'), 'dist/host/cli-main.cjs');

  // The typed client (ballast/client): openapi-fetch bundled in, types from package/openapi.d.ts.
  await esbuild.build({
    ...common,
    plugins: [],
    entryPoints: [join(root, 'package/client.ts')],
    outfile: join(dist, 'client.mjs'),
    minify: false,
  });
  await esbuild.build({
    ...common,
    plugins: [],
    metafile: false,
    format: 'cjs',
    entryPoints: [join(root, 'package/client.ts')],
    outfile: join(dist, 'client.cjs'),
    minify: false,
  });

  // The docs page's assets (served by the host at <basePath>/docs, no CDN): Swagger UI's bundle.
  copyDocsAssets();

  // Manifest: read back from the built bundles themselves, so it can never disagree with them.
  const manifest = [];
  for (const b of bundles) {
    const mod = await import(pathToFileURL(join(root, b.out)).href);
    const meta = mod.default?.meta;
    if (!meta || typeof mod.default.fetch !== 'function')
      throw new Error(`${b.entry} does not export default route(...)`);
    manifest.push({
      ...meta,
      operationId: routeIdentity(join(root, b.entry)).operationId,
      area: routeIdentity(join(root, b.entry)).area,
      bundle: relative(dist, join(root, b.out)),
      bytes: b.total,
    });
  }
  manifest.sort((x, y) => (x.path === y.path ? x.method.localeCompare(y.method) : x.path.localeCompare(y.path)));
  const seen = new Set();
  for (const m of manifest) {
    const k = `${m.method} ${m.path}`;
    if (seen.has(k)) throw new Error(`two routes declare ${k}`);
    seen.add(k);
  }
  writeFileSync(join(dist, 'manifest.json'), JSON.stringify({ routes: manifest }, null, 2) + '\n');
  // Embeddable app: all routes in one file, no chunks, to drop into any Fetch-API server. Built
  // last: its document carries the answers the examples give on the demo, which the other bundles run.
  const answers = await exampleAnswers();
  const pkgInfo = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
  const identities = routes.map((f) => ({ ...routeIdentity(f), statuses: routeStatuses(f, routeIdentity(f).area) }));
  const docInfo = {
    title: 'Ballast storage appliance API',
    version: pkgInfo.version,
    areas: areaDescriptions([...new Set(identities.map((i) => i.area))]),
  };
  const appEntry = [
    `import { createApp } from './handlers/core/app';`,
    `import { openapi } from './handlers/core/openapi';`,
    ...routes.map((f, i) => `import r${i} from './${relative(root, f).replace(/\.ts$/, '')}';`),
    `const modules = [${routes.map((_, i) => `r${i}`).join(', ')}];`,
    `const identities = ${JSON.stringify(identities)};`,
    `const docInfo = ${JSON.stringify(docInfo)};`,
    // the demo's answers to the examples: the document the app serves is the host's, examples included
    `const exampleAnswers = ${JSON.stringify(answers)};`,
    `export const routes = modules.map((m) => m.meta);`,
    `export const openapiDocument = (answers = exampleAnswers) => openapi(modules.map((m, i) => ({ module: m, ...identities[i], answers: answers[identities[i].operationId] })), docInfo);`,
    `let doc;`,
    `const app = createApp(modules.map((m) => ({ method: m.meta.method, path: m.meta.path, sideEffects: m.meta.sideEffects, load: () => m })), { openapi: () => (doc ??= openapiDocument()) });`,
    `export const handle = (call, env, ctx) => app.handle(call, env, ctx);`,
    // the env checked once, at start: a missing binding is named then, not a 500 at request time
    `import { assertBindings } from './runtime/embed-env';`,
    `export const bind = (env) => { assertBindings(env); return { fetch: (request, ctx) => app.fetch(request, env, ctx) }; };`,
    `export default { fetch: (request, env, ctx) => app.fetch(request, env, ctx) };`,
  ].join('\n');
  const appStdin = { contents: appEntry, resolveDir: root, sourcefile: 'app-entry.ts', loader: 'ts' };
  const a = await esbuild.build({ ...common, stdin: appStdin, outfile: join(dist, 'app.mjs') });
  // its CommonJS twin, for `require('ballast')` (the exports' require condition): the module
  // object is the app (`require('ballast').fetch(request, env)`), no `default` beside it
  const cjsEntry = appEntry.replace(/^export default \{ fetch: /m, 'export const fetch = ').replace(/ \};$/, ';');
  await esbuild.build({
    ...common,
    metafile: false,
    format: 'cjs',
    stdin: { ...appStdin, contents: cjsEntry },
    outfile: join(dist, 'app.cjs'),
  });
  const appSize = Object.values(a.metafile.outputs)[0].bytes;
  if (appSize > APP_BUDGET_BYTES) over.push(`dist/app.mjs ${fmt(appSize)}`);

  const app = await import(pathToFileURL(join(dist, 'app.mjs')).href);
  const docText = JSON.stringify(app.openapiDocument(), null, 2) + '\n';
  writeFileSync(join(dist, 'openapi.json'), docText);
  await writeClientTypes(docText);

  for (const b of bundles.sort((x, y) => x.out.localeCompare(y.out))) {
    console.log(
      `  ${relative(root, b.out).padEnd(58)} ${fmt(b.own).padStart(9)}  (with shared chunks ${fmt(b.total)})`,
    );
  }
  console.log(`  ${'dist/app.mjs'.padEnd(58)} ${fmt(appSize).padStart(9)}`);
  if (over.length)
    throw new Error(
      `over budget (${fmt(ROUTE_BUDGET_BYTES)} per route, ${fmt(APP_BUDGET_BYTES)} app):\n  ${over.join('\n  ')}`,
    );
  writeFileSync(join(dist, '.build-stamp'), new Date().toISOString() + '\n');
  console.log(`built ${manifest.length} routes in ${Math.round(performance.now() - t0)} ms`);
}

/**
 * One build at a time in a tree: a build that runs while another rewrites dist/ (two test runs,
 * an editor's watcher) loads half-written chunks. The lock names its holder's pid, so one left by
 * a killed build is taken over.
 */
async function withBuildLock(f) {
  const lock = join(root, '.build.lock');
  for (let waited = 0; ; waited += 100) {
    try {
      writeFileSync(lock, String(process.pid), { flag: 'wx' });
      break;
    } catch (e) {
      if (e.code !== 'EEXIST') throw e;
      let holder = 0;
      try {
        holder = Number(readFileSync(lock, 'utf8'));
      } catch {
        continue; // released between the two calls
      }
      let alive = holder > 0;
      try {
        if (alive) process.kill(holder, 0);
      } catch {
        alive = false;
      }
      if (!alive || waited > 600_000) rmSync(lock, { force: true });
      else await sleep(100);
    }
  }
  try {
    return await f();
  } finally {
    rmSync(lock, { force: true });
  }
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  await withBuildLock(main);
}

async function main() {
  if (process.argv.includes('--package-only')) {
    await packageExtras().catch((e) => {
      console.error(`package extras failed: ${e.message}`);
      process.exitCode = 1;
    });
  } else if (process.argv.includes('--if-stale') && !isStale()) {
    console.log('dist/ is up to date');
  } else {
    await build()
      .then(() => (process.argv.includes('--package') ? packageExtras() : undefined))
      .catch((e) => {
        console.error(`build failed: ${e.message}`);
        process.exitCode = 1;
      });
  }
}
