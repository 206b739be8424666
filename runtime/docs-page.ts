import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Reply } from '../handlers/core/pipeline';
import { basePathOf } from '../handlers/core/app';
import type { Env } from '../handlers/core/bindings';
import type { Vars } from '../handlers/core/vars';
import type { FetchHandler } from './http/server';

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

export function docsPages(distDir: string, title: string, basePath: () => string): (sub: string) => Reply | undefined {
  const dir = join(distDir, 'docs');
  const cache = new Map<string, string>();
  const read = (name: string) => {
    let v = cache.get(name);
    if (v === undefined) {
      v = readFileSync(join(dir, name), 'utf8');
      cache.set(name, v);
    }
    return v;
  };
  const headers = (type: string): Record<string, string> => ({
    'content-type': type,
    'content-security-policy': DOCS_CSP,
    'x-content-type-options': 'nosniff',
    'referrer-policy': 'no-referrer',
    'cache-control': 'no-cache',
  });
  return (sub) => {
    // every GET asks: only the docs' own paths cost a look at the disk
    if (!isDocsPath(sub)) return undefined;
    if (!existsSync(join(dir, 'index.html'))) return undefined;
    if (sub === '/docs' || sub === '/docs/') {
      const html = read('index.html')
        .replaceAll('{{base}}', escapeHtml(basePath()))
        .replaceAll('{{title}}', escapeHtml(title));
      return { status: 200, headers: headers('text/html; charset=utf-8'), body: html };
    }
    const name = sub.startsWith('/docs/') ? sub.slice('/docs/'.length) : '';
    const type = ASSETS[name];
    if (!type) return undefined;
    return { status: 200, headers: headers(type), body: read(name) };
  };
}

/**
 * `serve --isolate`: the isolate runs the routes (dist/app.mjs has no docs assets and no file
 * access), so the host app answers the unauthenticated pages itself — `<basePath>/openapi.json`
 * and `<basePath>/docs[/asset]` — and forwards everything else to the isolate.
 */
export function withHostPages(host: { app: FetchHandler; vars: Vars; env: Env }, isolate: FetchHandler): FetchHandler {
  const isPage = (request: Request) => {
    if (request.method !== 'GET' && request.method !== 'HEAD') return false;
    const base = basePathOf(host.vars);
    const path = new URL(request.url).pathname;
    if (base && path !== base && !path.startsWith(`${base}/`)) return false;
    const sub = path.slice(base.length);
    return sub === '/openapi.json' || isDocsPath(sub);
  };
  return {
    fetch: (request, env, ctx) =>
      isPage(request) ? host.app.fetch(request, host.env, ctx) : isolate.fetch(request, env, ctx),
  };
}
