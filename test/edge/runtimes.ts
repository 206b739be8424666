/**
 * The three ways the route bundle runs, each as a fresh demo appliance behind the real host
 * (HTTP listener, auth, limits): `node` (in-process), `workerd` and `deno` (isolate: the bundle in
 * another process, bindings over stateDir/bindings.sock). Shared by the edge tier and the bench.
 */
import http from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { demoConfig, seedDemo } from '../../runtime/demo';
import { serve, type Serving } from '../../runtime/serve';
import { createToken } from '../../runtime/tokens';

export type RuntimeName = 'node' | 'workerd' | 'deno';
export const RUNTIMES: RuntimeName[] = ['node', 'workerd', 'deno'];

export const repoDir = resolve(import.meta.dirname, '../..');
export const distDir = join(repoDir, 'dist');

export interface RunningRuntime {
  name: RuntimeName;
  serving: Serving;
  url: string;
  /** `*` */
  admin: string;
  /** every area's `:read` */
  reader: string;
  /** What onIsolateDeath saw, if the isolate died. */
  deaths: string[];
  /** serve() → listening, ms */
  startMs: number;
  stop(): Promise<void>;
}

export async function startRuntime(name: RuntimeName): Promise<RunningRuntime> {
  const state = mkdtempSync(
    // the same length for every runtime: answers that name a demo path differ only in the
    // random part, which edge.test.ts masks, so their content-length is the same
    join(process.env.BALLAST_TEST_TMP ?? tmpdir(), `ballast-edge-${name.padEnd(7, '_')}-`),
  );
  const config = demoConfig(repoDir, 0, state);
  seedDemo(repoDir, config);
  config.isolate = name === 'node' ? false : name;
  const deaths: string[] = [];
  const t0 = performance.now();
  let serving: Serving;
  try {
    serving = await serve({
      config,
      distDir,
      signals: false,
      accessLog: false,
      log: () => undefined,
      onIsolateDeath: (why) => deaths.push(why),
    });
  } catch (e) {
    rmSync(state, { recursive: true, force: true });
    throw e;
  }
  const startMs = performance.now() - t0;
  const admin = (await createToken(serving.host.db, 'edge-admin', ['*'])).token;
  const areas = ['certificate', 'dfs', 'fs', 'kerberos', 'keys', 'network', 'notification', 'pod', 's3', 'traffic'];
  const reader = (
    await createToken(
      serving.host.db,
      'edge-reader',
      areas.map((a) => `${a}:read`),
    )
  ).token;
  return {
    name,
    serving,
    url: serving.server.url,
    admin,
    reader,
    deaths,
    startMs,
    async stop() {
      await serving.stop();
      rmSync(state, { recursive: true, force: true });
    },
  };
}

export interface RawAnswer {
  status: number;
  /** `name: value` lines, names lower-case, sorted (a WHATWG Headers object always iterates sorted). */
  headers: string[];
  body: string;
}

/** Headers that legitimately differ between two runs: the request id and the date. */
const VARYING = new Set(['date', 'x-request-id']);

const agent = new http.Agent({ keepAlive: true });

/** One HTTP request, the answer's raw bytes (body as text, headers as sent). */
export function request(
  base: string,
  method: string,
  path: string,
  headers: Record<string, string>,
  body?: string,
): Promise<RawAnswer> {
  const u = new URL(path, base);
  return new Promise((done, fail) => {
    const h: Record<string, string> = { ...headers };
    if (body !== undefined) h['content-length'] = String(Buffer.byteLength(body));
    const req = http.request(
      { host: u.hostname, port: u.port, path: u.pathname + u.search, method, headers: h, agent },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('error', fail);
        res.on('end', () => {
          const lines: string[] = [];
          for (let i = 0; i < res.rawHeaders.length; i += 2) {
            const k = res.rawHeaders[i].toLowerCase();
            if (!VARYING.has(k)) lines.push(`${k}: ${res.rawHeaders[i + 1]}`);
          }
          done({ status: res.statusCode ?? 0, headers: lines.sort(), body: Buffer.concat(chunks).toString('utf8') });
        });
      },
    );
    req.on('error', fail);
    req.end(body);
  });
}
