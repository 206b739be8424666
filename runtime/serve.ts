import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createHost, type Host, type HostOptions } from './host';
import { startServer, type RunningServer, type FetchHandler } from './http/server';
import { withHostPages } from './docs-page';
import type { SqliteDb } from './db/database';
import { opAudit } from './db/audit';
import { listenAddress } from './config';
import { isolateRuntime } from './isolate/index';
import type { Isolated } from './isolate/types';
import { createLogger, lineLogger, type Logger } from './ops/logger';
import { requestObserver } from './ops/request-log';
import { probeIsolate, withHostServed } from './ops/served-by-host';
import { METRICS_CONTENT_TYPE } from './ops/metrics';
import type { IsolateState } from './ops/health';

export interface ServeOptions extends HostOptions {
  announceToken?: (db: SqliteDb) => Promise<void>;
  /** install SIGTERM/SIGINT/SIGHUP handlers (off in tests) */
  signals?: boolean;
  /** false: no line per request (the metrics and the audit trail still see every request) */
  accessLog?: boolean;
  /** The isolate process died (default: exit 1 after stopping). */
  onIsolateDeath?: (why: string) => void;
  /**
   * After the isolate died, how long the host goes on answering (health then says 503 `isolate:
   * dead`, so a load balancer sees it) before it stops. Default 0: it stops at once.
   */
  isolateDeathGraceMs?: number;
}

export interface Serving {
  host: Host;
  server: RunningServer;
  /** the metrics listener (config `metrics.listen`), when there is one */
  metricsServer?: { url: string; close(): Promise<void> };
  /** isolation mode: the runtime, its process id (deno) and its cold start */
  isolate?: Pick<Isolated, 'runtime' | 'pid' | 'coldStartMs'>;
  logger: Logger;
  stop(): Promise<void>;
}

