/**
 * npm run bench: the Ballast host (the demo: replay back end, its SQLite DB) against a bare
 * node:http server (test/bench/bare-server.mjs: the same token check against the same DB file,
 * the same headers and body bytes), with autocannon in its own process:
 * - DB route `GET /notification/agent` (token + one SELECT) and SYSTEM-hop route
 *   `GET /kerberos/ticket/list` (token + one replayed klist), ROUNDS alternating rounds each;
 * - cold start (spawn to first 200), RSS after 10k and after 100k requests in replay mode;
 * - explore of a 100k-entry tree against `find -printf` (test/bench/explore.ts).
 * Each figure: median and spread over the rounds, and the per-round ratios. Never asserted.
 * Composable: hostRows() and exploreRows() return Rows (report.ts) that other bench files can
 * print beside their own; run.ts (the npm script's entry) only calls main().
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir, cpus } from 'node:os';
import { join } from 'node:path';
import {
  benchConfig,
  CONNECTIONS,
  createTokenVia,
  DB_ROUTE,
  ROUNDS,
  SECONDS,
  SYSTEM_ROUTE,
  firstOk,
  freePort,
  load,
  rssKb,
  startBareServer,
  startDemoHost,
  startHostProcess,
  stop,
  waitFor,
  type Load,
} from './lib';
import { exploreRows } from './explore';
import { printRows, ratios, type Row } from './report';

const SYS_ROUTE = SYSTEM_ROUTE;

/** A host from a config file (replay back end without fixtures: what a production start costs, minus the tools). */
async function configHostColdStart(): Promise<number> {
  const port = await freePort();
  const cfg = benchConfig(port);
  const token = createTokenVia(cfg.file);
  try {
    const t0 = performance.now();
    const host = startHostProcess(cfg.file);
    try {
      await waitFor(`http://127.0.0.1:${port}${DB_ROUTE}`, { token });
      return performance.now() - t0;
    } finally {
      await stop(host);
    }
  } finally {
    rmSync(cfg.dir, { recursive: true, force: true });
  }
}

/** The demo (parses every fixture under fixtures/demo at start). */
async function coldStart(dir: string): Promise<number> {
  const port = await freePort();
  const t0 = performance.now();
  const host = startDemoHost(dir, port);
  try {
    await firstOk(port, DB_ROUTE, join(dir, 'admin.token'));
    return performance.now() - t0;
  } finally {
    await stop(host);
  }
}

