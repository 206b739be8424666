/**
 * The docs page (`/api/v2/docs`): Swagger UI rendering the appliance's own OpenAPI document,
 * served by the demo host with a strict Content-Security-Policy and nothing remote. Headless
 * Chromium (Debian's `chromium`, in .ci/run) loads it with every non-local host unresolvable,
 * and must see every area's tag and a few operations; it also saves docs/docs-page.png. Then, driven
 * over the DevTools protocol (`--remote-debugging-pipe`, no extra npm package), it does what a user
 * does: Authorize with a token, open GET /kerberos/conf, "Try it out", "Execute", and reads the
 * answer Swagger UI shows (status 200 and the demo's realm) — one authorised request from the page.
 * It also types into the search box (`make_filesystem`, an operationId, a summary's words), opens
 * the one operation found, and follows a sidebar link back to an area. Over plain HTTP: each asset
 * has its own strong ETag, a matching If-None-Match gets a 304 of no body, and an Accept-Encoding
 * with gzip gets gzip that unzips to the file in dist/docs.
 */
import { execFile, execFileSync, spawn, type ChildProcess } from 'node:child_process';
import type { Readable, Writable } from 'node:stream';
import { promisify } from 'node:util';
import { copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { gunzipSync } from 'node:zlib';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { demoConfig, seedDemo } from '../../runtime/demo';
import { serve, type Serving } from '../../runtime/serve';
import { DOCS_CSP } from '../../runtime/docs-page';
import { createToken } from '../../runtime/tokens';
import { privateDir } from '../helpers/tmp';
import { rawGet } from '../helpers/raw-get';

const repo = resolve(import.meta.dirname, '../..');
const dist = join(repo, 'dist');
const run = promisify(execFile);
const CHROMIUM = ['/usr/bin/chromium', '/usr/bin/chromium-browser'].find((p) => existsSync(p));

let serving: Serving;
let state: string;
let profile: string;
let base: string;
/** Browsers launched: each gets its own profile (a browser left running cannot lock the next out). */
let launches = 0;

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

type CdpMessage = { id?: number; method?: string; sessionId?: string; result?: unknown; error?: { message: string } };

/**
 * Chromium driven over the DevTools protocol on a pipe (fd 3: commands in, fd 4: events and answers
 * out, each message JSON ending in NUL): enough to evaluate scripts in a page and type into it.
 */
class Browser {
  private next = 1;
  private pending = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
  private buf = '';
  private waiters: ((m: CdpMessage) => boolean)[] = [];
  private readonly exited: Promise<void>;
  readonly stderr: string[] = [];
  private constructor(private readonly proc: ChildProcess) {
    const out = proc.stdio[4] as Readable;
    out.setEncoding('utf8');
    out.on('data', (chunk: string) => {
      this.buf += chunk;
      let nul: number;
      while ((nul = this.buf.indexOf('\0')) >= 0) {
        const msg = JSON.parse(this.buf.slice(0, nul)) as CdpMessage;
        this.buf = this.buf.slice(nul + 1);
        if (msg.method) for (const w of this.waiters.splice(0)) if (!w(msg)) this.waiters.push(w);
        const p = msg.id === undefined ? undefined : this.pending.get(msg.id);
        if (!p || msg.id === undefined) continue;
        this.pending.delete(msg.id);
        if (msg.error) p.reject(new Error(`CDP: ${msg.error.message}`));
        else p.resolve(msg.result);
      }
    });
    proc.stderr?.setEncoding('utf8');
    proc.stderr?.on('data', (c: string) => this.stderr.push(c));
    this.exited = new Promise((resolve) => proc.once('exit', () => resolve()));
    void this.exited.then(() => {
      for (const p of this.pending.values())
        p.reject(new Error(`chromium exited: ${this.stderr.join('').slice(-2000)}`));
      this.pending.clear();
    });
  }

  static launch(): Browser {
    if (!CHROMIUM) throw new Error('chromium is missing: apt-get install chromium (Debian package, listed in .ci/run)');
    const proc = spawn(
      CHROMIUM,
      [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--no-first-run',
        `--user-data-dir=${profile}-cdp${++launches}`,
        '--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1',
        '--remote-debugging-pipe',
        '--enable-logging=stderr',
        '--v=0',
        '--window-size=1280,1400',
        'about:blank',
      ],
      { stdio: ['ignore', 'ignore', 'pipe', 'pipe', 'pipe'] },
    );
    return new Browser(proc);
  }

  send(method: string, params: Record<string, unknown> = {}, sessionId?: string): Promise<unknown> {
    const id = this.next++;
    const p = new Promise<unknown>((resolve, reject) => this.pending.set(id, { resolve, reject }));
    (this.proc.stdio[3] as Writable).write(`${JSON.stringify({ id, method, params, sessionId })}\0`);
    return p;
  }

  /** Resolves on the next event `method` of `sessionId`. */
  event(method: string, sessionId: string): Promise<void> {
    return new Promise((resolve) =>
      this.waiters.push((m) => {
        if (m.method !== method || m.sessionId !== sessionId) return false;
        resolve();
        return true;
      }),
    );
  }

  /** A new tab, loaded with `url` (its load event fired); returns the session to talk to it. */
  async open(url: string): Promise<string> {
    const { targetId } = (await this.send('Target.createTarget', { url: 'about:blank' })) as { targetId: string };
    const { sessionId } = (await this.send('Target.attachToTarget', { targetId, flatten: true })) as {
      sessionId: string;
    };
    await this.send('Page.enable', {}, sessionId);
    const loaded = this.event('Page.loadEventFired', sessionId);
    await this.send('Page.navigate', { url }, sessionId);
    await loaded;
    return sessionId;
  }

  /** Evaluates `expression` (may be a promise) in the page and returns its JSON value. */
  async eval(sessionId: string, expression: string): Promise<unknown> {
    const r = (await this.send(
      'Runtime.evaluate',
      { expression, awaitPromise: true, returnByValue: true, timeout: 30_000 },
      sessionId,
    )) as { result: { value?: unknown }; exceptionDetails?: { exception?: { description?: string }; text: string } };
    if (r.exceptionDetails)
      throw new Error(`in page: ${r.exceptionDetails.exception?.description ?? r.exceptionDetails.text}`);
    return r.result.value;
  }

  async close(): Promise<void> {
    this.proc.kill('SIGTERM');
    await this.exited;
    // its profile goes in afterAll: Chromium's helper processes may still be writing it for a
    // moment after the browser exits (ENOTEMPTY seen under load)
  }
}

/**
 * In-page: `__waitFor` resolves with the first element matching `selector` (and `text`, if given)
 * once it is in the DOM, watching mutations rather than polling; `__until` once `ok()` holds (it
 * may turn on a scroll, which no mutation shows: polled). Each gives up after 20 s with an error
 * saying what it waited for (a CDP evaluate of a promise has no timeout of its own), so a failing
 * test ends and closes its browser.
 */
const WAIT_FOR = `window.__waitFor = (selector, text) => new Promise((resolve, reject) => {
  const find = () => [...document.querySelectorAll(selector)].find((e) => !text || e.textContent.includes(text));
  const now = find();
  if (now) return resolve(now);
  const mo = new MutationObserver(() => { const e = find(); if (e) { mo.disconnect(); clearTimeout(t); resolve(e); } });
  const t = setTimeout(() => { mo.disconnect(); reject(new Error('not in the page after 20 s: ' + selector + ' ' + (text || ''))); }, 20000);
  mo.observe(document.documentElement, { childList: true, subtree: true, characterData: true, attributes: true });
});
window.__until = (ok, what) => new Promise((resolve, reject) => {
  const since = Date.now();
  const check = () => {
    if (ok()) resolve(true);
    else if (Date.now() - since > 20000) reject(new Error('still not so after 20 s: ' + what));
    else setTimeout(check, 50);
  };
  check();
});`;

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
  for (const dir of [profile, ...Array.from({ length: launches }, (_, i) => `${profile}-cdp${i + 1}`)])
    rmSync(dir, { recursive: true, force: true, maxRetries: 20, retryDelay: 100 });
});

