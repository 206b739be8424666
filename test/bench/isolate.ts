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
  /** spawn of `ballast serve` to the first 200 of the DB route, ms */
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

async function one(
  runtime: IsolateBenchRuntime,
  o: { duration: number; connections: number },
): Promise<{ loads: Record<string, Load>; coldStartMs: number; hostRssMb: number }> {
  const port = await freePort();
  // the replayed klist for the SYSTEM-hop route
  const fx = mkdtempSync(join(tmpdir(), 'ballast-bench-klist-'));
  writeFileSync(join(fx, 'klist.yaml'), stringify(KLIST));
  const config = benchConfig(port, {
    ...(runtime === 'host' ? {} : { isolate: runtime }),
    system: { mode: 'replay', fixtures: [fx] },
  });
  const token = createTokenVia(config.file);
  const headers = { token };
  const t0 = performance.now();
  const host = startHostProcess(config.file);
  try {
    await waitFor(`http://127.0.0.1:${port}${DB_ROUTE}`, headers, 60_000);
    const coldStartMs = performance.now() - t0;
    const sys = await fetch(`http://127.0.0.1:${port}${SYSTEM_ROUTE}`, { headers });
    if (sys.status !== 200) throw new Error(`${runtime}: ${SYSTEM_ROUTE} answered ${sys.status}: ${await sys.text()}`);
    const loads: Record<string, Load> = {};
    for (const route of [DB_ROUTE, SYSTEM_ROUTE]) {
      await load(`http://127.0.0.1:${port}${route}`, headers, { duration: 1, connections: o.connections });
      loads[route] = await load(`http://127.0.0.1:${port}${route}`, headers, o);
    }
    return { loads, coldStartMs, hostRssMb: rssKb(host.pid ?? 0) / 1024 };
  } finally {
    await stop(host);
    rmSync(config.dir, { recursive: true, force: true });
    rmSync(fx, { recursive: true, force: true });
  }
}

/** The rows: one per runtime and route, host first. */
export async function isolateBench(o: { duration?: number; connections?: number } = {}): Promise<IsolateBenchRow[]> {
  const opts = { duration: o.duration ?? 5, connections: o.connections ?? 16 };
  const measured = new Map<IsolateBenchRuntime, Awaited<ReturnType<typeof one>>>();
  for (const r of RUNTIMES) measured.set(r, await one(r, opts));
  const rows: IsolateBenchRow[] = [];
  for (const r of RUNTIMES) {
    const m = measured.get(r)!;
    for (const route of [DB_ROUTE, SYSTEM_ROUTE]) {
      const l = m.loads[route];
      const base = measured.get('host')!.loads[route].rps;
      rows.push({
        runtime: r,
        route,
        rps: l.rps,
        p50: l.p50,
        p99: l.p99,
        errors: l.errors + l.non2xx,
        ratio: base > 0 ? l.rps / base : NaN,
        coldStartMs: m.coldStartMs,
        hostRssMb: m.hostRssMb,
      });
    }
  }
  return rows;
}

export function formatIsolateRows(rows: IsolateBenchRow[]): string {
  const lines = [
    'routes in-process (host) vs in workerd vs in Deno (bindings over stateDir/bindings.sock), 16 connections',
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
