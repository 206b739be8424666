/**
 * System tier, long routes as jobs with the real tools (root: loop devices): mkfs on a loop
 * device asked with `Prefer: respond-async` and followed over its event stream to the end, and
 * a running xxhash of a large tree (sparse files of 16 GiB each: xxhsum reads them at memory
 * speed, for minutes) cancelled: its process group gone, no second batch started, nothing written.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Job } from '../../handlers/core/job';
import { defaultConfig, mergeConfig } from '../../runtime/config';
import { backendFor } from '../../runtime/host';
import { makeTestHost, type TestHost } from '../helpers/host';
import { createLoopDevice, requireRoot, requireTools, type LoopDevice } from './helpers/loop';

const XXHSUM = '/usr/bin/xxhsum';
let t: TestHost;
let work: string;
const loops: LoopDevice[] = [];

beforeAll(async () => {
  requireRoot();
  requireTools('/usr/sbin/mkfs', '/usr/sbin/mkfs.ext4', '/usr/bin/lsblk', '/usr/sbin/wipefs', XXHSUM, '/usr/bin/pgrep');
  work = mkdtempSync(join(tmpdir(), 'ballast-jobs-system-'));
  const live = backendFor(mergeConfig(defaultConfig(), { system: { ...defaultConfig().system, mode: 'live' } }));
  t = await makeTestHost({ backend: live, config: { settings: { fs: { mountRoots: [work] } } } });
  writeFileSync(join(t.config.paths.sbin, 'mkfs.ext4'), '');
});

afterAll(async () => {
  for (const l of loops) await l.cleanup();
  await t?.close();
  if (work) rmSync(work, { recursive: true, force: true });
});

/** An SSE text as its events, in order. */
function sseEvents(text: string): { id: number; event: string; data: Record<string, unknown> }[] {
  return text
    .split('\n\n')
    .filter((b) => b.includes('data: '))
    .map((b) => {
      const f = Object.fromEntries(
        b.split('\n').map((l) => [l.slice(0, l.indexOf(':')), l.slice(l.indexOf(':') + 2)] as const),
      );
      return { id: Number(f.id), event: f.event, data: JSON.parse(f.data) as Record<string, unknown> };
    });
}

function pgrep(pattern: string): string[] {
  try {
    return execFileSync('pgrep', ['-f', pattern], { encoding: 'utf8' }).trim().split('\n').filter(Boolean);
  } catch {
    return [];
  }
}

async function until<T>(what: string, read: () => Promise<T> | T, ok: (v: T) => boolean, ms = 20_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await read();
    if (ok(v)) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}: ${JSON.stringify(v)}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('mkfs as a job, followed to the end', () => {
  it('a synchronous mkfs answers as always; its job keeps that answer byte for byte', async () => {
    const l = await createLoopDevice({ sizeMiB: 64 });
    loops.push(l);
    const r = await t.call('POST', '/api/v2/fs/make_filesystem', { body: { device: l.device, type: 'ext4' } });
    expect(r.status, r.text).toBe(200);
    const job = (await t.call<{ jobs: Job[] }>('GET', '/api/v2/jobs?area=fs&limit=1')).json.jobs[0];
    expect(job).toMatchObject({ state: 'succeeded', status: 200, route: 'POST /api/v2/fs/make_filesystem' });
    const kept = await t.call('GET', `/api/v2/jobs/${job.id}/result`);
    expect(kept.text).toBe(r.text);
  });

  it('Prefer: respond-async: 202, then the stream: running, probe, write, the mkfs command, succeeded', async () => {
    const l = await createLoopDevice({ sizeMiB: 64 });
    loops.push(l);
    const r = await t.call<{ job: Job }>('POST', '/api/v2/fs/make_filesystem', {
      body: { device: l.device, type: 'ext4', options: ['-L', 'jobbed'] },
      headers: { prefer: 'respond-async' },
    });
    expect(r.status).toBe(202);
    const id = r.json.job.id;
    const events = sseEvents((await t.call('GET', `/api/v2/jobs/${id}/events`)).text);
    expect(events[0]).toMatchObject({ event: 'state', data: { state: 'running' } });
    expect(events.filter((e) => e.event === 'progress').map((e) => e.data.phase)).toEqual(['probe', 'write']);
    const lines = events.filter((e) => e.event === 'log').map((e) => String(e.data.line));
    expect(lines).toContain(`$ /usr/sbin/mkfs -t ext4 -L jobbed -- ${l.device}`);
    expect(lines.findIndex((x) => x.startsWith('  → mkfs exit 0'))).toBeGreaterThan(
      lines.indexOf(`$ /usr/sbin/mkfs -t ext4 -L jobbed -- ${l.device}`),
    );
    const last = events[events.length - 1];
    expect(last).toMatchObject({ event: 'state', data: { state: 'succeeded', status: 200 } });
    const result = (await t.call<string>('GET', `/api/v2/jobs/${id}/result`)).json;
    expect(result).toMatch(/^mke2fs 1\.\d+/);
    expect(result).toContain('Creating filesystem with 65536 1k blocks');
    const job = (await t.call<{ job: Job }>('GET', `/api/v2/jobs/${id}`)).json.job;
    expect(job.result).toBe(result);
    // and the disk says so
    const label = execFileSync('/usr/sbin/blkid', ['-o', 'value', '-s', 'LABEL', l.device], { encoding: 'utf8' });
    expect(label.trim()).toBe('jobbed');
  });
});

describe('a running xxhash of a large tree, cancelled', () => {
  it('its xxhsum is gone, the next batch never started, nothing was written, the job says cancelled', async () => {
    const tree = join(work, 'big');
    mkdirSync(tree);
    const files: string[] = [];
    for (let i = 0; i < 60; i++) {
      const f = join(tree, `part-${String(i).padStart(2, '0')}.bin`);
      writeFileSync(f, '');
      truncateSync(f, 16 * 1024 ** 3);
      files.push(f);
    }
    const before = readdirSync(tree).sort();
    const r = await t.call<{ job: Job }>('POST', '/api/v2/fs/xxhash', {
      body: { fileNames: files },
      headers: { prefer: 'respond-async' },
    });
    expect(r.status).toBe(202);
    const id = r.json.job.id;
    // the first batch (50 files) is being hashed
    await until(
      'xxhsum to run',
      () => pgrep(`${XXHSUM} -- ${tree}/part-00.bin`),
      (p) => p.length === 1,
    );
    const progress = (await t.call<{ job: Job }>('GET', `/api/v2/jobs/${id}`)).json.job.progress;
    expect(progress).toMatchObject({ phase: 'hash', done: 0, total: 60, percent: 0 });
    const c = await t.call<{ job: Job }>('POST', `/api/v2/jobs/${id}/cancel`, { body: {} });
    expect(c.status).toBe(200);
    expect(c.json.job).toMatchObject({ state: 'cancelled', error: { code: 'cancelled' } });
    expect(pgrep(`${XXHSUM} -- ${tree}/`)).toEqual([]);
    const rows = t.host.db
      .prepare("SELECT argv, note FROM audit_log WHERE request_id = ? AND kind = 'exec'")
      .all(c.json.job.requestId) as { argv: string; note: string | null }[];
    expect(rows.map((x) => [(JSON.parse(x.argv) as string[]).length, x.note])).toEqual([[52, 'cancelled']]);
    expect(readdirSync(tree).sort()).toEqual(before);
    expect(c.json.job.log.some((l) => l.startsWith('cancel: '))).toBe(true);
  }, 60_000);
});
