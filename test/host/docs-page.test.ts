/**
 * The docs page (`/api/v2/docs`): Swagger UI rendering the appliance's own OpenAPI document,
 * served by the demo host with a strict Content-Security-Policy and nothing remote. Headless
 * Chromium (Debian's `chromium`, in .ci/run) loads it with every non-local host unresolvable,
 * and must see every area's tag and a few operations; it also saves docs/docs-page.png.
 */
import { execFile, execFileSync } from 'node:child_process';
import { promisify } from 'node:util';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { demoConfig, seedDemo } from '../../runtime/demo';
import { serve, type Serving } from '../../runtime/serve';
import { DOCS_CSP } from '../../runtime/docs-page';

const repo = resolve(import.meta.dirname, '../..');
const dist = join(repo, 'dist');
const run = promisify(execFile);
const CHROMIUM = ['/usr/bin/chromium', '/usr/bin/chromium-browser'].find((p) => existsSync(p));

let serving: Serving;
let state: string;
let profile: string;
let base: string;

/** Async: the demo host answers in this process, so its event loop must keep running. */
async function chromium(args: string[]): Promise<{ stdout: string; stderr: string }> {
  if (!CHROMIUM) throw new Error('chromium is missing: apt-get install chromium (Debian package, listed in .ci/run)');
  return await run(
    CHROMIUM,
    [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--no-first-run',
      `--user-data-dir=${profile}`,
      // no network beyond the demo: every other host name fails to resolve
      '--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1',
      '--enable-logging=stderr',
      '--v=0',
      '--virtual-time-budget=15000',
      ...args,
    ],
    { encoding: 'utf8', timeout: 90_000, maxBuffer: 64 * 1024 * 1024 },
  );
}

beforeAll(async () => {
  execFileSync(process.execPath, ['build.mjs', '--if-stale'], { cwd: repo, stdio: 'ignore' });
  state = mkdtempSync(join(tmpdir(), 'ballast-docs-'));
  profile = mkdtempSync(join(tmpdir(), 'ballast-docs-chromium-'));
  const config = demoConfig(repo, 0, state);
  seedDemo(repo, config);
  serving = await serve({ config, distDir: dist, signals: false, accessLog: false, log: () => undefined });
  base = `${serving.server.url}/api/v2`;
}, 120_000);

afterAll(async () => {
  await serving?.stop();
  rmSync(state, { recursive: true, force: true });
  rmSync(profile, { recursive: true, force: true });
});

describe('GET /api/v2/docs', () => {
  it('is served without a token, with a strict CSP, and its assets from the host', async () => {
    const page = await fetch(`${base}/docs`);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(page.headers.get('content-security-policy')).toBe(DOCS_CSP);
    expect(DOCS_CSP).not.toMatch(/unsafe-|https?:|\*/);
    const html = await page.text();
    expect(html).not.toMatch(/https?:\/\//);
    for (const asset of html.matchAll(/(?:src|href)="([^"]+)"/g)) {
      const r = await fetch(new URL(asset[1], base));
      expect([asset[1], r.status]).toEqual([asset[1], 200]);
    }
    expect((await fetch(`${base}/docs/../../etc/passwd`)).status).toBe(404);
    expect((await fetch(`${base}/docs/nosuch.js`)).status).toBe(404);
  });

  it('renders in headless Chromium offline: every area tag and some operations, no CSP violation', async () => {
    const { stdout, stderr } = await chromium(['--dump-dom', `${base}/docs`]);
    const doc = JSON.parse(readFileSync(join(dist, 'openapi.json'), 'utf8')) as { tags: { name: string }[] };
    expect(doc.tags.length).toBeGreaterThan(8);
    for (const t of doc.tags) expect(stdout, `tag ${t.name}`).toContain(`data-tag="${t.name}"`);
    for (const p of ['/api/v2/kerberos/conf', '/api/v2/network/interface', '/api/v2/s3/list', '/api/v2/fs/mount'])
      expect(stdout).toContain(p);
    expect(stderr).not.toMatch(/Content Security Policy/i);
  }, 120_000);

  it('saves a screenshot to docs/docs-page.png', async () => {
    const out = join(repo, 'docs/docs-page.png');
    await chromium([`--screenshot=${out}`, '--window-size=1280,1400', '--hide-scrollbars', `${base}/docs`]);
    expect(existsSync(out)).toBe(true);
  }, 120_000);
});