const ASSETS = ['swagger-ui-bundle.js', 'swagger-ui.css', 'docs.js', 'docs.css'];

describe('the docs assets: ETag, 304 and gzip', () => {
  it('each asset has its own strong ETag, and without Accept-Encoding the file as it is', async () => {
    const etags = new Set<string>();
    for (const name of ASSETS) {
      const r = await rawGet(`${base}/docs/${name}`);
      expect([name, r.status]).toEqual([name, 200]);
      expect(r.headers.etag).toMatch(/^"[A-Za-z0-9_-]{43}"$/);
      expect(r.headers['cache-control']).toBe('no-cache');
      expect(r.headers.vary).toBe('accept-encoding');
      expect(r.headers['content-encoding']).toBeUndefined();
      expect(r.headers['content-security-policy']).toBe(DOCS_CSP);
      expect(r.headers['content-length']).toBe(String(r.body.length));
      expect(r.body.equals(readFileSync(join(dist, 'docs', name))), name).toBe(true);
      etags.add(r.headers.etag!);
      // the same bytes, the same tag: computed from the bytes, not per request
      expect((await rawGet(`${base}/docs/${name}`)).headers.etag).toBe(r.headers.etag);
    }
    expect(etags.size).toBe(ASSETS.length);
  });

  it('answers 304 with no body to a matching If-None-Match, 200 to another tag', async () => {
    const url = `${base}/docs/swagger-ui-bundle.js`;
    const { headers } = await rawGet(url);
    const etag = headers.etag!;
    for (const given of [etag, `W/${etag}`, `"other", ${etag}`, '*']) {
      const r = await rawGet(url, { 'if-none-match': given });
      expect([given, r.status, r.body.length]).toEqual([given, 304, 0]);
      expect(r.headers.etag).toBe(etag);
      expect(r.headers['cache-control']).toBe('no-cache');
    }
    const changed = await rawGet(url, { 'if-none-match': '"not-this-one"' });
    expect(changed.status).toBe(200);
    expect(changed.body.equals(readFileSync(join(dist, 'docs/swagger-ui-bundle.js')))).toBe(true);
    // another file's tag is no match
    const css = (await rawGet(`${base}/docs/swagger-ui.css`)).headers.etag!;
    expect((await rawGet(url, { 'if-none-match': css })).status).toBe(200);
  });

  it('with Accept-Encoding: gzip, gzip whose gunzip is the file (its own ETag, 304 on it too)', async () => {
    for (const name of ['swagger-ui-bundle.js', 'swagger-ui.css']) {
      const file = readFileSync(join(dist, 'docs', name));
      const plain = await rawGet(`${base}/docs/${name}`, { 'accept-encoding': 'identity' });
      expect(plain.headers['content-encoding']).toBeUndefined();
      const r = await rawGet(`${base}/docs/${name}`, { 'accept-encoding': 'gzip, deflate, br' });
      expect([name, r.status, r.headers['content-encoding'], r.headers.vary]).toEqual([
        name,
        200,
        'gzip',
        'accept-encoding',
      ]);
      expect(r.headers['content-length']).toBe(String(r.body.length));
      expect(r.body.length).toBeLessThan(file.length / 2);
      expect(gunzipSync(r.body).equals(file), name).toBe(true);
      expect(r.headers.etag).toMatch(/^"[A-Za-z0-9_-]{43}\.gz"$/);
      expect(r.headers.etag).not.toBe(plain.headers.etag);
      const again = await rawGet(`${base}/docs/${name}`, {
        'accept-encoding': 'gzip',
        'if-none-match': r.headers.etag!,
      });
      expect([again.status, again.body.length, again.headers.etag]).toEqual([304, 0, r.headers.etag]);
    }
    // gzip refused (q=0), or only some other coding: the file as it is
    for (const ae of ['gzip;q=0, identity', 'br', '*;q=0']) {
      const r = await rawGet(`${base}/docs/swagger-ui.css`, { 'accept-encoding': ae });
      expect([ae, r.headers['content-encoding']]).toEqual([ae, undefined]);
      expect(r.body.equals(readFileSync(join(dist, 'docs/swagger-ui.css')))).toBe(true);
    }
    // a HEAD says what a GET would send, with no body
    const head = await rawGet(`${base}/docs/swagger-ui.css`, { 'accept-encoding': 'gzip' }, 'HEAD');
    expect([head.status, head.headers['content-encoding'], head.body.length]).toEqual([200, 'gzip', 0]);
  });
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
    expect((await fetch(`${base}/docs/constructor`)).status).toBe(404);
  });

  it('renders in headless Chromium offline: every area tag and some operations, no CSP violation', async () => {
    const { stdout, stderr } = await chromium(['--dump-dom', `${base}/docs`]);
    const doc = JSON.parse(readFileSync(join(dist, 'openapi.json'), 'utf8')) as { tags: { name: string }[] };
    expect(doc.tags.length).toBeGreaterThan(8);
    for (const t of doc.tags) expect(stdout, `tag ${t.name}`).toContain(`data-tag="${t.name}"`);
    // the search box and the areas sidebar, a link per tag
    expect(stdout).toContain('class="operation-filter-input');
    expect(stdout).toContain('<nav class="docs-nav"');
    for (const t of doc.tags) expect(stdout, `nav ${t.name}`).toContain(`href="#/${t.name}"`);
    for (const p of ['/api/v2/kerberos/conf', '/api/v2/network/interface', '/api/v2/s3/list', '/api/v2/fs/mount'])
      expect(stdout).toContain(p);
    expect(stderr).not.toMatch(/Content Security Policy/i);
  }, 120_000);

  it('takes a screenshot of the page (BALLAST_DOCS_SCREENSHOT=docs/docs-page.png refreshes the README picture)', async () => {
    const out = join(privateDir('docs-shot'), 'docs-page.png');
    await chromium([`--screenshot=${out}`, '--window-size=1280,1400', '--hide-scrollbars', `${base}/docs`]);
    const png = readFileSync(out);
    // a PNG of the window's size, with more in it than a blank page (a blank 1280x1400 PNG is ~10 KB)
    expect([png.subarray(1, 4).toString('latin1'), png.readUInt32BE(16), png.readUInt32BE(20)]).toEqual([
      'PNG',
      1280,
      1400,
    ]);
    expect(png.length).toBeGreaterThan(40_000);
    if (process.env.BALLAST_DOCS_SCREENSHOT) copyFileSync(out, resolve(repo, process.env.BALLAST_DOCS_SCREENSHOT));
  }, 120_000);

  it('searches operations by path, operationId or summary, opens one, and the sidebar leads back to an area', async () => {
    const browser = Browser.launch();
    try {
      const s = await browser.open(`${base}/docs`);
      await browser.eval(s, WAIT_FOR);
      /** Types `text` over the search box's content; resolves with the paths of the operations then shown. */
      const search = async (text: string) => {
        await browser.eval(
          s,
          `window.__waitFor('.operation-filter-input:not([disabled])').then((e) => { e.focus(); e.select(); return true; })`,
        );
        await browser.send('Input.insertText', { text }, s);
        // Swagger UI applies the box 250 ms after the last key; then the page shows as many
        // operations as its (filtered) state holds
        return (await browser.eval(
          s,
          `window.__until(() => {
            if (window.ui.layoutSelectors.currentFilter() !== ${JSON.stringify(text)}) return false;
            const n = window.ui.specSelectors.taggedOperations().reduce((n, t) => n + t.get('operations').size, 0);
            return document.querySelectorAll('.opblock').length === n;
          }, 'the page shows what the search for ' + ${JSON.stringify(JSON.stringify(text))} + ' found').then(() => [...document.querySelectorAll('.opblock-summary-path')].map((e) => e.getAttribute('data-path')))`,
        )) as string[];
      };
      const path = '/api/v2/fs/make_filesystem';
      // a path (Swagger UI's own filter matches paths and tags), an operationId and a summary's
      // words (docs.js's opsFilter): each finds that one operation
      expect(await search('make_filesystem')).toEqual([path]);
      expect(await search('makeFilesystem')).toEqual([path]);
      expect(await search('mkfs -t')).toEqual([path]);
      expect(await search('no-such-operation')).toEqual([]);
      const shown = await search('make_filesystem');
      expect(shown).toEqual([path]);
      // open it: its path and body are on screen, another area's operation and tag are not in the page
      const op = '#operations-fs-fs_makeFilesystem';
      const opened = (await browser.eval(
        s,
        `window.__waitFor('${op} .opblock-summary-control').then((e) => { e.click(); return window.__waitFor('${op} .opblock-body'); }).then((body) => {
          const p = document.querySelector('${op} .opblock-summary-path');
          p.scrollIntoView();
          const r = p.getBoundingClientRect();
          return {
            path: p.getAttribute('data-path'),
            text: p.textContent.replace(/\u200b/g, ''),
            visible: p.checkVisibility() && body.checkVisibility() && r.height > 0 && r.top >= 0 && r.bottom <= innerHeight,
            kerberosOp: !!document.querySelector('#operations-kerberos-kerberos_confGet'),
            kerberosTag: !!document.querySelector('.opblock-tag[data-tag="kerberos"]'),
            tags: [...document.querySelectorAll('.opblock-tag')].map((t) => t.getAttribute('data-tag')),
          };
        })`,
      )) as Record<string, unknown>;
      expect(opened).toEqual({
        path,
        text: path,
        visible: true,
        kerberosOp: false,
        kerberosTag: false,
        tags: ['fs'],
      });
      // the sidebar: its kerberos link clears the search and scrolls to that area, deep-linked
      const nav = (await browser.eval(
        s,
        `window.__waitFor('.docs-nav a[href="#/kerberos"]').then((a) => { a.click(); return window.__until(() => {
          const t = document.querySelector('.opblock-tag[data-tag="kerberos"]');
          if (!t) return false;
          const top = t.getBoundingClientRect().top;
          // (scrollIntoView may leave it a fraction of a pixel above the top)
          return top > -1 && top < innerHeight / 2;
        }, 'the kerberos section is scrolled into view'); }).then(() => ({
          filter: document.querySelector('.operation-filter-input').value,
          hash: location.hash,
          kerberosOp: !!document.querySelector('#operations-kerberos-kerberos_confGet'),
          links: [...document.querySelectorAll('.docs-nav a')].map((a) => a.textContent),
        }))`,
      )) as { filter: string; hash: string; kerberosOp: boolean; links: string[] };
      const doc = JSON.parse(readFileSync(join(dist, 'openapi.json'), 'utf8')) as { tags: { name: string }[] };
      expect(nav).toEqual({ filter: '', hash: '#/kerberos', kerberosOp: true, links: doc.tags.map((t) => t.name) });
      expect(browser.stderr.join('')).not.toMatch(/Content Security Policy/i);
    } finally {
      await browser.close();
    }
  }, 120_000);

  it('sends one authorised request from "Try it out": GET /kerberos/conf answers 200 with the realm', async () => {
    const { token } = await createToken(serving.host.db, 'docs-page-try-it', ['*']);
    const direct: unknown = await (await fetch(`${base}/kerberos/conf`, { headers: { token } })).json();
    const realm = 'CORP.EXAMPLE.COM';
    expect(JSON.stringify(direct)).toContain(`default_realm = ${realm}`);
    const browser = Browser.launch();
    try {
      const s = await browser.open(`${base}/docs`);
      await browser.eval(s, WAIT_FOR);
      const click = (selector: string, text?: string) =>
        browser.eval(
          s,
          `window.__waitFor(${JSON.stringify(selector)}, ${JSON.stringify(text ?? '')}).then((e) => { e.scrollIntoView(); e.click(); return e.textContent; })`,
        );
      // Authorize: the `token` apiKey scheme, typed into its field as a user would.
      await click('.scheme-container button.authorize');
      await browser.eval(
        s,
        `window.__waitFor('.modal-ux input').then((e) => { e.focus(); return e.getAttribute('aria-label') ?? e.type; })`,
      );
      await browser.send('Input.insertText', { text: token }, s);
      await click('.modal-ux .auth-btn-wrapper button.authorize');
      await browser.eval(s, `window.__waitFor('.modal-ux .auth-btn-wrapper button', 'Logout').then(() => true)`);
      await click('.modal-ux button.close-modal');
      // GET /kerberos/conf → Try it out → Execute
      await click('#operations-kerberos-kerberos_confGet .opblock-summary-control');
      await click('#operations-kerberos-kerberos_confGet button.try-out__btn');
      await click('#operations-kerberos-kerberos_confGet button.execute');
      const shown = (await browser.eval(
        s,
        `window.__waitFor('#operations-kerberos-kerberos_confGet .live-responses-table tr.response td.response-col_status').then((st) => {
          const op = document.getElementById('operations-kerberos-kerberos_confGet');
          return {
            status: st.textContent.trim(),
            body: op.querySelector('.live-responses-table .response-col_description pre')?.textContent ?? '',
            curl: op.querySelector('.curl-command')?.textContent ?? '',
            url: op.querySelector('.request-url')?.textContent ?? '',
          };
        })`,
      )) as { status: string; body: string; curl: string; url: string };
      expect(shown.status).toBe('200');
      expect(shown.url.replace(/^Request URL/, '').trim()).toBe(`${base}/kerberos/conf`);
      // the request carried the token the user typed
      expect(shown.curl).toContain(`token: ${token}`);
      // the answer as the page shows it: the demo's krb5.conf (its realm), the same JSON as a direct call
      expect(shown.body).toContain(realm);
      expect(JSON.parse(shown.body)).toEqual(direct);
      expect(browser.stderr.join('')).not.toMatch(/Content Security Policy/i);
    } finally {
      await browser.close();
    }
  }, 120_000);
});
