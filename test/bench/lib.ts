import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, writeFileSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, dirname } from 'node:path';
import { createServer } from 'node:net';
import { stringify } from 'yaml';
import { defaultConfig } from '../../runtime/config';

export const repo = join(import.meta.dirname, '../..');

/** Rounds per figure (alternating who goes first), seconds per round, autocannon connections. */
export const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
export const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
export const CONNECTIONS = 50;
export const cli = join(repo, 'dist/host/cli.mjs');

export async function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = createServer();
    s.listen(0, '127.0.0.1', () => {
      const p = (s.address() as { port: number }).port;
      s.close(() => resolve(p));
    });
  });
}

/** A private host config file (replay back end, every path under a temp root). */
export function benchConfig(
  port: number,
  over: Record<string, unknown> = {},
): { file: string; dir: string; paths: Record<string, string> } {
  const dir = mkdtempSync(join(tmpdir(), 'ballast-bench-'));
  const base = defaultConfig();
  const paths: Record<string, string> = {};
  for (const [k, p] of Object.entries(base.paths)) paths[k] = join(dir, 'root', p);
  mkdirSync(dirname(paths.krb5Conf), { recursive: true });
  const file = join(dir, 'config.yaml');
  writeFileSync(
    file,
    stringify({
      stateDir: dir,
      listen: { host: '127.0.0.1', port },
      paths,
      system: { mode: 'replay', fixtures: [] },
      ...over,
    }),
  );
  return { file, dir, paths };
}

export function createTokenVia(configFile: string): string {
  const out = execFileSync(process.execPath, [cli, 'token', 'create', 'bench', '--perm', '*', '--config', configFile], {
    encoding: 'utf8',
  });
  const tok = out.trim().split('\n').at(-1)!;
  if (!tok.startsWith('blt_')) throw new Error(`no token in: ${out}`);
  return tok;
}

/** Extra node flags from an environment variable, e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof` to profile under load. */
export function nodeArgsFrom(name: 'HOST_NODE_ARGS' | 'BARE_NODE_ARGS' | 'PROBE_NODE_ARGS'): string[] {
  return (process.env[name] ?? '').split(' ').filter(Boolean);
}

/** A host process (`ballast serve`) from a config file, with HOST_NODE_ARGS unless given other flags. */
export function startHostProcess(
  configFile: string,
  nodeArgs = nodeArgsFrom('HOST_NODE_ARGS'),
  cliFile = cli,
): ChildProcess {
  return spawn(process.execPath, [...nodeArgs, cliFile, 'serve', '--config', configFile], {
    stdio: ['ignore', 'ignore', 'inherit'],
  });
}

export async function waitFor(url: string, headers: Record<string, string>, timeoutMs = 20_000): Promise<number> {
  const t0 = performance.now();
  for (;;) {
    try {
      const r = await fetch(url, { headers });
      await r.arrayBuffer();
      if (r.status === 200) return performance.now() - t0;
    } catch {
      /* not listening yet */
    }
    if (performance.now() - t0 > timeoutMs) throw new Error(`${url} did not answer within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 2));
  }
}

export interface Load {
  rps: number;
  p50: number;
  p99: number;
  errors: number;
  non2xx: number;
}

const AUTOCANNON = join(repo, 'node_modules/autocannon/autocannon.js');

/**
 * autocannon in its own process (its CPU is not the server's, and its harness shares nothing
 * with the process that runs the bench), JSON result read from its stdout.
 */
export async function load(
  url: string,
  headers: Record<string, string>,
  o: { connections?: number; duration?: number; amount?: number } = {},
): Promise<Load> {
  const args = [AUTOCANNON, '--json', '-c', String(o.connections ?? 50), '-p', '1'];
  if (o.amount) args.push('-a', String(o.amount));
  else args.push('-d', String(o.duration ?? 10));
  for (const [k, v] of Object.entries(headers)) args.push('-H', `${k}=${v}`);
  args.push(url);
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  child.stdout!.setEncoding('utf8');
  child.stdout!.on('data', (c: string) => (out += c));
  const code = await new Promise<number | null>((r) => child.on('close', r));
  if (code !== 0) throw new Error(`autocannon exited ${code}`);
  const line = out.trim().split('\n').at(-1) ?? '';
  const r = JSON.parse(line) as {
    requests: { average: number };
    latency: { p50: number; p99: number };
    errors: number;
    non2xx: number;
  };
  return { rps: r.requests.average, p50: r.latency.p50, p99: r.latency.p99, errors: r.errors, non2xx: r.non2xx };
}

/** A demo host (`serve --demo`) in its own state directory; its token is in `<dir>/admin.token`. */
export function startDemoHost(dir: string, port: number): ChildProcess {
  return spawn(process.execPath, [cli, 'serve', '--demo', '--port', String(port)], {
    stdio: ['ignore', 'ignore', 'inherit'],
    env: { ...process.env, BALLAST_DEMO_DIR: dir },
  });
}

/** Spawn to first 200 of `path` with the token the demo writes (read again at every try). */
export async function firstOk(port: number, path: string, tokenFile: string, timeoutMs = 20_000): Promise<void> {
  const t0 = performance.now();
  for (;;) {
    try {
      const token = readFileSync(tokenFile, 'utf8').trim();
      const r = await fetch(`http://127.0.0.1:${port}${path}`, { headers: { token } });
      await r.arrayBuffer();
      if (r.status === 200) return;
    } catch {
      /* not listening yet, or no token file yet */
    }
    if (performance.now() - t0 > timeoutMs) throw new Error(`${path} did not answer 200 within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 2));
  }
}

export function rssKb(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) : NaN;
}

export async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  await new Promise<void>((resolve) => {
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
  });
}

/** The bench's two routes: a DB read, and a replayed command through SYSTEM (test/bench/isolate.ts). */
export const DB_ROUTE = '/api/v2/notification/agent';
export const SYSTEM_ROUTE = '/api/v2/kerberos/ticket/list';

/** The SYSTEM-hop route's replayed klist. */
export const KLIST = {
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

/**
 * A host config for one runtime of the route benches (in-process, or `isolate: workerd | deno`),
 * with the SYSTEM-hop route's klist replayed from a private fixture directory; `cleanup` removes both.
 */
export function routeBenchConfig(
  port: number,
  runtime: 'host' | 'workerd' | 'deno',
): ReturnType<typeof benchConfig> & { cleanup(): void } {
  const fx = mkdtempSync(join(tmpdir(), 'ballast-bench-klist-'));
  writeFileSync(join(fx, 'klist.yaml'), stringify(KLIST));
  const config = benchConfig(port, {
    ...(runtime === 'host' ? {} : { isolate: runtime }),
    system: { mode: 'replay', fixtures: [fx] },
  });
  return {
    ...config,
    cleanup() {
      rmSync(config.dir, { recursive: true, force: true });
      rmSync(fx, { recursive: true, force: true });
    },
  };
}

/** The bare node:http baseline (bare-server.mjs) on `dbFile`, answering `bodiesFile`; resolves once it listens. */
export async function startBareServer(port: number, dbFile: string, bodiesFile: string): Promise<ChildProcess> {
  const bare = spawn(
    process.execPath,
    [...nodeArgsFrom('BARE_NODE_ARGS'), join(repo, 'test/bench/bare-server.mjs'), String(port), dbFile, bodiesFile],
    {
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  await new Promise<void>((r) => bare.stdout!.once('data', () => r()));
  return bare;
}
