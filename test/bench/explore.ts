/**
 * npm run bench, explore case: POST /fs/explore over a 100 000-entry tree through a real host
 * process (HTTP, auth, the route bundle, the fs/explore host operation, JSON out) against
 * `find <dir> -mindepth 1 -printf` of the same fields, each read to its last byte. Same tree,
 * same run, alternating, warm page cache for both; the ratio is the result, never asserted.
 */
import { spawn } from 'node:child_process';
import { closeSync, mkdirSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { benchConfig, createTokenVia, freePort, ROUNDS, rssKb, startHostProcess, stop, waitFor } from './lib';
import type { Row } from './report';

const DIRS = 100;
const FILES_PER_DIR = 999; // 100 directories + 99 900 files = 100 000 entries
const RUNS = ROUNDS;
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

/** Sets a process's VmHWM back to its current RSS (Linux ≥ 4.0, proc(5) clear_refs); false where not allowed. */
function resetPeakRss(pid: number): boolean {
  try {
    writeFileSync(`/proc/${pid}/clear_refs`, '5');
    return true;
  } catch {
    return false;
  }
}

/** Explore against find, RUNS alternating rounds, as Rows (report.ts). */
export async function exploreRows(): Promise<Row[]> {
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
    // warm both (page cache, route bundle, JIT), then alternate which goes first
    await timeFind(tree);
    const warm = await timeRoute(url, token, tree);
    const route: number[] = [];
    const find: number[] = [];
    // the host's peak RSS during each walk, where VmHWM can be reset (else one peak over all)
    const peaks: number[] = [];
    const walk = async () => {
      const reset = resetPeakRss(host.pid!);
      route.push((await timeRoute(url, token, tree)).ms);
      if (reset) peaks.push(peakRssKb(host.pid!) / 1024);
    };
    let findBytes = 0;
    for (let i = 0; i < RUNS; i++) {
      if (i % 2 === 1) await walk();
      const f = await timeFind(tree);
      find.push(f.ms);
      findBytes = f.bytes;
      if (i % 2 === 0) await walk();
    }
    if (peaks.length === 0) peaks.push(peakRssKb(host.pid!) / 1024);
    return [
      {
        figure: `find -printf of the same fields (${(findBytes / 1e6).toFixed(1)} MB of text)`,
        unit: 'ms',
        samples: find,
      },
      {
        figure: `POST /fs/explore, ${warm.total} entries (${(warm.bytes / 1e6).toFixed(1)} MB of JSON; tree built in ${(built / 1000).toFixed(1)} s)`,
        unit: 'ms',
        samples: route,
      },
      { figure: 'explore / find', unit: '×', samples: route.map((r, i) => r / find[i]), target: '≤ 1.6' },
      {
        figure:
          peaks.length > 1
            ? `host peak RSS (VmHWM) during a walk (${(rssBefore / 1024).toFixed(0)} MB before the first)`
            : `host peak RSS (VmHWM) over ${RUNS + 1} walks (${(rssBefore / 1024).toFixed(0)} MB before)`,
        unit: 'MB',
        samples: peaks,
        target: '≤ 200',
      },
    ];
  } finally {
    await stop(host);
    rmSync(cfg.dir, { recursive: true, force: true });
    rmSync(base, { recursive: true, force: true });
  }
}
