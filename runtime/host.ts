import { configIssuesText } from './config-hints';
import { readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { basePathOf, createApp, fetchVia, type App, type AppEntry, type AppOptions } from '../handlers/core/app';
import { docsPages } from './docs-page';
import { openapi } from '../handlers/core/openapi';
import type { Env } from '../handlers/core/bindings';
import type { RouteModule, Method } from '../handlers/core/route';
import type { LongOperation } from '../handlers/core/route-module';
import type { Vars } from '../handlers/core/vars';
import {
  dbFile,
  DEFAULT_CONFIG_FILE,
  DIRECTORY_PATH_KEYS,
  readHostId,
  READ_ONLY_PATH_KEYS,
  type HostConfig,
} from './config';
import { openDatabase, SqliteD1, type SqliteDb } from './db/database';
import { WalCheckpointer } from './db/checkpointer';
import { importModule } from './launcher-bridge';
import { EventsProducer } from './events';
import { LiveBackend } from './system/exec-live';
import { ReplayBackend } from './system/replay';
import { RecordBackend } from './system/record';
import { loadFixtureDir } from './system/fixture-file';
import { ConfinedFiles, type FileRoot } from './system/files';
import { SystemService, type HostOp } from './system/service';
import { PathConfinement } from './system/confine';
import { managedPathsOf } from './system/owners';
import { IntentJournal } from './system/journal';
import { SecretBox } from './system/secret-box';
import { BatchedAudit } from './db/audit';
import { TokenCache } from './tokens';
import type { CommandBackend } from './system/types';
import { BindingServer } from './binding-server';
import { AREAS, areaPaths } from './areas/index';
import { JobRegistry } from './jobs/registry';
import { JobGate } from './jobs/gate';
import { payloadOf } from './system/host-op';
import { jobProgress } from '../handlers/core/job';
import type { AreaHost, AreaInstance, AreaModule } from './areas/types';
import { createTelemetry, forgetTelemetry, type HostTelemetry } from './ops/telemetry';
import { commandObserver } from './ops/request-log';
import { lineLogger, type Logger } from './ops/logger';
import { permissionAreas } from './tokens';

export interface ManifestEntry {
  method: Method;
  path: string;
  permission: string;
  summary: string;
  sideEffects?: boolean;
  long?: LongOperation;
  bundle: string;
}

export interface HostOptions {
  config: HostConfig;
  /** The file the config was read from (default /etc/ballast/config.yaml): its directory is the host's. */
  configFile?: string;
  /** Where build.mjs wrote manifest.json and the route bundles. */
  distDir: string;
  /** Replaces the configured back end (tests). */
  backend?: CommandBackend;
  /** Serve these route modules instead of the built bundles (route-tier tests). */
  routes?: RouteModule[];
  extraOps?: Record<string, HostOp>;
  /** Replaces the area list (tests of the plug-in mechanism). */
  areas?: readonly AreaModule<unknown>[];
  log?: (line: string) => void;
  /** The structured logger (runtime/ops/logger.ts): command lines; `log` lines go to it as warnings unless `log` is given. */
  logger?: Logger;
  /**
   * How many calls a configured replay back end keeps in `calls` (tests that read what a demo
   * host ran). Default 0: a serving replay host keeps none, each record would outlive the
   * young generation and be promoted only to die later (a GC cost on every request).
   */
  replayCallsKept?: number;
}

export interface Host {
  config: HostConfig;
  db: SqliteDb;
  env: Env;
  vars: Vars;
  events: EventsProducer;
  system: SystemService;
  backend: CommandBackend;
  bindings: BindingServer;
  /** The areas' host sides, in AREAS order; serve() starts them, close() stops them. */
  areas: { name: string; instance: AreaInstance }[];
  /** Runs every area's onStart (serve() calls it once the server listens). */
  startAreas(): void;
  /** serve() points this at the HTTP server's TLS reload. */
  setTlsReloader(reload: () => void): void;
  manifest: ManifestEntry[];
  app: App;
  /** Long requests as jobs: the registry the jobs routes read, the gate the server runs requests through. */
  jobs: { registry: JobRegistry; gate: JobGate };
  /** metrics, health, version (runtime/ops/telemetry.ts) */
  telemetry: HostTelemetry;
  close(): Promise<void>;
}

export function fileRootsOf(config: HostConfig): FileRoot[] {
  if (config.fileRoots) return config.fileRoots.map((p) => ({ path: p, writable: true }));
  return Object.entries(config.paths).map(([k, p]) => ({ path: p, writable: !READ_ONLY_PATH_KEYS.has(k) }));
}

export function backendFor(
  config: HostConfig,
  areas: readonly AreaModule<unknown>[] = AREAS,
  replayCallsKept = 0,
): CommandBackend {
  const live = () =>
    new LiveBackend({
      allowedBinaries: new Set(Object.values(config.system.binaries)),
      // the names an area's routes always set (KRB5_CONFIG…) pass whatever system.envAllow says
      allowedEnv: new Set([...config.system.envAllow, ...areas.flatMap((a) => a.envAllow ?? [])]),
      baseEnv: config.system.env,
      wrapper: config.system.wrapper,
      limits: { timeoutMs: config.limits.commandTimeoutMs, maxOutputBytes: config.limits.outputBytes },
    });
  switch (config.system.mode) {
    case 'live':
      return live();
    case 'record':
      return new RecordBackend(live(), resolve(config.system.recordDir ?? join(config.stateDir, 'recorded')));
    case 'replay': {
      // a configured replay host (the demo, the bench) may answer for days: it records its calls
      // only when a test asks (bounded even then), so memory stays flat
      const r = new ReplayBackend([], config.system.fixtureAliases ?? {}, { maxCalls: replayCallsKept });
      for (const dir of config.system.fixtures) r.load(loadFixtureDir(dir));
      return r;
    }
  }
}

export function readManifest(distDir: string): ManifestEntry[] {
  const file = join(distDir, 'manifest.json');
  try {
    return (JSON.parse(readFileSync(file, 'utf8')) as { routes: ManifestEntry[] }).routes;
  } catch (e) {
    throw new Error(`cannot read ${file}: run \`npm run build\` first (${(e as Error).message})`);
  }
}

/** Parses `settings.<area>` with the area's schema; a wrong value stops the host naming the key. */
export function areaSettings(area: AreaModule<unknown>, settings: Record<string, unknown>): unknown {
  if (!area.settings) return settings[area.name];
  const r = area.settings.safeParse(settings[area.name] ?? {});
  if (!r.success) {
    throw new Error(`config: ${configIssuesText(`settings.${area.name}`, r.error, area.settings)}`);
  }
  return r.data;
}

export async function createHost(o: HostOptions): Promise<Host> {
  const { config } = o;
  const log = o.log ?? (o.logger ? lineLogger(o.logger) : (l: string) => process.stderr.write(`${l}\n`));
  const areaList = o.areas ?? AREAS;
  // every area's settings are checked before anything is opened
  const settings: Record<string, unknown> = { ...config.settings };
  for (const a of areaList) settings[a.name] = areaSettings(a, config.settings);
  const db = openDatabase(dbFile(config));
  const d1 = new SqliteD1(db);
  // jobs by state (health's `jobs.running`, the `ballast_jobs` gauge): the registry opens below
  const jobCounts: { of?: () => Record<string, number> } = {};
  const telemetry = createTelemetry({
    db,
    dbFile: dbFile(config),
    distDir: o.distDir,
    jobCounts: () => jobCounts.of?.() ?? {},
  });
  const events = new EventsProducer(db);
  const hostId = readHostId(config);
  const backend = o.backend ?? backendFor(config, areaList, o.replayCallsKept);
  const files = new ConfinedFiles(fileRootsOf(config), join(resolve(config.stateDir), 'backups'));
  // an atomic write interrupted by a crash leaves its temp file beside the target: remove them
  // before anything writes (the targets themselves are whole, old or new)
  const directoryKeys = new Set(DIRECTORY_PATH_KEYS);
  const configDirs = Object.entries(config.paths).map(([k, p]) => (directoryKeys.has(k) ? p : dirname(p)));
  for (const p of files.removeStaleTemps(configDirs)) log(`removed a temp file an interrupted write left: ${p}`);
  for (const p of files.removeStaleBackupTemps()) log(`removed a temp file an interrupted backup left: ${p}`);
  // one owner per path: what an area declares in `paths` (as configured) and the host's own
  // directories; no other area's roots reach them (system/owners.ts)
  const managed = managedPathsOf({
    paths: config.paths,
    declaredBy: Object.fromEntries(Object.entries(areaPaths(areaList)).map(([k, p]) => [k, p.areas])),
    stateDir: resolve(config.stateDir),
    configFile: resolve(o.configFile ?? DEFAULT_CONFIG_FILE),
    dbFile: dbFile(config),
  });
  const confinement = new PathConfinement(config.system.binaries, managed);
  const journal = new IntentJournal(db, files);
  const secrets = new SecretBox(join(resolve(config.stateDir), 'secret.key'));
  // audit rows: one transaction per event-loop turn, pruned by age and count (db/audit.ts);
  // once they come fast, WAL checkpoints move off the event loop (db/checkpointer.ts)
  const checkpointer = new WalCheckpointer(db, { log });
  const audit = new BatchedAudit(
    db,
    { maxAgeDays: config.limits.auditMaxAgeDays, maxRows: config.limits.auditMaxRows },
    log,
    checkpointer.wrote,
  );
  // before SYSTEM: a job's commands and progress reports go to its row as they happen
  const jobRegistry = new JobRegistry(
    db,
    {
      maxAgeMs: config.limits.jobMaxAgeDays * 86_400_000,
      maxRows: config.limits.jobMaxRows,
      eventsPerJob: 500,
      resultInlineBytes: 256 * 1024,
    },
    () => basePathOf(vars),
  );
  jobCounts.of = () => jobRegistry.countsByState();
  const system = new SystemService({
    backend,
    files,
    confinement,
    journal,
    secrets,
    db,
    audit,
    concurrency: config.limits.commandConcurrency,
    queue: config.limits.commandQueue,
    log,
    onCommandStart: (requestId, argv) => jobRegistry.commandStarted(requestId, argv),
    onCommand: (c) => jobRegistry.command(c.requestId, c.argv, c.exitCode, c.durationMs, c.stderr),
    onProgress: (requestId, p) => jobRegistry.progress(requestId, payloadOf(jobProgress, 'job/progress', p)),
    observe: commandObserver({ logger: o.logger, metrics: telemetry.metrics }),
  });
  const vars: Vars = {
    productName: config.productName,
    hostId,
    paths: { ...config.paths },
    bin: { ...config.system.binaries },
    settings: { ...settings, maxBodyBytes: config.limits.bodyBytes },
    basePath: config.basePath ?? '/api/v2',
  };
  // SYSTEM_DIRECT: handlers in this process call the service as a method (bindings.ts Env);
  // SYSTEM keeps the fetch protocol for anything that only has a Fetcher (isolates, old callers)
  // TOKENS_DIRECT: token rows from a short cache that a revocation empties at once (tokens.ts)
  const env: Env = {
    SYSTEM: { fetch: system.fetch },
    SYSTEM_DIRECT: system.direct,
    TOKENS_DIRECT: new TokenCache(db, config.limits.tokenCacheMs),
    DB: d1,
    EVENTS: events,
    VARS: vars,
  };
  const bindings = new BindingServer(system, d1, events, env.TOKENS_DIRECT);

  let reloadTls = () => undefined as void;
  // the gate needs the routes (read below); the jobs area's cancel reaches it once it exists
  const jobsRef: { gate?: JobGate } = {};
  const jobs: AreaHost<unknown>['jobs'] = {
    registry: jobRegistry,
    cancel: (id, why) => (jobsRef.gate ? jobsRef.gate.cancel(id, why) : Promise.resolve(false)),
  };
  const areas = areaList.map((a) => {
    const areaHost: AreaHost<unknown> = {
      config,
      settings: settings[a.name],
      db,
      env,
      vars,
      events,
      system,
      hostId,
      log,
      secrets,
      checkOwner: (real, kind, opts) => confinement.checkOwner(real, kind, opts),
      reloadTls: () => reloadTls(),
      jobs,
    };
    const instance = a.setup?.(areaHost) ?? {};
    system.register(a.name, instance.ops ?? {});
    for (const [kind, roots] of Object.entries(instance.confine?.roots ?? {}))
      confinement.addRoots(kind, roots, a.name);
    for (const [tool, policy] of Object.entries(instance.confine?.commands ?? {})) confinement.addPolicy(tool, policy);
    return { name: a.name, instance };
  });
  system.register('test', o.extraOps ?? {});
  // a root that reaches another owner's path is a configuration to fix: its operands there are refused
  for (const line of managed.rootConflicts(confinement.kinds())) log(`confinement: ${line}`);

  // A change a killed host left half done is rolled back before anything else runs.
  const recovered = await journal.recover(async (argv) => {
    const r = (await system.handle('exec', { argv }, 'startup-journal')) as { code: number; stderr: string };
    return r;
  });
  // a job the last host left running ends `interrupted`, with what recover() undid for it
  for (const id of jobRegistry.interruptLeftovers((requestId) => {
    const mine = recovered.filter((r) => r.requestId === requestId);
    if (mine.length === 0) return null;
    return {
      files: mine.flatMap((r) => r.files),
      undone: mine.flatMap((r) => r.undone),
      failed: mine.flatMap((r) => r.failed),
    };
  }))
    log(`jobs: job ${id} was running when the host stopped: interrupted`);
  for (const r of recovered) {
    log(
      `${r.area}: rolled back a change interrupted at request ${r.requestId ?? '-'}: files ${r.files.join(', ') || '-'}; ${r.undone.length} command(s) undone${r.failed.length ? `; ${r.failed.length} undo step(s) did not apply (${r.failed.map((f) => f.step).join('; ')})` : ''}`,
    );
    await events.send({
      kind: `${r.area}.change.rolled_back`,
      data: { requestId: r.requestId, files: r.files, undone: r.undone.length, reason: 'restart' },
    });
  }

  let manifest: ManifestEntry[];
  let entries: AppEntry[];
  if (o.routes) {
    manifest = o.routes.map((r) => ({ ...r.meta, bundle: '' }));
    entries = o.routes.map((r) => ({
      method: r.meta.method,
      path: r.meta.path,
      sideEffects: r.meta.sideEffects,
      load: () => r,
    }));
  } else {
    manifest = readManifest(o.distDir);
    entries = manifest.map((m) => ({
      method: m.method,
      path: m.path,
      sideEffects: m.sideEffects,
      load: async () =>
        ((await importModule(pathToFileURL(join(o.distDir, m.bundle)).href)) as { default: RouteModule }).default,
    }));
  }
  telemetry.permissionAreas = permissionAreas(manifest);
  const options: AppOptions = {};
  let doc: Record<string, unknown> | undefined;
  const routeModules = o.routes;
  options.openapi = () =>
    (doc ??= routeModules
      ? openapi(routeModules, { title: 'Ballast storage appliance API', version: '0' })
      : (JSON.parse(readFileSync(join(o.distDir, 'openapi.json'), 'utf8')) as Record<string, unknown>));
  if (!routeModules) options.pages = docsPages(o.distDir, config.productName, () => basePathOf(vars));
  const inner = createApp(entries, options);
  // A request's audit rows (its commands' and its area ops') are committed before its answer is
  // complete: handle() waits for the turn's batch (requests ending together share it), and a
  // streamed answer commits what its producer audited before its last piece goes out. The
  // WHATWG entry is the same handle(), so in-process callers read the rows after the answer too.
  // A long route's request runs as a job (runtime/jobs/gate.ts), whoever calls the app.
  const gate = new JobGate({
    registry: jobRegistry,
    system,
    journal,
    events,
    env,
    vars,
    routes: manifest,
    log,
  });
  jobsRef.gate = gate;
  const handle: App['handle'] = async (call, e, ctx) => {
    const reply = await gate.run(call, (c) => inner.handle(c, e, ctx));
    await audit.whenWritten();
    return reply.chunks ? { ...reply, chunks: flushedAtEnd(reply.chunks, audit) } : reply;
  };
  const app: App = { handle, fetch: fetchVia(handle) };

  return {
    config,
    db,
    env,
    vars,
    events,
    system,
    backend,
    bindings,
    areas,
    manifest,
    app,
    jobs: { registry: jobRegistry, gate },
    telemetry,
    startAreas() {
      for (const a of areas) {
        try {
          void Promise.resolve(a.instance.onStart?.()).catch((e) =>
            log(`${a.name}: start-up task failed: ${String(e)}`),
          );
        } catch (e) {
          log(`${a.name}: start-up task failed: ${String(e)}`);
        }
      }
    },
    setTlsReloader(reload) {
      reloadTls = reload;
    },
    async close() {
      // a job still running is cancelled (and rolled back) while the DB is open to record it
      await gate.cancelAll('cancelled: the host is stopping');
      for (const a of [...areas].reverse()) {
        try {
          await a.instance.onStop?.();
        } catch (e) {
          log(`${a.name}: stop failed: ${String(e)}`);
        }
      }
      audit.close();
      await checkpointer.close();
      forgetTelemetry(db);
      db.close();
    },
  };
}

/**
 * The pieces of a streamed answer, then the audit rows written while they were made (a sync
 * producer stays sync: the writer takes its pieces without a promise each).
 */
function flushedAtEnd(
  chunks: Iterable<string> | AsyncIterable<string>,
  audit: { flush(): void },
): Iterable<string> | AsyncIterable<string> {
  if (Symbol.asyncIterator in chunks)
    return (async function* () {
      try {
        yield* chunks;
      } finally {
        audit.flush();
      }
    })();
  return (function* () {
    try {
      yield* chunks;
    } finally {
      audit.flush();
    }
  })();
}
