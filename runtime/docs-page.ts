import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { constants as zlibConstants, gzip as zlibGzip } from 'node:zlib';
import type { Reply } from '../handlers/core/pipeline';
import { basePathOf } from '../handlers/core/app';
import type { Env } from '../handlers/core/bindings';
import type { Vars } from '../handlers/core/vars';
import type { FetchHandler } from './http/server';
import { routedBetween } from './ops/served-by-host';

/**
 * The docs page (`<basePath>/docs`): Swagger UI (swagger-ui-dist, copied to dist/docs by
 * build.mjs) rendering `<basePath>/openapi.json`, served from the host with nothing remote and a
 * strict Content-Security-Policy: scripts, styles and the document from this origin only.
 */
export const DOCS_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "font-src 'self'",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

const ASSETS: Record<string, string> = {
  'swagger-ui-bundle.js': 'text/javascript; charset=utf-8',
  'swagger-ui.css': 'text/css; charset=utf-8',
  'docs.js': 'text/javascript; charset=utf-8',
  'docs.css': 'text/css; charset=utf-8',
};

/** The docs page and its assets, as sub-paths of the base path. */
const isDocsPath = (sub: string) => sub === '/docs' || sub.startsWith('/docs/');

const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

const gzip = promisify(zlibGzip);

/**
 * One asset, read once: its bytes and strong ETag (a SHA-256 of the bytes), and its gzip form
 * (made once, on the first request that accepts it; absent when gzip would not be smaller) with
 * its own ETag, since it is another representation.
 */
interface Asset {
  type: string;
  bytes: Uint8Array<ArrayBuffer>;
  etag: string;
  gzipEtag: string;
  gzip?: Promise<Uint8Array<ArrayBuffer> | null>;
}

/**
 * Whether an Accept-Encoding value accepts gzip: `gzip` (or `x-gzip`) listed with a q above 0,
 * or not listed and `*` is.
 */
export function acceptsGzip(value: string | null): boolean {
  if (!value) return false;
  let star = false;
  for (const part of value.split(',')) {
    const [coding, ...params] = part.split(';').map((p) => p.trim().toLowerCase());
    const q = params.find((p) => p.startsWith('q='));
    const accepted = !q || !(Number(q.slice(2)) <= 0);
    if (coding === 'gzip' || coding === 'x-gzip') return accepted;
    if (coding === '*') star = accepted;
  }
  return star;
}

/**
 * The ETag of `etags` that an If-None-Match value names (weak comparison, as RFC 9110 asks for
 * If-None-Match), `*` naming the first; undefined when it names none of them.
 */
function matchedEtag(ifNoneMatch: string | null, etags: string[]): string | undefined {
  if (ifNoneMatch === null) return undefined;
  if (ifNoneMatch.trim() === '*') return etags[0];
  const given = ifNoneMatch.split(',').map((t) => t.trim().replace(/^W\//, ''));
  return etags.find((e) => given.includes(e));
}

export function docsPages(
  distDir: string,
  title: string,
  basePath: () => string,
): (sub: string, header: (name: string) => string | null) => Reply | undefined | Promise<Reply | undefined> {
  const dir = join(distDir, 'docs');
  let page: string | undefined;
  const assets = new Map<string, Asset>();
  const asset = (name: string, type: string): Asset => {
    let a = assets.get(name);
    if (!a) {
      const bytes = new Uint8Array(readFileSync(join(dir, name)));
      const hash = createHash('sha256').update(bytes).digest('base64url');
      a = { type, bytes, etag: `"${hash}"`, gzipEtag: `"${hash}.gz"` };
      assets.set(name, a);
    }
    return a;
  };
  const gzipOf = (a: Asset) =>
    (a.gzip ??= gzip(a.bytes, { level: zlibConstants.Z_BEST_COMPRESSION }).then((z) =>
      z.byteLength < a.bytes.byteLength ? new Uint8Array(z) : null,
    ));
  const headers = (type: string): Record<string, string> => ({
    'content-type': type,
    'content-security-policy': DOCS_CSP,
    'x-content-type-options': 'nosniff',
    'referrer-policy': 'no-referrer',
    // the browser keeps the asset and asks again with If-None-Match: a 304 of no body, mostly
    'cache-control': 'no-cache',
  });
  const assetReply = async (a: Asset, header: (name: string) => string | null): Promise<Reply> => {
    const zipped = acceptsGzip(header('accept-encoding')) ? await gzipOf(a) : null;
    const h = { ...headers(a.type), vary: 'accept-encoding' };
    const unchanged = matchedEtag(header('if-none-match'), zipped ? [a.gzipEtag, a.etag] : [a.etag, a.gzipEtag]);
    if (unchanged) return { status: 304, headers: { ...h, etag: unchanged }, body: null };
    if (!zipped) return { status: 200, headers: { ...h, etag: a.etag }, body: a.bytes };
    return { status: 200, headers: { ...h, etag: a.gzipEtag, 'content-encoding': 'gzip' }, body: zipped };
  };
  return (sub, header) => {
    // every GET asks: only the docs' own paths cost a look at the disk
    if (!isDocsPath(sub)) return undefined;
    if (!existsSync(join(dir, 'index.html'))) return undefined;
    if (sub === '/docs' || sub === '/docs/') {
      page ??= readFileSync(join(dir, 'index.html'), 'utf8');
      const html = page.replaceAll('{{base}}', escapeHtml(basePath())).replaceAll('{{title}}', escapeHtml(title));
      return { status: 200, headers: headers('text/html; charset=utf-8'), body: html };
    }
    const name = sub.startsWith('/docs/') ? sub.slice('/docs/'.length) : '';
    // own keys only: `/docs/constructor` is no asset
    const type = Object.hasOwn(ASSETS, name) ? ASSETS[name] : undefined;
    if (!type) return undefined;
    return assetReply(asset(name, type), header);
  };
}

/**
 * `serve --isolate`: the isolate runs the routes (dist/app.mjs has no docs assets and no file
 * access), so the host app answers the unauthenticated pages itself — `<basePath>/openapi.json`
 * and `<basePath>/docs[/asset]` — and forwards everything else to the isolate. The request goes to
 * the host app whole, so its If-None-Match and Accept-Encoding reach the docs assets, and the
 * server writes the answer's bytes as they are (a gzip asset stays gzip).
 */
export function withHostPages(host: { app: FetchHandler; vars: Vars; env: Env }, isolate: FetchHandler): FetchHandler {
  const isPage = (method: string, path: string) => {
    if (method !== 'GET' && method !== 'HEAD') return false;
    const base = basePathOf(host.vars);
    if (base && path !== base && !path.startsWith(`${base}/`)) return false;
    const sub = path.slice(base.length);
    return sub === '/openapi.json' || isDocsPath(sub);
  };
  return routedBetween(host, isolate, isPage);
}
