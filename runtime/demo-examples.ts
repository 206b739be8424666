import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { demoConfig, seedDemo } from './demo';
import { createHost, readManifest, type ManifestEntry } from './host';
import { createToken } from './tokens';
import type { RouteExample } from '../handlers/core/route';

export interface ExampleRun {
  route: ManifestEntry & { operationId?: string; examples?: RouteExample[] };
  index: number;
  example: RouteExample;
  /** What the example declares (default 200). */
  expected: number;
  status: number;
  contentType: string;
  /** The answer: parsed JSON when it is JSON, else the text. */
  body: unknown;
}

/** `/api/v2/x/:name/y` with the example's params filled in (URL-encoded) and its query appended. */
export function exampleUrl(path: string, e: RouteExample): string {
  const p = path.replace(/:(\w+)/g, (_, k: string) => {
    const v = e.params?.[k];
    if (v === undefined) throw new Error(`example "${e.summary}" of ${path} gives no value for :${k}`);
    return encodeURIComponent(v);
  });
  const q = new URLSearchParams(e.query ?? {}).toString();
  return `http://demo.local${p}${q ? `?${q}` : ''}`;
}

/**
 * Runs every example of every route of the manifest, each on a FRESH demo appliance (demoConfig +
 * seedDemo in a private directory, the built route bundles), as an admin token: what a user of
 * `npm start` meets when they try that example first.
 */
export async function runDemoExamples(
  repo: string,
  distDir: string,
  only?: (r: ManifestEntry) => boolean,
): Promise<ExampleRun[]> {
  const runs: ExampleRun[] = [];
  const manifest = readManifest(distDir) as ExampleRun['route'][];
  for (const route of manifest) {
    if (only && !only(route)) continue;
    for (const [index, example] of (route.examples ?? []).entries()) {
      const state = mkdtempSync(join(tmpdir(), 'ballast-demo-example-'));
      const config = demoConfig(repo, 0, state);
      seedDemo(repo, config);
      const host = await createHost({ config, distDir, log: () => undefined }).catch((e: unknown) => {
        rmSync(state, { recursive: true, force: true });
        throw e;
      });
      try {
        const { token } = await createToken(host.db, 'admin', ['*']);
        const init: RequestInit = { method: route.method, headers: { token, 'content-type': 'application/json' } };
        if (route.method !== 'GET') init.body = JSON.stringify(example.body ?? {});
        const res = await host.app.fetch(new Request(exampleUrl(route.path, example), init), host.env);
        const text = await res.text();
        const contentType = res.headers.get('content-type') ?? '';
        let body: unknown = text;
        if (contentType.includes('json') || contentType.startsWith('application/string')) {
          try {
            body = JSON.parse(text);
          } catch {
            body = text;
          }
        }
        runs.push({ route, index, example, expected: example.status ?? 200, status: res.status, contentType, body });
      } finally {
        await host.close();
        rmSync(state, { recursive: true, force: true });
      }
    }
  }
  return runs;
}
