/**
 * The fs host operations on their own (runtime/areas/fs/ops.ts): the settings they are
 * configured with, and the read-text door's refusals that the routes cannot easily provoke.
 */
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import fsArea from '../../runtime/areas/fs';
import { areaSettings } from '../../runtime/host';

const fsSettings = (settings: Record<string, unknown>) => areaSettings(fsArea, settings);
import { SystemRefusal } from '../../runtime/system/types';
import { makeTestHost, type TestHost } from '../helpers/host';

let t: TestHost;
let base: string;

beforeAll(async () => {
  base = mkdtempSync(join(tmpdir(), 'ballast-fs-ops-'));
  mkdirSync(join(base, 'in'));
  writeFileSync(join(base, 'in', 'sums.xxh'), '0123456789abcdef  /a\n');
  symlinkSync('/etc/hostname', join(base, 'in', 'out-link'));
  t = await makeTestHost({ config: { settings: { fs: { readRoots: [join(base, 'in')] } } } });
});
afterAll(async () => {
  await t.close();
  rmSync(base, { recursive: true, force: true });
});

const refusal = (p: Promise<unknown>) =>
  p.then(
    () => null,
    (e: unknown) =>
      e instanceof SystemRefusal ? { status: e.status, message: e.message } : { status: -1, message: String(e) },
  );

describe('settings.fs', () => {
  it('defaults: the data roots for mounting, writing and reading, 100 000 entries at most', () => {
    const data = ['/mnt', '/srv', '/media', '/data'];
    expect(fsSettings({})).toEqual({
      mountRoots: data,
      writeRoots: data,
      readRoots: data,
      exploreMaxEntries: 100_000,
      pathRoot: '/',
    });
    expect(fsSettings({ fs: { mountRoots: ['/tank'] } })).toEqual({
      mountRoots: ['/tank'],
      writeRoots: ['/tank'],
      readRoots: ['/tank'],
      exploreMaxEntries: 100_000,
      pathRoot: '/',
    });
  });

  it('a wrong key or value stops the host at start, naming it', () => {
    expect(() => fsSettings({ fs: { readroots: ['/srv'] } })).toThrow(
      /^config: settings\.fs: Unrecognized key: "readroots"/,
    );
    expect(() => fsSettings({ fs: { readRoots: ['srv'] } })).toThrow(
      /settings\.fs\.readRoots\.0: must be an absolute path/,
    );
    expect(() => fsSettings({ fs: { exploreMaxEntries: 0 } })).toThrow(/settings\.fs\.exploreMaxEntries/);
  });
});

describe('fs/read-text', () => {
  it('reads a regular file below the roots', async () => {
    expect(await t.host.system.handle('fs/read-text', { path: join(base, 'in', 'sums.xxh') })).toEqual({
      content: '0123456789abcdef  /a\n',
    });
  });

  it('refuses a file over maxBytes (413), a symlink leading outside the roots (403), bad payloads (400)', async () => {
    expect(
      await refusal(t.host.system.handle('fs/read-text', { path: join(base, 'in', 'sums.xxh'), maxBytes: 4 })),
    ).toEqual({
      status: 413,
      message: `${join(base, 'in', 'sums.xxh')} is larger than 4 bytes`,
    });
    expect((await refusal(t.host.system.handle('fs/read-text', { path: join(base, 'in', 'out-link') })))?.status).toBe(
      403,
    );
    expect((await refusal(t.host.system.handle('fs/read-text', { path: 'relative' })))?.status).toBe(400);
    expect((await refusal(t.host.system.handle('fs/explore', { path: join(base, 'in'), depth: 0 })))?.status).toBe(400);
  });

  it('audits what it read (path and size, never the content)', () => {
    const row = t.host.db
      .prepare("SELECT argv, note FROM audit_log WHERE kind = 'fs/read-text' ORDER BY id DESC LIMIT 1")
      .get() as { argv: string; note: string };
    expect(row).toEqual({ argv: JSON.stringify([join(base, 'in', 'sums.xxh')]), note: '21 bytes' });
  });
});