export async function hostRows(): Promise<Row[]> {
  const dir = mkdtempSync(join(tmpdir(), 'ballast-bench-'));
  try {
    // the first start seeds the demo and leaves the CLI's code cache (a fresh build has none:
    // runtime/launch.ts); the cold starts after it are what a restart costs
    const cold: number[] = [];
    const demoCold: number[] = [];
    await coldStart(dir);
    // as many restarts as rounds: a median of three moved by ±60 ms with the machine
    for (let i = 0; i < ROUNDS; i++) {
      cold.push(await configHostColdStart());
      demoCold.push(await coldStart(dir));
    }

    const port = await freePort();
    const host = startDemoHost(dir, port);
    const tokenFile = join(dir, 'admin.token');
    await firstOk(port, DB_ROUTE, tokenFile);
    const token = readFileSync(tokenFile, 'utf8').trim();
    const headers = { token };
    const bodies: Record<string, unknown> = {};
    for (const path of [DB_ROUTE, SYS_ROUTE]) {
      const r = await fetch(`http://127.0.0.1:${port}${path}`, { headers });
      if (r.status !== 200) throw new Error(`${path}: ${r.status} ${await r.text()}`);
      bodies[path] = await r.json();
    }
    const bodiesFile = join(dir, 'bodies.json');
    writeFileSync(bodiesFile, JSON.stringify(bodies));
    const barePort = await freePort();
    const bare = await startBareServer(barePort, join(dir, 'ballast.db'), bodiesFile);
    const url = (p: number, path: string) => `http://127.0.0.1:${p}${path}`;

    const runs: Record<string, Load[]> = { dbHost: [], dbBare: [], sysHost: [], sysBare: [] };
    const rss10k: number[] = [];
    const rss100k: number[] = [];
    try {
      // same bytes from both (the bare server answers what the host answered)
      for (const path of [DB_ROUTE, SYS_ROUTE]) {
        const b = await (await fetch(url(barePort, path), { headers })).text();
        if (b !== JSON.stringify(bodies[path])) throw new Error(`bare server body differs on ${path}`);
      }
      // warm both, then alternate which goes first in each round
      for (const p of [port, barePort])
        for (const path of [DB_ROUTE, SYS_ROUTE]) await load(url(p, path), headers, { duration: 2 });
      for (let i = 0; i < ROUNDS; i++) {
        const order = i % 2 === 0 ? (['Bare', 'Host'] as const) : (['Host', 'Bare'] as const);
        for (const [key, path] of [
          ['db', DB_ROUTE],
          ['sys', SYS_ROUTE],
        ] as const) {
          for (const who of order) {
            const r = await load(url(who === 'Host' ? port : barePort, path), headers, {
              duration: SECONDS,
              connections: CONNECTIONS,
            });
            if (r.errors + r.non2xx > 0) throw new Error(`${who} ${path}: ${r.errors} errors, ${r.non2xx} non-2xx`);
            runs[`${key}${who}`].push(r);
          }
        }
      }
    } finally {
      await stop(bare);
    }
    try {
      // RSS in replay mode: a fresh host, 10k requests of the SYSTEM-hop route, then 90k more,
      // once a round (one host's figure moved by several MB with where its first major GCs fell)
      await stop(host);
      for (let i = 0; i < ROUNDS; i++) {
        const p2 = await freePort();
        const fresh = startDemoHost(dir, p2);
        try {
          await firstOk(p2, DB_ROUTE, tokenFile);
          const tok = { token: readFileSync(tokenFile, 'utf8').trim() };
          await load(url(p2, SYS_ROUTE), tok, { amount: 10_000, connections: CONNECTIONS });
          rss10k.push(rssKb(fresh.pid!) / 1024);
          await load(url(p2, SYS_ROUTE), tok, { amount: 90_000, connections: CONNECTIONS });
          rss100k.push(rssKb(fresh.pid!) / 1024);
        } finally {
          await stop(fresh);
        }
      }
    } finally {
      await stop(host);
    }

    const rps = (xs: Load[]) => xs.map((x) => x.rps);
    const p99 = (xs: Load[]) => xs.map((x) => x.p99);
    return [
      { figure: `DB route ${DB_ROUTE}: bare node:http`, unit: 'req/s', samples: rps(runs.dbBare) },
      { figure: 'DB route: Ballast host', unit: 'req/s', samples: rps(runs.dbHost) },
      {
        figure: 'DB route: Ballast / bare req/s',
        unit: '×',
        samples: ratios(rps(runs.dbHost), rps(runs.dbBare)),
        target: '≥ 0.75',
      },
      {
        figure: 'DB route: Ballast p99 / bare p99',
        unit: '×',
        samples: ratios(p99(runs.dbHost), p99(runs.dbBare)),
        target: '≤ 2 (every round)',
      },
      { figure: `SYSTEM-hop route ${SYS_ROUTE}: bare node:http`, unit: 'req/s', samples: rps(runs.sysBare) },
      { figure: 'SYSTEM-hop route: Ballast host', unit: 'req/s', samples: rps(runs.sysHost) },
      {
        figure: 'SYSTEM-hop route: Ballast / bare req/s',
        unit: '×',
        samples: ratios(rps(runs.sysHost), rps(runs.sysBare)),
        target: '≥ 0.75',
      },
      {
        figure: 'SYSTEM-hop route: Ballast p99 / bare p99',
        unit: '×',
        samples: ratios(p99(runs.sysHost), p99(runs.sysBare)),
        target: '≤ 2 (every round)',
      },
      {
        figure: 'cold start of a host, spawn to first 200 of the DB route',
        unit: 'ms',
        samples: cold,
        target: '≤ 300',
      },
      { figure: 'cold start of the demo (fixtures parsed at start)', unit: 'ms', samples: demoCold },
      { figure: 'host RSS after 10k requests (replay)', unit: 'MB', samples: rss10k, digits: 1 },
      { figure: 'host RSS after 100k requests (replay)', unit: 'MB', samples: rss100k, digits: 1 },
      {
        figure: 'host RSS growth 10k → 100k requests',
        unit: 'MB',
        samples: rss100k.map((r, i) => r - rss10k[i]),
        digits: 1,
        target: '≤ 20',
      },
    ].filter((r) => r.samples.length > 0);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The table's title line: date, machine size, load settings. */
export function benchHeader(): string {
  return `npm run bench, ${new Date().toISOString().slice(0, 10)}, ${cpus().length} cores (${cpus()[0]?.model ?? '?'}), Node ${process.version}; autocannon in its own process, ${CONNECTIONS} connections, ${SECONDS} s per figure and round`;
}

export async function main(): Promise<void> {
  printRows(benchHeader(), await hostRows());
  printRows('explore of a 100k-entry tree', await exploreRows());
}
