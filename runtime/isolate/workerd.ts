import { join } from 'node:path';
import { BINDING_SECRET_HEADER } from '../bindings/socket';
import { forwarder } from './forward';
import type { IsolateOptions, Isolated } from './types';

const COMPATIBILITY_DATE = '2025-01-01';

/**
 * Isolation mode on workerd (through Miniflare): dist/app.mjs in one worker whose SYSTEM,
 * DB_FETCH and EVENTS_FETCH are workerd `external` services on the host's binding socket, with
 * the secret header injected by workerd itself; the host forwards requests to workerd's own
 * loopback listener with keep-alive connections.
 */
export async function startWorkerd(o: IsolateOptions): Promise<Isolated> {
  const started = performance.now();
  // Imported here, not at the top: the bundled host would otherwise load Miniflare (≈1 s) on
  // every start, though only isolation mode needs it.
  const { Miniflare } = await import('miniflare');
  const external = {
    external: {
      address: `unix:${o.socket.path}`,
      http: { injectRequestHeaders: [{ name: BINDING_SECRET_HEADER, value: o.socket.secret }] },
    },
  };
  const mf = new Miniflare({
    modules: true,
    scriptPath: join(o.distDir, 'app.mjs'),
    compatibilityDate: COMPATIBILITY_DATE,
    bindings: { VARS: JSON.parse(JSON.stringify(o.vars)) as Record<string, unknown> },
    serviceBindings: { SYSTEM: external, DB_FETCH: external, EVENTS_FETCH: external },
    host: '127.0.0.1',
    port: 0,
  });
  const url = await mf.ready;
  const fwd = forwarder({ host: url.hostname, port: Number(url.port) });
  return {
    runtime: 'workerd',
    coldStartMs: performance.now() - started,
    fetch: fwd.fetch,
    async close() {
      fwd.close();
      await mf.dispose();
    },
  };
}
