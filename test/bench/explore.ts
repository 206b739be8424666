/**
 * npm run bench, explore case: POST /fs/explore over a 100 000-entry tree through a real host
 * process (HTTP, auth, the route bundle, the fs/explore host operation, JSON out) against
 * `find <dir> -mindepth 1 -printf` of the same fields, each read to its last byte. Same tree,
 * same run, alternating, warm page cache for both; the ratio is the result, never asserted.
 */
import { spawn } from 'node:child_process';
import { closeSync, mkdirSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { benchConfig, createTokenVia, freePort, rssKb, startHostProcess, stop, waitFor } from './lib';

const DIRS = 100;
const FILES_PER_DIR = 999; // 100 directories + 99 900 files = 100 000 entries
const RUNS = 3;
/** find's spelling of the explore entry's fields (rdev and blksize have no find directive) */
const FIND_FORMAT = '%D %m %n %U %G %i %s %b %A@ %T@ %C@ %B@ %y %f %p\\n';

function buildTree(): { base: string; tree: string } {
  const base = mkdtempSync(join(tmpdir(), 'ballast-bench-explore-'));
  const tree = join(base, 'tree');
  for (let d = 0; d < DIRS; d++) {
    const dir = join(tree, `dir-${String(d).padStart(3, '0')}`);
    mkdirSync(dir, { recursive: true });
    for (let f = 0; f < FILES_PER_DIR; f++) closeSync(openSync(join(dir, `file-${f}.dat`), 'w'));
  }
  return { base, tree };
}

async function timeFind(tree: string): Promise<{ ms: number; bytes: number }> {
  const t0 = performance.now();
  const child = spawn('/usr/bin/find', [tree, '-mindepth', '1', '-printf', FIND_FORMAT], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let bytes = 0;
  child.stdout.on('data', (c: Buffer) => (bytes += c.length));
  const code = await new Promise<number | null>((r) => child.on('close', r));
  if (code !== 0) throw new Error(`find exited ${code}`);
  return { ms: performance.now() - t0, bytes };
}

async function timeRoute(
  url: string,
  token: string,
  tree: string,
): Promise<{ ms: number; bytes: number; total: number }> {
  const t0 = performance.now();
  const res = await fetch(url, {
    method: 'POST',
    headers: { token, 'content-type': 'application/json' },
    body: JSON.stringify({ fs_path: tree }),
  });
  const body = await res.text();
  const ms = performance.now() - t0;
  if (res.status !== 200) throw new Error(`explore answered ${res.status}: ${body.slice(0, 300)}`);
  const parsed = JSON.parse(body) as { total: number; truncated: boolean };
  if (parsed.truncated) throw new Error('explore truncated the bench tree');
  return { ms, bytes: body.length, total: parsed.total };
}

/** peak resident set (VmHWM) of a process, in kB */
function peakRssKb(pid: number): number {
  const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) : NaN;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

export async function exploreBench(): Promise<void> {
  const t0 = performance.now();
  const { base, tree } = buildTree();
  const built = performance.now() - t0;
  const port = await freePort();
  const cfg = benchConfig(port, { settings: { fs: { readRoots: [base] } } });
  const token = createTokenVia(cfg.file);
  const host = startHostProcess(cfg.file);
  const url = `http://127.0.0.1:${port}/api/v2/fs/explore`;
  try {
    await waitFor(`http://127.0.0.1:${port}/api/v2/fs/available_fs`, { token });
    const rssBefore = rssKb(host.pid!);
    // warm both (page cache, route bundle, JIT), then alternate so neither gets a quieter machine
    await timeFind(tree);
    const warm = await timeRoute(url, token, tree);
    const route: number[] = [];
    const find: number[] = [];
    let findBytes = 0;
    for (let i = 0; i < RUNS; i++) {
      const f = await timeFind(tree);
      find.push(f.ms);
      findBytes = f.bytes;
      route.push((await timeRoute(url, token, tree)).ms);
    }
    const rssAfter = rssKb(host.pid!);
    const r = median(route);
    const f = median(find);
    console.log(
      `\nexplore: POST /fs/explore vs find -printf of the same fields, ${warm.total} entries (${DIRS} dirs x ${FILES_PER_DIR} files), median of ${RUNS}`,
    );
    console.log(`  find -printf   : ${f.toFixed(0).padStart(6)} ms   ${(findBytes / 1e6).toFixed(1)} MB of text`);
    console.log(
      `  ballast explore: ${r.toFixed(0).padStart(6)} ms   ${(warm.bytes / 1e6).toFixed(1)} MB of JSON   (runs: ${route.map((x) => x.toFixed(0)).join(', ')} ms)`,
    );
    console.log(`  ratio explore/find: ${(r / f).toFixed(2)}`);
    console.log(
      `  host RSS: ${(rssBefore / 1024).toFixed(1)} MB before, ${(rssAfter / 1024).toFixed(1)} MB after ${RUNS + 1} walks, peak ${(peakRssKb(host.pid!) / 1024).toFixed(1)} MB; tree built in ${(built / 1000).toFixed(1)} s`,
    );
  } finally {
    await stop(host);
    rmSync(cfg.dir, { recursive: true, force: true });
    rmSync(base, { recursive: true, force: true });
  }
}
