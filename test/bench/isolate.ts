/**
 * Isolate bench: req/s of the same two routes served by one host process with the routes
 * in-process (`host`), in workerd and in Deno (`isolate: workerd | deno`, bindings over
 * stateDir/bindings.sock), and each one's cold start (spawn of `ballast serve` to the first 200).
 *   - the DB route `GET /notification/agent`: token check + one DB read, both over the binding
 *     socket when isolated;
 *   - the SYSTEM-hop route `GET /kerberos/ticket/list`: token check + one replayed klist through
 *     SYSTEM + parsing.
 * Ratios against the in-process host measured in the same run are the result (targets: DB ≥ 0.5,
 * SYSTEM ≥ 0.4, cold start ≤ 1.5 s); nothing is asserted. Standalone:
 * `npx vite-node test/bench/isolate.ts` (after `node build.mjs`); `isolateBench()` returns the rows
 * (imported under `npm run bench`, the module only exports).
 */
import { mkdtempSync, writeFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { benchConfig, createTokenVia, freePort, load, rssKb, startHostProcess, stop, waitFor, type Load } from './lib';

export type IsolateBenchRuntime = 'host' | 'workerd' | 'deno';

export interface IsolateBenchRow {
  runtime: IsolateBenchRuntime;
  route: string;
  rps: number;
  p50: number;
  p99: number;
  errors: number;
  /** rps / the in-process host's rps on the same route (1 for the host itself) */
  ratio: number;
  /** spawn of `ballast serve` to the first 200 of the DB route (the three start one after the other), ms */
  coldStartMs: number;
  /** the host process's RSS after the load, MB (the isolate's own process not included) */
  hostRssMb: number;
}

export const DB_ROUTE = '/api/v2/notification/agent';
export const SYSTEM_ROUTE = '/api/v2/kerberos/ticket/list';
const RUNTIMES: IsolateBenchRuntime[] = ['host', 'workerd', 'deno'];

const KLIST = {
  source: 'test/bench/isolate.ts: a TGT listing (shape of fixtures/klist/local-tgt.yaml)',
  argv: ['/usr/bin/klist'],
  code: 0,
  stdout: [
    'Ticket cache: FILE:/tmp/krb5cc_0',
    'Default principal: alice@EXAMPLE.TEST',
    '',
    'Valid starting     Expires            Service principal',
    '11/25/26 22:13:20  11/26/26 08:13:20  krbtgt/EXAMPLE.TEST@EXAMPLE.TEST',
    '\trenew until 12/02/26 22:13:20',
    '',
  ].join('\n'),
  stderr: '',
};

interface Started {
  url: string;
  headers: Record<string, string>;
  coldStartMs: number;
  pid: number;
  stop(): Promise<void>;
}

/** One `ballast serve` process with the routes in `runtime`; cold start = spawn to first 200. */
async function start(runtime: IsolateBenchRuntime): Promise<Started> {
  const port = await freePort();
  // the replayed klist for the SYSTEM-hop route
  const fx = mkdtempSync(join(tmpdir(), 'ballast-bench-klist-'));
  writeFileSync(join(fx, 'klist.yaml'), stringify(KLIST));
  const config = benchConfig(port, {
    ...(runtime === 'host' ? {} : { isolate: runtime }),
    system: { mode: 'replay', fixtures: [fx] },
  });
  const cleanup = () => {
    rmSync(config.dir, { recursive: true, force: true });
    rmSync(fx, { recursive: true, force: true });
  };
  const headers = { token: createTokenVia(config.file) };
  const url = `http://127.0.0.1:${port}`;
  const t0 = performance.now();
  const host = startHostProcess(config.file);
  let coldStartMs: number;
  try {
    await waitFor(`${url}${DB_ROUTE}`, headers, 60_000);
    coldStartMs = performance.now() - t0;
    const sys = await fetch(`${url}${SYSTEM_ROUTE}`, { headers });
    if (sys.status !== 200) throw new Error(`${runtime}: ${SYSTEM_ROUTE} answered ${sys.status}: ${await sys.text()}`);
  } catch (e) {
    await stop(host);
    cleanup();
    throw e;
  }
  return {
    url,
    headers,
    coldStartMs,
    pid: host.pid ?? 0,
    async stop() {
      await stop(host);
      cleanup();
    },
  };
}

/**
 * The rows: one per runtime and route, host first. The three hosts run side by side and are
 * loaded in turn, round after round, so that each ratio compares runs on a similarly busy machine.
 */
export async function isolateBench(
  o: { duration?: number; connections?: number; rounds?: number } = {},
): Promise<IsolateBenchRow[]> {
  const opts = { duration: o.duration ?? 3, connections: o.connections ?? 16 };
  const rounds = o.rounds ?? 2;
  const started = new Map<IsolateBenchRuntime, Started>();
  try {
    for (const r of RUNTIMES) started.set(r, await start(r));
    const loads = new Map<string, Load[]>();
    for (const s of started.values())
      for (const route of [DB_ROUTE, SYSTEM_ROUTE])
        await load(`${s.url}${route}`, s.headers, { duration: 1, connections: opts.connections });
    for (let i = 0; i < rounds; i++)
      for (const route of [DB_ROUTE, SYSTEM_ROUTE])
        for (const [r, s] of started) {
          const key = `${r} ${route}`;
          loads.set(key, [...(loads.get(key) ?? []), await load(`${s.url}${route}`, s.headers, opts)]);
        }
    const avg = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
    const rows: IsolateBenchRow[] = [];
    for (const [r, s] of started)
      for (const route of [DB_ROUTE, SYSTEM_ROUTE]) {
        const l = loads.get(`${r} ${route}`) ?? [];
        const base = avg((loads.get(`host ${route}`) ?? []).map((x) => x.rps));
        const rps = avg(l.map((x) => x.rps));
        rows.push({
          runtime: r,
          route,
          rps,
          p50: l.at(-1)?.p50 ?? NaN,
          p99: l.at(-1)?.p99 ?? NaN,
          errors: l.reduce((n, x) => n + x.errors + x.non2xx, 0),
          ratio: base > 0 ? rps / base : NaN,
          coldStartMs: s.coldStartMs,
          hostRssMb: rssKb(s.pid) / 1024,
        });
      }
    return rows;
  } finally {
    for (const s of started.values()) await s.stop();
  }
}

export function formatIsolateRows(rows: IsolateBenchRow[]): string {
  const lines = [
    'routes in-process (host) vs in workerd vs in Deno (bindings over stateDir/bindings.sock), 16 connections, loaded in turn',
  ];
  for (const r of rows)
    lines.push(
      `  ${r.runtime.padEnd(8)} ${r.route.padEnd(30)} ${r.rps.toFixed(0).padStart(7)} req/s  x${r.ratio.toFixed(2)}  p50 ${r.p50} ms  p99 ${r.p99} ms  errors ${r.errors}  cold start ${r.coldStartMs.toFixed(0)} ms  host RSS ${r.hostRssMb.toFixed(0)} MB`,
    );
  return lines.join('\n');
}

// vite-node drops the script from process.argv, so "run directly" is told apart from "imported by
// run.ts under `npm run bench`" by npm's lifecycle name: only the latter is `bench`.
if (process.env.npm_lifecycle_event !== 'bench') {
  const rows = await isolateBench();
  console.log(formatIsolateRows(rows));
}
