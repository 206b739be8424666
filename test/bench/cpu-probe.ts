/**
 * CPU per request, by process: `npx vite-node test/bench/cpu-probe.ts [host|workerd|deno]…`.
 * Each runtime's host (and its isolate) serves a fixed number of requests of the DB and the
 * SYSTEM-hop routes; the probe reads each process's CPU time (utime+stime, /proc) before and
 * after. Unlike req/s this hardly moves with what else the machine runs, so it is how a change
 * to the edge path is measured step by step (docs/testing-and-performance.md).
 */
import {
  copyFileSync,
  cpSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  createTokenVia,
  repo,
  DB_ROUTE,
  freePort,
  load,
  nodeArgsFrom,
  routeBenchConfig,
  startBareServer,
  startHostProcess,
  stop,
  SYSTEM_ROUTE,
  waitFor,
} from './lib';

const TICK_US = 1e6 / 100; // USER_HZ

function cpuUs(pid: number): number {
  const f = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = f.slice(f.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) * TICK_US;
}

function descendants(pid: number): number[] {
  const out: number[] = [];
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const s = readFileSync(`/proc/${d}/stat`, 'utf8');
      const ppid = Number(s.slice(s.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid === pid) out.push(Number(d), ...descendants(Number(d)));
    } catch {
      // gone
    }
  }
  return out;
}

/**
 * PROBE_APP=empty: the isolate runs an app that answers `[]` to every request without a binding
 * call (a copy of dist whose app.mjs is only that), so what is measured is the hop alone: the
 * host's request path and forwarding, the isolate runtime's HTTP and one JS call. What the real
 * routes may cost in an isolate is what this leaves (docs/testing-and-performance.md, "What is
 * left"). workerd only: the Deno entry bundles the app into deno.mjs.
 */
function emptyAppTree(): { cli: string; remove(): void } {
  const root = mkdtempSync(join(tmpdir(), 'ballast-probe-empty-'));
  cpSync(join(repo, 'dist'), join(root, 'dist'), { recursive: true });
  writeFileSync(
    join(root, 'dist/app.mjs'),
    "export default { fetch: () => new Response('[]', { headers: { 'content-type': 'application/json; charset=utf-8' } }) };\n",
  );
  copyFileSync(join(repo, 'package.json'), join(root, 'package.json'));
  symlinkSync(join(repo, 'node_modules'), join(root, 'node_modules'));
  return { cli: join(root, 'dist/host/cli.mjs'), remove: () => rmSync(root, { recursive: true, force: true }) };
}
const emptyApp = process.env.PROBE_APP === 'empty';
if (process.env.PROBE_APP !== undefined && !emptyApp) throw new Error('PROBE_APP: only `empty` is known');

const runtimes = process.argv.slice(2).filter((a) => ['host', 'workerd', 'deno'].includes(a));
const amount = Number(process.env.PROBE_REQUESTS ?? 20000);
const connections = Number(process.env.PROBE_CONNECTIONS ?? 16);
// PROBE_ROUTES=db or =system: one route only (a profile of one route)
const ROUTES = [DB_ROUTE, SYSTEM_ROUTE].filter(
  (r) => !process.env.PROBE_ROUTES || (r === DB_ROUTE ? 'db' : 'system') === process.env.PROBE_ROUTES,
);
for (const runtime of runtimes.length ? runtimes : ['host', 'workerd', 'deno']) {
  const port = await freePort();
  const config = routeBenchConfig(port, runtime as 'host' | 'workerd' | 'deno');
  const headers = { token: createTokenVia(config.file) };
  const url = `http://127.0.0.1:${port}`;
  // PROBE_NODE_ARGS: e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof` to profile the host under the load
  if (emptyApp && runtime !== 'workerd') throw new Error('PROBE_APP=empty: workerd only');
  const tree = emptyApp ? emptyAppTree() : undefined;
  const host = startHostProcess(config.file, nodeArgsFrom('PROBE_NODE_ARGS'), tree?.cli);
  try {
    await waitFor(`${url}${DB_ROUTE}`, headers, 60_000);
    const measure = async (who: string, base: string, pids: number[]) => {
      for (const route of ROUTES) {
        await load(`${base}${route}`, headers, { amount: 3000, connections });
        const before = pids.map(cpuUs);
        const l = await load(`${base}${route}`, headers, { amount, connections });
        const per = pids.map((p, i) => (cpuUs(p) - before[i]) / amount);
        const total = per.reduce((a, b) => a + b, 0);
        console.log(
          `${who.padEnd(8)} ${route.padEnd(30)} ${l.rps.toFixed(0).padStart(6)} req/s  CPU/request ${total.toFixed(0)} µs (${per.map((x) => x.toFixed(0)).join(' + ')})  errors ${l.errors + l.non2xx}`,
        );
      }
    };
    await measure(runtime, url, [host.pid!, ...descendants(host.pid!)]);
    if (runtime === 'host') {
      // the bare node:http baseline of `npm run bench` on the same DB file, same answers
      const bodies: Record<string, unknown> = {};
      for (const path of [DB_ROUTE, SYSTEM_ROUTE])
        bodies[path] = await (await fetch(`${url}${path}`, { headers })).json();
      writeFileSync(join(config.dir, 'bodies.json'), JSON.stringify(bodies));
      const barePort = await freePort();
      const bare = await startBareServer(barePort, join(config.dir, 'ballast.db'), join(config.dir, 'bodies.json'));
      try {
        await measure('bare', `http://127.0.0.1:${barePort}`, [bare.pid!]);
      } finally {
        await stop(bare);
      }
    }
  } finally {
    await stop(host);
    config.cleanup();
    tree?.remove();
  }
}
