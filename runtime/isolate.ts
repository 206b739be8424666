import { join } from 'node:path';
import type { Request as MfRequest, Response as MfResponseType } from 'miniflare';
import type { Host } from './host';
import type { FetchHandler } from './http/server';

export interface Isolated extends FetchHandler {
  fetch(request: Request): Promise<Response>;
  close(): Promise<void>;
}

const COMPATIBILITY_DATE = '2025-01-01';

/** Hand a WHATWG Response from our binding servers back to workerd in Miniflare's own classes. */
type MfResponseClass = typeof import('miniflare').Response;

async function toMf(MfResponse: MfResponseClass, res: Response): Promise<MfResponseType> {
  return new MfResponse(await res.arrayBuffer(), { status: res.status, headers: [...res.headers] });
}

async function fromMf(req: MfRequest): Promise<Request> {
  const body = req.method === 'GET' || req.method === 'HEAD' ? undefined : await req.arrayBuffer();
  return new Request(req.url, { method: req.method, headers: [...req.headers], body });
}

/**
 * Isolation mode: every route runs inside one workerd worker (dist/app.mjs) through Miniflare.
 * The handlers can then reach the system only through SYSTEM/DB/EVENTS, which Node serves.
 */
export async function startIsolated(host: Host, distDir: string): Promise<Isolated> {
  // Imported here, not at the top: the bundled host would otherwise load Miniflare (≈1 s) on
  // every start, though only isolation mode needs it.
  const { Miniflare, Response: MfResponse } = await import('miniflare');
  const mf = new Miniflare({
    modules: true,
    scriptPath: join(distDir, 'app.mjs'),
    compatibilityDate: COMPATIBILITY_DATE,
    bindings: { VARS: JSON.parse(JSON.stringify(host.vars)) },
    serviceBindings: {
      SYSTEM: async (req: MfRequest) => toMf(MfResponse, await host.bindings.fetchSystem(await fromMf(req))),
      DB_FETCH: async (req: MfRequest) => toMf(MfResponse, await host.bindings.fetchDb(await fromMf(req))),
      EVENTS_FETCH: async (req: MfRequest) => toMf(MfResponse, await host.bindings.fetchEvents(await fromMf(req))),
    },
  });
  await mf.ready;
  return {
    async fetch(request: Request): Promise<Response> {
      const body = request.method === 'GET' || request.method === 'HEAD' ? undefined : await request.arrayBuffer();
      const r = await mf.dispatchFetch(request.url, { method: request.method, headers: [...request.headers], body });
      const buf = await r.arrayBuffer();
      // Drop Miniflare's transport headers (mf-*, chunked framing) so answers match in-process ones.
      const headers = [...r.headers].filter(
        ([k]) => !k.startsWith('mf-') && k !== 'transfer-encoding' && k !== 'content-length',
      );
      return new Response(request.method === 'HEAD' || r.status === 204 ? null : buf, { status: r.status, headers });
    },
    close: () => mf.dispose(),
  };
}
