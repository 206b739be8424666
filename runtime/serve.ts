import { createHost, type Host, type HostOptions } from './host';
import { startServer, type RunningServer, type FetchHandler } from './http/server';
import { bufferedAccessLog } from './http/access-log';
import { withHostPages } from './docs-page';
import type { SqliteDb } from './db/database';
import { isolateRuntime } from './isolate/index';
import type { Isolated } from './isolate/types';

export interface ServeOptions extends HostOptions {
  announceToken?: (db: SqliteDb) => Promise<void>;
  /** install SIGTERM/SIGINT/SIGHUP handlers (off in tests) */
  signals?: boolean;
  accessLog?: boolean;
  /** The isolate process died (default: exit 1 after stopping). */
  onIsolateDeath?: (why: string) => void;
}

export interface Serving {
  host: Host;
  server: RunningServer;
  /** isolation mode: the runtime, its process id (deno) and its cold start */
  isolate?: Pick<Isolated, 'runtime' | 'pid' | 'coldStartMs'>;
  stop(): Promise<void>;
}

/** Host + HTTP server, with graceful shutdown: finish in-flight requests, then close the DB. */
export async function serve(o: ServeOptions): Promise<Serving> {
  const started = performance.now();
  const host = await createHost(o);
  await o.announceToken?.(host.db);
  let handler: FetchHandler = host.app;
  let closeIsolate: (() => Promise<void>) | undefined;
  // set once stop() exists (below): an isolate that dies stops the host
  const death: { handle?: (why: string) => void } = {};
  const runtime = isolateRuntime(o.config);
  let isolated: Isolated | undefined;
  if (runtime) {
    // Loaded only when asked for: the isolate runners are large and the default mode never needs them.
    const { startIsolated } = await import('./isolate/index');
    isolated = await startIsolated(host, o.distDir, runtime, { onExit: (why) => death.handle?.(why), log: o.log });
    // the docs page and openapi.json come from the host (the isolate has no docs assets)
    handler = withHostPages(host, isolated);
    closeIsolate = isolated.close;
  }
  const accessLog = o.accessLog === false ? undefined : bufferedAccessLog((chunk) => process.stdout.write(chunk));
  const server = await startServer({
    config: o.config,
    env: host.env,
    handler,
    accessLog: accessLog?.line,
    // in-process, host.app runs requests through the job gate itself; an isolate's answers go
    // through it here. Either way the server asks it when an answer's time ran out.
    gate: isolated
      ? { run: (c, a) => host.jobs.gate.run(c, a), timedOut: (c) => host.jobs.gate.timedOut(c) }
      : { timedOut: (c) => host.jobs.gate.timedOut(c) },
  });
  host.setTlsReloader(() => server.reloadTls());
  // Area start-up tasks (outbox delivery, stored traffic rules back into tc): not awaited, log only.
  host.startAreas();
  const apiUrl = `${server.url}${o.config.basePath === '/' ? '' : (o.config.basePath ?? '/api/v2')}`;
  process.stdout.write(
    `${o.config.productName} API listening on ${apiUrl} (${o.config.system.mode} system${runtime ? `, routes in ${runtime}` : ''}; ready in ${Math.round(performance.now() - started)} ms)\n` +
      `docs: ${apiUrl}/docs (every operation, its examples, Try-it-out with a token)\n`,
  );
  let stopping: Promise<void> | undefined;
  const stop = () =>
    (stopping ??= (async () => {
      await server.shutdown();
      accessLog?.flush();
      await closeIsolate?.();
      await host.close();
    })());
  // The isolate died under us: the host exits non-zero (its supervisor restarts it) rather than answer 502s.
  death.handle = (why) => {
    process.stderr.write(`isolate ${why}: stopping the host\n`);
    void stop()
      .catch((e: unknown) => process.stderr.write(`shutdown failed: ${String(e)}\n`))
      .finally(() => (o.onIsolateDeath ? o.onIsolateDeath(why) : process.exit(1)));
  };
  if (o.signals !== false) {
    const onSignal = (sig: string) => {
      process.stdout.write(`${sig}: finishing in-flight requests\n`);
      stop().then(
        () => process.exit(0),
        (e) => {
          process.stderr.write(`shutdown failed: ${String(e)}\n`);
          process.exit(1);
        },
      );
    };
    process.once('SIGTERM', () => onSignal('SIGTERM'));
    process.once('SIGINT', () => onSignal('SIGINT'));
    process.on('SIGHUP', () => {
      server.reloadTls();
      process.stdout.write('SIGHUP: TLS certificate reloaded\n');
    });
  }
  return {
    host,
    server,
    stop,
    isolate: isolated && { runtime: isolated.runtime, pid: isolated.pid, coldStartMs: isolated.coldStartMs },
  };
}
