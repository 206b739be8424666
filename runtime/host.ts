import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { createApp, type App, type AppEntry } from '../handlers/core/app';
import type { Env } from '../handlers/core/bindings';
import type { RouteModule, Method } from '../handlers/core/route';
import type { Vars } from '../handlers/core/vars';
import { dbFile, readHostId, type HostConfig } from './config';
import { openDatabase, SqliteD1, type SqliteDb } from './db/database';
import { EventsProducer } from './events';
import { LiveBackend } from './system/exec-live';
import { ReplayBackend } from './system/replay';
import { RecordBackend } from './system/record';
import { loadFixtureDir } from './system/fixture-file';
import { ConfinedFiles, type FileRoot } from './system/files';
import { SystemService, type HostOp } from './system/service';
import type { CommandBackend } from './system/types';
import { BindingServer } from './binding-server';
import { DeliveryWorker } from './delivery/worker';
import { deliverySettings } from './delivery/settings';
import { notificationOps } from './delivery/ops';
import { fsOps } from './system/ops/fs-ops';

export interface ManifestEntry {
  method: Method;
  path: string;
  permission: string;
  summary: string;
  sideEffects?: boolean;
  bundle: string;
}

export interface HostOptions {
  config: HostConfig;
  /** Where build.mjs wrote manifest.json and the route bundles. */
  distDir: string;
  /** Replaces the configured back end (tests). */
  backend?: CommandBackend;
  /** Serve these route modules instead of the built bundles (route-tier tests). */
  routes?: RouteModule[];
  extraOps?: Record<string, HostOp>;
  log?: (line: string) => void;
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
  /** Sends the outbox to notification agents; serve() starts it, close() stops it. */
  delivery: DeliveryWorker;
  manifest: ManifestEntry[];
  app: App;
  close(): Promise<void>;
}

/** Config keys whose locations are only ever read (we list mkfs helpers, never write there). */
const READ_ONLY_PATH_KEYS = new Set(['sbin', 'sbinLegacy']);

export function fileRootsOf(config: HostConfig): FileRoot[] {
  if (config.fileRoots) return config.fileRoots.map((p) => ({ path: p, writable: true }));
  return Object.entries(config.paths).map(([k, p]) => ({ path: p, writable: !READ_ONLY_PATH_KEYS.has(k) }));
}

export function backendFor(config: HostConfig): CommandBackend {
  const live = () =>
    new LiveBackend({
      allowedBinaries: new Set(Object.values(config.system.binaries)),
      allowedEnv: new Set(config.system.envAllow),
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
      const r = new ReplayBackend([], config.system.fixtureAliases ?? {});
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

export async function createHost(o: HostOptions): Promise<Host> {
  const { config } = o;
  const log = o.log ?? ((l: string) => process.stderr.write(`${l}\n`));
  const notification = deliverySettings(config.settings);
  const db = openDatabase(dbFile(config));
  const d1 = new SqliteD1(db);
  const events = new EventsProducer(db);
  const hostId = readHostId(config);
  const notify = { db, settings: notification, hostId, productName: config.productName, caDir: config.paths.caCertificates };
  const backend = o.backend ?? backendFor(config);
  const files = new ConfinedFiles(fileRootsOf(config), join(resolve(config.stateDir), 'backups'));
  const system = new SystemService({
    backend,
    files,
    db,
    concurrency: config.limits.commandConcurrency,
    queue: config.limits.commandQueue,
    extraOps: { ...notificationOps(notify), ...fsOps({ settings: config.settings, db }), ...o.extraOps },
    log,
  });
  const vars: Vars = {
    productName: config.productName,
    hostId,
    paths: { ...config.paths },
    bin: { ...config.system.binaries },
    settings: { ...config.settings, maxBodyBytes: config.limits.bodyBytes },
  };
  const env: Env = { SYSTEM: { fetch: system.fetch }, DB: d1, EVENTS: events, VARS: vars };
  const bindings = new BindingServer(system, d1, events);
  const delivery = new DeliveryWorker({ ...notify, events, log });

  let manifest: ManifestEntry[];
  let entries: AppEntry[];
  if (o.routes) {
    manifest = o.routes.map((r) => ({ ...r.meta, bundle: '' }));
    entries = o.routes.map((r) => ({ method: r.meta.method, path: r.meta.path, sideEffects: r.meta.sideEffects, load: () => r }));
  } else {
    manifest = readManifest(o.distDir);
    entries = manifest.map((m) => ({
      method: m.method,
      path: m.path,
      sideEffects: m.sideEffects,
      load: async () => ((await import(pathToFileURL(join(o.distDir, m.bundle)).href)) as { default: RouteModule }).default,
    }));
  }
  const app = createApp(entries);

  return {
    config,
    db,
    env,
    vars,
    events,
    system,
    backend,
    bindings,
    delivery,
    manifest,
    app,
    async close() {
      await delivery.stop();
      db.close();
    },
  };
}

