import { readFileSync, existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parse } from 'yaml';
import { DEFAULT_BIN } from '../handlers/core/vars';
import { areaBinaries, areaPaths } from './areas/index';

/**
 * Host configuration. Production reads /etc/ballast/config.yaml (see README); every field has a
 * default that is the real Debian location. Tests and the demo point every path into a private
 * state directory.
 */
export interface HostConfig {
  productName: string;
  hostId?: string;
  listen: { host: string; port: number };
  /** HTTPS: the certificate, its key, and optionally the intermediate(s) sent after it. */
  tls?: { cert: string; key: string; chain?: string };
  stateDir: string;
  paths: Record<string, string>;
  /** Locations file operations may touch; defaults to the directories and files in `paths`. */
  fileRoots?: string[];
  system: {
    mode: 'live' | 'replay' | 'record';
    fixtures: string[];
    /** replay: placeholders in fixture argv and their values here, e.g. { $ROOT: /srv/demo/root } */
    fixtureAliases?: Record<string, string>;
    recordDir?: string;
    wrapper: string[];
    binaries: Record<string, string>;
    env: Record<string, string>;
    envAllow: string[];
  };
  limits: {
    bodyBytes: number;
    requestTimeoutMs: number;
    commandTimeoutMs: number;
    commandConcurrency: number;
    commandQueue: number;
    outputBytes: number;
  };
  settings: Record<string, unknown>;
  isolate: boolean;
}

/** The real Debian locations of every configured path, as the areas declare them. */
export const DEFAULT_PATHS: Record<string, string> = Object.fromEntries(Object.entries(areaPaths()).map(([k, p]) => [k, p.default]));

/** Keys of `paths` that name directories (the rest name files). */
export const DIRECTORY_PATH_KEYS = Object.entries(areaPaths())
  .filter(([, p]) => p.kind === 'dir')
  .map(([k]) => k);

/** Keys of `paths` whose locations are only ever read. */
export const READ_ONLY_PATH_KEYS = new Set(
  Object.entries(areaPaths())
    .filter(([, p]) => p.readOnly)
    .map(([k]) => k),
);

export function defaultConfig(): HostConfig {
  return {
    productName: 'Ballast',
    listen: { host: '127.0.0.1', port: 8080 },
    stateDir: '/var/lib/ballast',
    paths: { ...DEFAULT_PATHS },
    system: {
      mode: 'live',
      fixtures: [],
      wrapper: [],
      binaries: { ...DEFAULT_BIN, ...areaBinaries() },
      env: {},
      envAllow: ['KRB5CCNAME', 'KRB5_CONFIG', 'KRB5_KTNAME', 'KRB5_CLIENT_KTNAME'],
    },
    limits: {
      bodyBytes: 1024 * 1024,
      requestTimeoutMs: 120_000,
      commandTimeoutMs: 30_000,
      commandConcurrency: 8,
      commandQueue: 64,
      outputBytes: 16 * 1024 * 1024,
    },
    settings: {},
    isolate: false,
  };
}

type Partialish<T> = { [K in keyof T]?: T[K] extends Record<string, unknown> ? Partialish<T[K]> : T[K] };

export function mergeConfig(base: HostConfig, over: Partialish<HostConfig>): HostConfig {
  return {
    ...base,
    ...over,
    listen: { ...base.listen, ...(over.listen ?? {}) },
    paths: { ...base.paths, ...(over.paths ?? {}) },
    system: {
      ...base.system,
      ...(over.system ?? {}),
      binaries: { ...base.system.binaries, ...(over.system?.binaries ?? {}) },
      env: { ...base.system.env, ...(over.system?.env ?? {}) },
    } as HostConfig['system'],
    limits: { ...base.limits, ...(over.limits ?? {}) },
    settings: { ...base.settings, ...(over.settings ?? {}) },
    tls: (over.tls as HostConfig['tls']) ?? base.tls,
  } as HostConfig;
}

export function loadConfigFile(file: string): HostConfig {
  const doc = (parse(readFileSync(file, 'utf8')) ?? {}) as Partialish<HostConfig>;
  const cfg = mergeConfig(defaultConfig(), doc);
  validateConfig(cfg);
  return cfg;
}

export function validateConfig(cfg: HostConfig): void {
  const abs = (what: string, p: string) => {
    if (typeof p !== 'string' || !p.startsWith('/')) throw new Error(`config: ${what} must be an absolute path (got ${JSON.stringify(p)})`);
  };
  abs('stateDir', cfg.stateDir);
  if (cfg.tls) {
    abs('tls.cert', cfg.tls.cert);
    abs('tls.key', cfg.tls.key);
    if (cfg.tls.chain !== undefined) abs('tls.chain', cfg.tls.chain);
  }
  for (const [k, v] of Object.entries(cfg.paths)) abs(`paths.${k}`, v);
  for (const [k, v] of Object.entries(cfg.system.binaries)) abs(`system.binaries.${k}`, v);
  if (!['live', 'replay', 'record'].includes(cfg.system.mode)) throw new Error(`config: system.mode must be live, replay or record`);
  if (!Number.isInteger(cfg.listen.port) || cfg.listen.port < 0 || cfg.listen.port > 65535) throw new Error('config: listen.port must be 0-65535');
}

export function readHostId(cfg: HostConfig): string {
  if (cfg.hostId) return cfg.hostId;
  for (const f of ['/etc/machine-id', '/var/lib/dbus/machine-id']) {
    if (existsSync(f)) return readFileSync(f, 'utf8').trim();
  }
  return 'unknown-host';
}

export const dbFile = (cfg: HostConfig) => join(resolve(cfg.stateDir), 'ballast.db');