/** Host + HTTP server, with graceful shutdown: finish in-flight requests, then close the DB. */
export async function serve(o: ServeOptions): Promise<Serving> {
  const started = performance.now();
  const logger = o.logger ?? createLogger({ format: o.config.log.format, level: o.config.log.level });
  const log = o.log ?? lineLogger(logger);
  const host = await createHost({ ...o, logger, log });
  await o.announceToken?.(host.db);
  let handler: FetchHandler = host.app;
  let closeIsolate: (() => Promise<void>) | undefined;
  // set once stop() exists (below): an isolate that dies stops the host
  const death: { handle?: (why: string) => void } = {};
  const runtime = isolateRuntime(o.config);
  let isolated: Isolated | undefined;
  let isolateDead = false;
  if (runtime) {
    // Loaded only when asked for: the isolate runners are large and the default mode never needs them.
    const { startIsolated } = await import('./isolate/index');
    isolated = await startIsolated(host, o.distDir, runtime, { onExit: (why) => death.handle?.(why), log });
    // the docs page and openapi.json come from the host (the isolate has no docs assets), and so
    // do health, version and metrics (they must answer when the isolate does not)
    handler = withHostServed(host, withHostPages(host, isolated));
    closeIsolate = isolated.close;
    const probed = isolated;
    host.telemetry.health.isolate = (): Promise<IsolateState> | IsolateState =>
      isolateDead ? 'dead' : probeIsolate(probed, host.env, host.vars);
  }
  const server = await startServer({
    config: o.config,
    env: host.env,
    handler,
    // in-process, host.app runs requests through the job gate itself; an isolate's answers go
    // through it here. Either way the server asks it when an answer's time ran out.
    gate: isolated
      ? { run: (c, a) => host.jobs.gate.run(c, a), timedOut: (c) => host.jobs.gate.timedOut(c) }
      : { timedOut: (c) => host.jobs.gate.timedOut(c) },
    onAnswered: requestObserver({
      logger: o.accessLog === false ? undefined : logger,
      metrics: host.telemetry.metrics,
      audit: opAudit(host.db),
      routes: host.manifest,
      basePath: host.vars.basePath ?? '/api/v2',
      tokens: host.env.TOKENS_DIRECT,
    }),
  });
  host.setTlsReloader(() => server.reloadTls());
  const metricsServer = o.config.metrics.listen ? await metricsListener(host, o.config.metrics.listen) : undefined;
  // Area start-up tasks (outbox delivery, stored traffic rules back into tc): not awaited, log only.
  host.startAreas();
  const apiUrl = `${server.url}${o.config.basePath === '/' ? '' : (o.config.basePath ?? '/api/v2')}`;
  logger.info(
    {
      url: apiUrl,
      mode: o.config.system.mode,
      isolate: runtime ?? null,
      readyMs: Math.round(performance.now() - started),
      ...(metricsServer ? { metrics: metricsServer.url } : {}),
    },
    `${o.config.productName} API listening on ${apiUrl} (${o.config.system.mode} system${runtime ? `, routes in ${runtime}` : ''}; ready in ${Math.round(performance.now() - started)} ms)`,
  );
  logger.info(`docs: ${apiUrl}/docs (every operation, its examples, Try-it-out with a token)`);
  let stopping: Promise<void> | undefined;
  const stop = () =>
    (stopping ??= (async () => {
      await server.shutdown();
      await metricsServer?.close();
      await closeIsolate?.();
      await host.close();
      logger.info('stopped');
      logger.flush();
    })());
  // The isolate died under us: the host exits non-zero (its supervisor restarts it) rather than answer 502s.
  death.handle = (why) => {
    isolateDead = true;
    logger.error({ isolate: runtime }, `isolate ${why}: stopping the host`);
    logger.flush();
    const grace = o.isolateDeathGraceMs ?? 0;
    const stopNow = () =>
      void stop()
        .catch((e: unknown) => logger.error(`shutdown failed: ${String(e)}`))
        .finally(() => {
          logger.flush();
          if (o.onIsolateDeath) o.onIsolateDeath(why);
          else process.exit(1);
        });
    if (grace > 0) setTimeout(stopNow, grace).unref();
    else stopNow();
  };
  if (o.signals !== false) {
    const onSignal = (sig: string) => {
      logger.info(`${sig}: finishing in-flight requests`);
      stop().then(
        () => process.exit(0),
        (e) => {
          logger.error(`shutdown failed: ${String(e)}`);
          logger.flush();
          process.exit(1);
        },
      );
    };
    process.once('SIGTERM', () => onSignal('SIGTERM'));
    process.once('SIGINT', () => onSignal('SIGINT'));
    process.on('SIGHUP', () => {
      server.reloadTls();
      logger.info('SIGHUP: TLS certificate reloaded');
    });
  }
  return {
    host,
    server,
    metricsServer,
    logger,
    stop,
    isolate: isolated && { runtime: isolated.runtime, pid: isolated.pid, coldStartMs: isolated.coldStartMs },
  };
}

/**
 * `metrics.listen`: GET /metrics without a token, on its own address (keep it on loopback or a
 * management network: whoever reaches it reads the host's counters). Nothing else is served.
 */
async function metricsListener(host: Host, address: string): Promise<{ url: string; close(): Promise<void> }> {
  const { host: name, port } = listenAddress(address);
  const server = http.createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://metrics.local').pathname;
    if ((req.method !== 'GET' && req.method !== 'HEAD') || path !== '/metrics') {
      res.writeHead(404, { 'content-type': 'text/plain; charset=utf-8' }).end('only GET /metrics is served here\n');
      return;
    }
    host.telemetry.metrics.text().then(
      (text) => res.writeHead(200, { 'content-type': METRICS_CONTENT_TYPE }).end(req.method === 'HEAD' ? '' : text),
      () => res.writeHead(500).end(),
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, name, () => resolve());
  });
  const bound = (server.address() as AddressInfo).port;
  return {
    url: `http://${name.includes(':') ? `[${name}]` : name}:${bound}/metrics`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
