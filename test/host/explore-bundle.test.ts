/**
 * POST /fs/explore from the built host (dist/host/cli.mjs), as `npm start` runs it: the worker
 * threads run the bundle's copy of their code (explore-worker.ts, passed as text), so a bundler
 * rewrite that breaks it would only show here. A broken worker still answers (on the event loop)
 * but says so on stderr; this test wants the right bytes and no such line.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { exploreJson } from '../../handlers/fs/explore-json';
import { exploreTree } from '../../runtime/areas/fs/explore';
import { benchConfig, cli, createTokenVia, freePort, stop, waitFor } from '../bench/lib';
import { privateDir } from '../helpers/tmp';

const dir = privateDir('ballast-explore-bundle');
const cleanup: string[] = [];
afterAll(() => cleanup.forEach((d) => rmSync(d, { recursive: true, force: true })));

describe('explore from the built host', () => {
  it('walks with its worker threads and answers the in-process bytes', async () => {
    const top = join(dir, 'tree');
    for (let d = 0; d < 3; d++) {
      mkdirSync(join(top, `dir ${d}`, 'inner'), { recursive: true });
      for (let f = 0; f < 400; f++) writeFileSync(join(top, `dir ${d}`, `file-${f}`), String(f));
    }
    const port = await freePort();
    const cfg = benchConfig(port, { settings: { fs: { readRoots: [dir] } } });
    cleanup.push(cfg.dir);
    const token = createTokenVia(cfg.file);
    const host = spawn(process.execPath, [cli, 'serve', '--config', cfg.file], { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    host.stderr!.on('data', (c: Buffer) => (stderr += c.toString()));
    try {
      await waitFor(`http://127.0.0.1:${port}/api/v2/fs/available_fs`, { token });
      const res = await fetch(`http://127.0.0.1:${port}/api/v2/fs/explore`, {
        method: 'POST',
        headers: { token, 'content-type': 'application/json' },
        body: JSON.stringify({ fs_path: top }),
      });
      const text = await res.text();
      expect(res.status).toBe(200);
      expect(res.headers.get('transfer-encoding')).toBe('chunked');
      expect(text).toBe(exploreJson(await exploreTree({ path: top }, { roots: [dir], maxEntriesCeiling: 100_000 })));
      expect(JSON.parse(text)).toMatchObject({ total: 3 + 3 * 401, truncated: false });
    } finally {
      await stop(host);
    }
    expect(stderr).not.toMatch(/explore: a worker thread failed/);
  }, 30_000);
});
