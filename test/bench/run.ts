/**
 * npm run bench: the host's throughput and latency on a cheap route (token check + DB read +
 * one SYSTEM call) against a bare node:http server returning the same bytes, measured side by
 * side in the same run, plus cold start and RSS. Ratios, not absolute numbers, are the result.
 */
import { spawn } from 'node:child_process';
import { writeFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { benchConfig, createTokenVia, freePort, load, repo, rssKb, startHostProcess, stop, waitFor } from './lib';
import { exploreBench } from './explore';

// The cheap route: token check + one DB read (the agent list), no command.
const ROUTE = '/api/v2/notification/agent';

async function hostVsBare(): Promise<void> {
  const port = await freePort();
  const cfg = benchConfig(port);
  const token = createTokenVia(cfg.file);
  const headers = { token };

  const t0 = performance.now();
  const host = startHostProcess(cfg.file);
  await waitFor(`http://127.0.0.1:${port}${ROUTE}`, headers);
  const cold = performance.now() - t0;
  // One disabled agent, so the listing has a row to read (disabled: nothing is ever sent).
  const created = await fetch(`http://127.0.0.1:${port}/api/v2/notification/agent/create`, {
    method: 'POST',
    headers: { ...headers, 'content-type': 'application/json' },
    body: JSON.stringify({ type: 'webhook', enabled: false, json: { url: 'http://127.0.0.1:9/hook' } }),
  });
  if (created.status !== 200) throw new Error(`agent create: ${created.status} ${await created.text()}`);

  const bodyRes = await fetch(`http://127.0.0.1:${port}${ROUTE}`, { headers });
  const body = Buffer.from(await bodyRes.arrayBuffer());
  const bodyFile = join(cfg.dir, 'body.json');
  writeFileSync(bodyFile, body);
  const barePort = await freePort();
  const bare = spawn(process.execPath, [join(repo, 'test/bench/bare-server.mjs'), String(barePort), bodyFile], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  await new Promise<void>((r) => bare.stdout!.once('data', () => r()));

  try {
    // Warm both, then alternate so neither gets a quieter machine.
    await load(`http://127.0.0.1:${port}${ROUTE}`, headers, { duration: 2 });
    await load(`http://127.0.0.1:${barePort}/`, {}, { duration: 2 });
    const runs: { host: Awaited<ReturnType<typeof load>>; bare: Awaited<ReturnType<typeof load>> }[] = [];
    for (let i = 0; i < 2; i++) {
      const b = await load(`http://127.0.0.1:${barePort}/`, {}, { duration: 5 });
      const h = await load(`http://127.0.0.1:${port}${ROUTE}`, headers, { duration: 5 });
      runs.push({ host: h, bare: b });
    }
    const avg = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
    const hostRps = avg(runs.map((r) => r.host.rps));
    const bareRps = avg(runs.map((r) => r.bare.rps));
    const errs = runs.reduce((n, r) => n + r.host.errors + r.host.non2xx, 0);

    const before = rssKb(host.pid!);
    await load(`http://127.0.0.1:${port}${ROUTE}`, headers, { amount: 10_000, connections: 8 });
    const after = rssKb(host.pid!);

    console.log(`\nhost vs bare node:http on GET ${ROUTE} (token check + DB read), 16 connections, 2 x 5 s each`);
    console.log(
      `  bare node:http : ${bareRps.toFixed(0).padStart(7)} req/s   p50 ${runs[1].bare.p50} ms   p99 ${runs[1].bare.p99} ms`,
    );
    console.log(
      `  ballast host   : ${hostRps.toFixed(0).padStart(7)} req/s   p50 ${runs[1].host.p50} ms   p99 ${runs[1].host.p99} ms   (errors/non-2xx: ${errs})`,
    );
    console.log(`  ratio host/bare: ${(hostRps / bareRps).toFixed(3)}`);
    console.log(`  cold start to first 200: ${cold.toFixed(0)} ms`);
    console.log(
      `  host RSS: ${(before / 1024).toFixed(1)} MB before, ${(after / 1024).toFixed(1)} MB after 10k more requests`,
    );
    if (errs > 0) process.exitCode = 1;
  } finally {
    await stop(host);
    await stop(bare);
    rmSync(cfg.dir, { recursive: true, force: true });
  }
}

await hostVsBare();
// POST /fs/explore over a 100k-entry tree against find -printf (test/bench/explore.ts)
await exploreBench();
