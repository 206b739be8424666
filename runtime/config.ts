import { readFileSync, existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parse } from 'yaml';
import * as z from 'zod';
import { configIssuesText } from './config-hints';
import { AREAS, areaBinaries, areaPaths } from './areas/index';
import type { HostConfig } from './config-types';

export type { HostConfig };

/** Where the host reads its configuration unless told otherwise (--config, BALLAST_CONFIG). */
export const DEFAULT_CONFIG_FILE = '/etc/ballast/config.yaml';

/** The real Debian locations of every configured path, as the areas declare them. */
export const DEFAULT_PATHS: Record<string, string> = Object.fromEntries(
  Object.entries(areaPaths()).map(([k, p]) => [k, p.default]),
);

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
    basePath: '/api/v2',
    stateDir: '/var/lib/ballast',
    paths: { ...DEFAULT_PATHS },
    system: {
      mode: 'live',
      fixtures: [],
      wrapper: [],
      binaries: areaBinaries(),
      env: {},
      // the names an area's commands set come with the area (AreaModule.envAllow)
      envAllow: [],
    },
    limits: {
      bodyBytes: 1024 * 1024,
      requestTimeoutMs: 120_000,
      commandTimeoutMs: 30_000,
      commandConcurrency: 8,
      commandQueue: 64,
      outputBytes: 16 * 1024 * 1024,
      auditMaxAgeDays: 90,
      auditMaxRows: 200_000,
      jobMaxAgeDays: 30,
      jobMaxRows: 1000,
      tokenCacheMs: 5_000,
    },
    settings: {},
    isolate: false,
    log: { format: 'json', level: 'info' },
    metrics: { listen: null },
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
    log: { ...base.log, ...(over.log ?? {}) },
    metrics: { ...base.metrics, ...(over.metrics ?? {}) },
    settings: { ...base.settings, ...(over.settings ?? {}) },
    tls: (over.tls as HostConfig['tls']) ?? base.tls,
  } as HostConfig;
}

/** `HOST:PORT` of a listener: a name or IPv4 address, or an IPv6 address in brackets. */
export const LISTEN_ADDRESS = /^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.-]+):(\d{1,5})$/;

/** `127.0.0.1:9464` → host and port (`[::1]:9464` → `::1`). */
export function listenAddress(text: string): { host: string; port: number } {
  const m = LISTEN_ADDRESS.exec(text);
  if (!m) throw new ConfigError(`bad listen address ${text}: use HOST:PORT`);
  return { host: m[1].replace(/^\[|\]$/g, ''), port: Number(m[2]) };
}

const absolute = z.string().regex(/^\/[^\0]*$/, 'must be an absolute path');
const positiveInt = z.number().int().min(1);
/** Text that ends up in headers and logs: no control characters. */
const plainText = z
  .string()
  .min(1)
  .max(128)
  .regex(/^[^\x00-\x1f\x7f]+$/, 'must be plain text without control characters');

