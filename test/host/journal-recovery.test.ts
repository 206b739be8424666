/**
 * Intent-journal recovery without root (#35): a real host, run as a child process, killed with
 * SIGKILL in the middle of a two-intent change to private files and directories, and a host
 * started again on the same state directory that puts everything back, newest step first.
 * journal.test.ts checks IntentJournal's calls one by one.
 */
import { execFileSync, spawn } from 'node:child_process';
import { chmodSync, existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { createHost, type Host } from '../../runtime/host';
import { createToken } from '../../runtime/tokens';
import type { Job } from '../../handlers/core/job';
import jobDetails from '../../handlers/jobs/routes/details';
import { distDir, makeTestConfig, repo } from '../helpers/host';
import { changePaths, liveBackend, RMDIR, SLEEP, twoIntentChange } from '../helpers/journal-change';

// resolved, not joined to the repo: Stryker's sandbox has a node_modules of its own without it
const VITE_NODE = createRequire(import.meta.url).resolve('vite-node/vite-node.mjs');

/** The pid of the one process whose argv is exactly this, or 0 (the sleep gets a unique length). */
function pidOf(...argv: string[]): number {
  try {
    const pids = execFileSync('pgrep', ['-fx', argv.join(' ')], { encoding: 'utf8' })
      .trim()
      .split('\n');
    return pids.length === 1 ? Number(pids[0]) : 0;
  } catch {
    return 0;
  }
}

async function until<T>(what: string, read: () => T, ok: (v: T) => boolean, ms = 30_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = read();
    if (ok(v)) return v;
    if (Date.now() > end) throw new Error(`waited ${ms} ms for ${what}: ${JSON.stringify(v)}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('a host killed with SIGKILL in the middle of a change, started again on the same state', () => {
  let restarted: Host | undefined;
  // a test that failed before its kill leaves no host (nor its sleep) behind
  const leftovers: number[] = [];
  afterEach(async () => {
    for (const pid of leftovers.splice(0)) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // gone already
      }
    }
    await restarted?.close();
  });

  it('puts the files back (bytes and modes) and undoes the steps newest first; no intent is left', async () => {
    const { config, state, root } = makeTestConfig();
    config.fileRoots = [root];
    const p = changePaths(root);
    writeFileSync(p.conf, 'old\n');
    chmodSync(p.conf, 0o640);
    const configFile = join(state, 'config.json');
    writeFileSync(configFile, JSON.stringify(config));
    // the host as a process of its own (from source: vite-node), in its own process group
    const child = spawn(process.execPath, [VITE_NODE, 'test/helpers/journal-host.ts', configFile, root], {
      cwd: repo,
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    leftovers.push(-child.pid!);
    let output = '';
    const exited = new Promise<NodeJS.Signals | number | null>((r) => child.once('exit', (c, s) => r(s ?? c)));
    const [url, token] = await new Promise<string[]>((resolve, reject) => {
      const onData = (d: Buffer) => {
        output += d.toString();
        const m = /^ready (\S+) (\S+)$/m.exec(output);
        if (m) resolve([m[1], m[2]]);
      };
      child.stdout.on('data', onData);
      child.stderr.on('data', onData);
      void exited.then((c) => reject(new Error(`host exited (${c}): ${output}`)));
    });
    const seconds = String(60 + (process.pid % 1000) / 100);
    const r = await fetch(`${url}/api/v2/fs/test_journal_change`, {
      method: 'POST',
      headers: { token, 'content-type': 'application/json', prefer: 'respond-async' },
      body: JSON.stringify({ seconds: Number(seconds) }),
    });
    expect(r.status).toBe(202);
    const jobId = ((await r.json()) as { job: Job }).job.id;
    const sleep = await until(
      'the last step (sleep)',
      () => pidOf(SLEEP, seconds),
      (pid) => pid > 0,
    );
    leftovers.push(sleep);
    process.kill(-child.pid!, 'SIGKILL');
    expect(await exited).toBe('SIGKILL');
    process.kill(sleep, 'SIGKILL');

    // what the killed host left: the change half made, both intents open with their steps
    expect([readFileSync(p.conf, 'utf8'), statSync(p.conf).mode & 0o7777]).toEqual(['new\n', 0o604]);
    expect(readFileSync(p.added, 'utf8')).toBe('added\n');
    expect(existsSync(p.d4)).toBe(true);
    const left = new Database(join(state, 'ballast.db'), { readonly: true });
    const open = left.prepare('SELECT id, area, files, undo FROM intents ORDER BY id').all();
    left.close();
    expect(open).toEqual([
      {
        id: 1,
        area: 'fs',
        files: JSON.stringify([{ path: p.conf, content: 'old\n', mode: 0o640 }]),
        undo: JSON.stringify([[[RMDIR, '--', p.d1]]]),
      },
      {
        id: 2,
        area: 'fs',
        files: JSON.stringify([
          { path: p.conf, content: 'mid\n', mode: 0o600 },
          { path: p.added, content: null },
        ]),
        undo: JSON.stringify([
          [[RMDIR, '--', p.d2]],
          [
            [RMDIR, '--', p.d4],
            [RMDIR, '--', p.d3],
          ],
          [[RMDIR, '--', p.late]],
        ]),
      },
    ]);

    // the next start, in this process (where a mutant of journal.ts is the one that runs)
    const lines: string[] = [];
    restarted = await createHost({
      config,
      distDir,
      backend: liveBackend(),
      routes: [twoIntentChange(root), jobDetails],
      log: (l) => lines.push(l),
    });
    expect([readFileSync(p.conf, 'utf8'), statSync(p.conf).mode & 0o7777]).toEqual(['old\n', 0o640]);
    expect([existsSync(p.added), existsSync(p.d1)]).toEqual([false, false]);
    expect(restarted.db.prepare('SELECT COUNT(*) AS n FROM intents').get()).toEqual({ n: 0 });
    const { job, requestId } = await jobOf(restarted, jobId);
    expect(lines.filter((l) => l.startsWith('fs: rolled back'))).toEqual([
      `fs: rolled back a change interrupted at request ${requestId}: files ${p.conf}, ${p.added}; 3 command(s) undone; 1 undo step(s) did not apply (${RMDIR} -- ${p.late})`,
      `fs: rolled back a change interrupted at request ${requestId}: files ${p.conf}; 1 command(s) undone`,
    ]);
    // the undo newest first: rmdir d4, d3, d2 (intent 2), then d1 (intent 1); the step the kill
    // came before fails, as expected
    expect(job).toMatchObject({
      state: 'interrupted',
      undo: {
        files: [p.conf, p.added, p.conf],
        undone: [
          [RMDIR, '--', p.d4],
          [RMDIR, '--', p.d3],
          [RMDIR, '--', p.d2],
          [RMDIR, '--', p.d1],
        ],
        failed: [
          { step: `${RMDIR} -- ${p.late}`, error: `${RMDIR}: failed to remove '${p.late}': No such file or directory` },
        ],
      },
    });
    expect(
      restarted.db.prepare("SELECT kind, data FROM events WHERE kind LIKE '%rolled_back' ORDER BY seq").all(),
    ).toEqual([
      { kind: 'fs.change.rolled_back', data: expect.stringContaining(`"files":["${p.conf}","${p.added}"],"undone":3`) },
      { kind: 'fs.change.rolled_back', data: expect.stringContaining(`"files":["${p.conf}"],"undone":1`) },
    ]);
  }, 90_000);
});

/** The job as the jobs API shows it, and its request id. */
async function jobOf(host: Host, id: string): Promise<{ job: Job; requestId: string }> {
  const admin = await createToken(host.db, `read-${Math.random()}`, ['*']);
  const res = await host.app.fetch(
    new Request(`http://ballast.local/api/v2/jobs/${id}`, { headers: { token: admin.token } }),
    host.env,
  );
  const job = ((await res.json()) as { job: Job }).job;
  const row = host.db.prepare('SELECT request_id FROM jobs WHERE id = ?').get(id) as { request_id: string };
  return { job, requestId: row.request_id };
}
