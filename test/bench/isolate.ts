/**
 * Isolate bench: the same two routes served by one host process with the routes in-process
 * (`host`), in workerd and in Deno (`isolate: workerd | deno`: the host forwards each request to
 * the isolate with the calling token's row, and the route's own reads and commands come back over
 * stateDir/bindings.sock), and each one's cold start (spawn of `ballast serve` to the first 200).
 *   - the DB route `GET /notification/agent`: token check + one DB read;
 *   - the SYSTEM-hop route `GET /kerberos/ticket/list`: token check + one replayed klist through
 *     SYSTEM + parsing.
 * The ratios to the in-process host measured in the same round are the result (#32: DB ≥ 0.5,
 * SYSTEM-hop ≥ 0.6, p99 ≤ 3×, cold start ≤ 700 ms); nothing is asserted. Standalone:
 * `npx vite-node test/bench/isolate.ts` (after `node build.mjs`); `isolateRows()` returns the rows.
 */
import {
  createTokenVia,
  DB_ROUTE,
  freePort,
  load,
  routeBenchConfig,
  CONNECTIONS,
  ROUNDS,
  SECONDS,
  startHostProcess,
  stop,
  SYSTEM_ROUTE,
  waitFor,
  type Load,
} from './lib';
import { benchHeader } from './host';
import { printRows, ratios, type Row } from './report';

export type IsolateBenchRuntime = 'host' | 'workerd' | 'deno';

const RUNTIMES: IsolateBenchRuntime[] = ['host', 'workerd', 'deno'];

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
  const config = routeBenchConfig(port, runtime);
  const cleanup = () => config.cleanup();
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

/** Cold starts of `runtime` after the first (which leaves the CLI's code cache): spawn to first 200. */
async function coldStarts(runtime: IsolateBenchRuntime, n: number): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    const s = await start(runtime);
    out.push(s.coldStartMs);
    await s.stop();
  }
  return out;
}

/**
 * The rows (report.ts): per route, each runtime's req/s and its ratio and p99 ratio to the
 * in-process host measured in the same round; then each runtime's cold start. The three hosts
 * run side by side and are loaded in turn, round after round, with the host rows' connection
 * count, so each ratio compares runs on a similarly busy machine.
 */
export async function isolateRows(
  o: { duration?: number; connections?: number; rounds?: number } = {},
): Promise<Row[]> {
  const opts = { duration: o.duration ?? SECONDS, connections: o.connections ?? CONNECTIONS };
  const rounds = o.rounds ?? ROUNDS;
  const started = new Map<IsolateBenchRuntime, Started>();
  const loads = new Map<string, Load[]>();
  const cold = new Map<IsolateBenchRuntime, number[]>();
  try {
    for (const r of RUNTIMES) started.set(r, await start(r));
    for (const s of started.values())
      for (const route of [DB_ROUTE, SYSTEM_ROUTE])
        await load(`${s.url}${route}`, s.headers, { duration: 2, connections: opts.connections });
    for (let i = 0; i < rounds; i++)
      for (const route of [DB_ROUTE, SYSTEM_ROUTE]) {
        // alternate who goes first, as the host rows do
        const order = i % 2 === 0 ? [...started] : [...started].reverse();
        for (const [r, s] of order) {
          const l = await load(`${s.url}${route}`, s.headers, opts);
          if (l.errors + l.non2xx > 0) throw new Error(`${r} ${route}: ${l.errors} errors, ${l.non2xx} non-2xx`);
          const key = `${r} ${route}`;
          loads.set(key, [...(loads.get(key) ?? []), l]);
        }
      }
  } finally {
    for (const s of started.values()) await s.stop();
  }
  for (const r of RUNTIMES) cold.set(r, await coldStarts(r, rounds));
  const rows: Row[] = [];
  const of = (r: IsolateBenchRuntime, route: string) => loads.get(`${r} ${route}`) ?? [];
  for (const [route, name, target] of [
    [DB_ROUTE, 'DB route', '≥ 0.5'],
    [SYSTEM_ROUTE, 'SYSTEM-hop route', '≥ 0.6'],
  ] as const) {
    const host = of('host', route);
    rows.push({ figure: `${name} ${route}: in-process host`, unit: 'req/s', samples: host.map((x) => x.rps) });
    for (const r of ['workerd', 'deno'] as const) {
      const iso = of(r, route);
      rows.push(
        { figure: `${name}: in ${r}`, unit: 'req/s', samples: iso.map((x) => x.rps) },
        {
          figure: `${name}: ${r} / in-process req/s`,
          unit: '×',
          samples: ratios(
            iso.map((x) => x.rps),
            host.map((x) => x.rps),
          ),
          target,
        },
        {
          figure: `${name}: ${r} p99 / in-process p99`,
          unit: '×',
          samples: ratios(
            iso.map((x) => x.p99),
            host.map((x) => x.p99),
          ),
          target: '≤ 3',
        },
      );
    }
  }
  for (const r of RUNTIMES)
    rows.push({
      figure: `cold start, routes ${r === 'host' ? 'in-process' : `in ${r}`}: spawn of serve to first 200`,
      unit: 'ms',
      samples: cold.get(r) ?? [],
      target: r === 'host' ? '≤ 300' : '≤ 700',
    });
  return rows;
}

// vite-node drops the script from process.argv, so "run directly" is told apart from "imported by
// run.ts under `npm run bench`" by npm's lifecycle name: only the latter is `bench`.
if (process.env.npm_lifecycle_event !== 'bench') printRows(`${benchHeader()}; routes in isolates`, await isolateRows());