/** Sections of the config file; the file may leave out any key (the defaults are real Debian locations). */
const sections = {
  productName: plainText,
  hostId: plainText.optional(),
  listen: z.strictObject({ host: z.string().min(1), port: z.number().int().min(0).max(65535) }),
  basePath: z
    .string()
    .regex(
      /^(\/|(\/[A-Za-z0-9._~-]+)+)$/,
      'must be `/` or an absolute URL path without a trailing slash (e.g. /api/v2)',
    ),
  // chain: the intermediate certificate(s) served after cert (the certificate area's pieces)
  tls: z.strictObject({ cert: absolute, key: absolute, chain: absolute.optional() }).optional(),
  stateDir: absolute,
  paths: z.strictObject(Object.fromEntries(Object.keys(areaPaths()).map((k) => [k, absolute]))),
  fileRoots: z.array(absolute).optional(),
  system: z.strictObject({
    mode: z.enum(['live', 'replay', 'record']),
    fixtures: z.array(z.string().min(1)),
    fixtureAliases: z.record(z.string().regex(/^\$[A-Z_]+$/), z.string()).optional(),
    recordDir: z.string().min(1).optional(),
    wrapper: z.array(z.string().min(1)),
    binaries: z.record(z.string().regex(/^[A-Za-z][A-Za-z0-9_-]*$/), absolute),
    env: z.record(z.string().regex(/^[A-Z_][A-Z0-9_]*$/), z.string()),
    envAllow: z.array(z.string().regex(/^[A-Z_][A-Z0-9_]*$/)),
  }),
  limits: z.strictObject({
    bodyBytes: positiveInt,
    requestTimeoutMs: positiveInt,
    commandTimeoutMs: positiveInt,
    commandConcurrency: positiveInt,
    commandQueue: z.number().int().min(0),
    outputBytes: positiveInt,
    auditMaxAgeDays: positiveInt,
    auditMaxRows: positiveInt,
    jobMaxAgeDays: positiveInt,
    jobMaxRows: positiveInt,
    tokenCacheMs: z.number().int().min(0).max(60_000),
  }),
  // each area checks its own `settings.<area>` (runtime/areas); `demo` marks the demo appliance
  settings: z.strictObject({
    demo: z.boolean().optional(),
    ...Object.fromEntries(AREAS.map((a) => [a.name, a.settings ? a.settings.optional() : z.unknown().optional()])),
  }),
  isolate: z.union([z.boolean(), z.enum(['workerd', 'deno'])], {
    error: 'must be false, true (= workerd), workerd or deno',
  }),
  log: z.strictObject({
    format: z.enum(['json', 'text']),
    level: z.enum(['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent']),
  }),
  metrics: z.strictObject({
    listen: z
      .string()
      .regex(LISTEN_ADDRESS, 'must be HOST:PORT (127.0.0.1:9464, [::1]:9464)')
      .refine((v) => Number(LISTEN_ADDRESS.exec(v)?.[2]) <= 65535, 'the port must be at most 65535')
      .nullable(),
  }),
};

/** The config file: every section optional, each section's keys optional, nothing unknown. */
const fileSchema = z.strictObject({
  productName: sections.productName.optional(),
  hostId: sections.hostId,
  listen: sections.listen.partial().optional(),
  basePath: sections.basePath.optional(),
  tls: sections.tls,
  stateDir: sections.stateDir.optional(),
  paths: sections.paths.partial().optional(),
  fileRoots: sections.fileRoots,
  system: sections.system.partial().optional(),
  limits: sections.limits.partial().optional(),
  settings: sections.settings.optional(),
  isolate: sections.isolate.optional(),
  log: sections.log.partial().optional(),
  metrics: sections.metrics.partial().optional(),
});

/** The whole configuration after defaults are applied. */
const configSchema = z.strictObject(sections);

export class ConfigError extends Error {}

function check<T>(schema: z.ZodType<T>, value: unknown, where: string): T {
  const r = schema.safeParse(value);
  if (!r.success) throw new ConfigError(`config ${where}: ${configIssuesText('', r.error, schema)}`);
  return r.data;
}

/** Reads and checks a config file; an unknown key, a wrong type or a bad limit names the key and the file. */
export function loadConfigFile(file: string): HostConfig {
  let doc: unknown;
  try {
    doc = parse(readFileSync(file, 'utf8')) ?? {};
  } catch (e) {
    throw new ConfigError(`config ${file}: ${(e as Error).message}`);
  }
  // valid by construction: every section the file gives was checked key by key, and the
  // defaults under it are valid (tested); a second whole check was 8 ms of every start. Whoever
  // changes it after (the CLI's flags) checks it with validateConfig.
  return mergeConfig(defaultConfig(), check(fileSchema, doc, file) as Partialish<HostConfig>);
}

/** The merged configuration (file, defaults, command-line flags) checked as a whole. */
export function validateConfig(cfg: HostConfig, where = '(after defaults and flags)'): void {
  check(configSchema, cfg, where);
}

export function readHostId(cfg: HostConfig): string {
  if (cfg.hostId) return cfg.hostId;
  for (const f of ['/etc/machine-id', '/var/lib/dbus/machine-id']) {
    if (existsSync(f)) return readFileSync(f, 'utf8').trim();
  }
  return 'unknown-host';
}

export const dbFile = (cfg: HostConfig) => join(resolve(cfg.stateDir), 'ballast.db');
