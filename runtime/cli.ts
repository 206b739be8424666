import { existsSync, readFileSync } from 'node:fs';
import { join, resolve, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { DEFAULT_CONFIG_FILE, loadConfigFile, defaultConfig, dbFile, validateConfig, type HostConfig } from './config';
import { openDatabase } from './db/database';
import { createToken, hasLiveTokens, listTokens, parseExpiry, permissionAreas, revokeToken } from './tokens';
import { demoConfig, demoTokenFile, seedDemo, writeDemoToken } from './demo';
import { serve } from './serve';
import { backendFor, readManifest } from './host';
import { RecordBackend } from './system/record';
import { startupDone } from './launcher-bridge';
import { areaCommandUsages, areaWithCommands, runAreaCommand } from './area-commands';
import type { AreaModule } from './areas/types';
import { closestKey } from './config-hints';

/** The repo (or install) root: this file is bundled to dist/host/cli.mjs, or run from runtime/. */
function repoRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(dir, 'package.json')) && dir !== '/') dir = dirname(dir);
  return dir;
}

/** A wrong command line: one line on stderr, exit 2. */
class UsageError extends Error {}

const CONFIG_OPTIONS = {
  config: { type: 'string' },
  demo: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const satisfies ParseArgsConfig['options'];

/** Each command, its options (strict: anything else is an error) and its usage text. */
const COMMANDS = {
  serve: {
    usage:
      'ballast serve [--config FILE | --demo] [--isolate [workerd|deno]] [--port N] [--host ADDR] [--log-format json|text] [--log-level LEVEL]',
    options: {
      ...CONFIG_OPTIONS,
      isolate: { type: 'string' },
      port: { type: 'string' },
      host: { type: 'string' },
      'log-format': { type: 'string' },
      'log-level': { type: 'string' },
    },
    positionals: 0,
  },
  token: {
    usage: [
      'ballast token create NAME --perm PERM [--perm PERM ...] [--expires 30d|ISO-DATE] [--config FILE | --demo | --db FILE]',
      'ballast token list [--json] [--config FILE | --demo | --db FILE]',
      'ballast token revoke ID-OR-NAME [--config FILE | --demo | --db FILE]',
    ].join('\n  '),
    options: {
      ...CONFIG_OPTIONS,
      perm: { type: 'string', multiple: true },
      expires: { type: 'string' },
      json: { type: 'boolean' },
      // any SQLite file (a D1 export, a Deno deployment's database): the schema is created if missing
      db: { type: 'string' },
    },
    positionals: 2,
  },
  record: {
    usage: 'ballast record [--dir DIR] [--config FILE] -- /abs/binary ARG...',
    options: { ...CONFIG_OPTIONS, dir: { type: 'string' } },
    positionals: Infinity,
  },
} as const;
type Command = keyof typeof COMMANDS;

/**
 * What each option does, printed by `ballast <command> --help`: keyed by the command's own
 * options, so an option without its line does not compile.
 */
type OptionHelp = {
  [C in Command]: { [O in Exclude<keyof (typeof COMMANDS)[C]['options'], 'help'>]: [string, string] };
};
const OPTION_HELP: OptionHelp = {
  serve: {
    config: ['--config FILE', 'the config file (default /etc/ballast/config.yaml, or $BALLAST_CONFIG)'],
    demo: ['--demo', 'serve the embedded demo appliance: replayed tools, state under var/demo'],
    isolate: ['--isolate [workerd|deno]', 'run the route handlers in a workerd (the default) or Deno isolate'],
    port: ['--port N', 'listen on port N, 0 to 65535 (overrides listen.port; the demo also reads $PORT)'],
    host: ['--host ADDR', 'listen on ADDR (overrides listen.host)'],
    'log-format': [
      '--log-format json|text',
      'JSON lines (the default, for a log pipeline) or text for a terminal (overrides log.format)',
    ],
    'log-level': [
      '--log-level LEVEL',
      'trace, debug, info (the default), warn, error, fatal or silent (overrides log.level)',
    ],
  },
  token: {
    perm: ['--perm PERM', '<area>:read, <area>:manage or * (repeat it for several)'],
    expires: ['--expires WHEN', '30d, 12h or 15m from now, or an ISO date; without it the token does not expire'],
    json: ['--json', 'token list: one JSON array instead of a table'],
    db: ['--db FILE', 'any SQLite file (a D1 export…): the schema is created if missing'],
    config: ['--config FILE', "the config file whose state directory's database holds the tokens"],
    demo: ['--demo', "the demo appliance's database"],
  },
  record: {
    dir: ['--dir DIR', 'where the recorded invocation goes (default fixtures/recorded in the working directory)'],
    config: ['--config FILE', 'the config file: its allow-list of binaries and environment'],
    demo: ['--demo', "the demo appliance's allow-list of binaries and environment (the command still runs live)"],
  },
};

function commandHelp(command: Command): string {
  const rows: [string, string][] = [...Object.values<[string, string]>(OPTION_HELP[command]), ['--help', 'this text']];
  const width = Math.max(...rows.map(([o]) => o.length));
  return `usage:\n  ${COMMANDS[command].usage}\n\noptions:\n${rows.map(([o, h]) => `  ${o.padEnd(width)}  ${h}`).join('\n')}\n`;
}

const USAGE = `usage:\n  ${[...Object.values(COMMANDS).map((c) => c.usage), ...areaCommandUsages()].join(
  '\n  ',
)}\n  ballast [COMMAND] --help\n  ballast --version\n`;

interface Parsed {
  command: Command;
  values: {
    config?: string;
    demo?: boolean;
    help?: boolean;
    isolate?: string;
    port?: string;
    host?: string;
    'log-format'?: string;
    'log-level'?: string;
    perm?: string[];
    expires?: string;
    json?: boolean;
    dir?: string;
    db?: string;
  };
  positionals: string[];
}

/** Strict parsing: an unknown flag, a missing value or a stray operand is a UsageError. */
function parseCommandLine(argv: string[]): Parsed | 'help' | 'version' {
  const [first, ...rest] = argv;
  if (first === undefined || first === '--help' || first === '-h' || first === 'help') return 'help';
  if (first === '--version' || first === '-V' || first === 'version') return 'version';
  if (!(first in COMMANDS))
    throw new UsageError(`unknown command ${JSON.stringify(first)} (commands: ${Object.keys(COMMANDS).join(', ')})`);
  const command = first as Command;
  const spec = COMMANDS[command];
  let parsed;
  // `--isolate` alone is the old spelling of `--isolate workerd`
  const args =
    command === 'serve'
      ? rest.map((a, i) =>
          a === '--isolate' && !['workerd', 'deno'].includes(rest[i + 1] ?? '') ? '--isolate=workerd' : a,
        )
      : rest;
  try {
    parsed = parseArgs({ args, options: spec.options, allowPositionals: true, strict: true });
  } catch (e) {
    // node's messages are long and multi-line; the first line says which flag
    const said = (e as Error).message.split('\n')[0].replace(/\. To specify a positional.*$/, '');
    const unknown = /^Unknown option '--([^']+)'/.exec(said)?.[1];
    const guess = unknown === undefined ? undefined : closestKey(unknown, Object.keys(spec.options));
    throw new UsageError(`${command}: ${said}${guess ? ` (did you mean --${guess}?)` : ''}`);
  }
  const positionals = parsed.positionals;
  if (positionals.length > spec.positionals)
    throw new UsageError(`${command}: unexpected operand ${JSON.stringify(positionals[spec.positionals])}`);
  if (command === 'record' && !rest.includes('--') && positionals.length)
    throw new UsageError('record: put the command after --');
  return { command, values: parsed.values as Parsed['values'], positionals };
}

/** The config file a command reads (whether it exists or not). */
const configFileOf = (v: Parsed['values']): string => v.config ?? process.env.BALLAST_CONFIG ?? DEFAULT_CONFIG_FILE;

function configFrom(v: Parsed['values']): HostConfig {
  const repo = repoRoot();
  let cfg: HostConfig;
  if (v.demo && v.config) throw new UsageError('--demo and --config exclude each other');
  if (v.demo) {
    cfg = demoConfig(repo, Number(process.env.PORT ?? 8080));
    seedDemo(repo, cfg);
  } else {
    const file = configFileOf(v);
    if (v.config && !existsSync(file)) throw new UsageError(`--config ${file}: no such file`);
    cfg = existsSync(file) ? loadConfigFile(file) : defaultConfig();
  }
  if (v.port !== undefined) {
    if (!/^\d{1,5}$/.test(v.port) || Number(v.port) > 65535)
      throw new UsageError(`--port must be a number from 0 to 65535 (got ${JSON.stringify(v.port)})`);
    cfg.listen.port = Number(v.port);
  }
  if (v.host !== undefined) cfg.listen.host = v.host;
  if (v.isolate !== undefined) {
    if (v.isolate !== 'workerd' && v.isolate !== 'deno')
      throw new UsageError(`--isolate takes workerd or deno (got ${JSON.stringify(v.isolate)})`);
    cfg.isolate = v.isolate;
  }
  const format = v['log-format'];
  if (format !== undefined) {
    if (format !== 'json' && format !== 'text')
      throw new UsageError(`--log-format takes json or text (got ${JSON.stringify(format)})`);
    cfg.log.format = format;
  }
  const level = v['log-level'];
  if (level !== undefined) {
    const levels = ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'] as const;
    const known = levels.find((l) => l === level);
    if (!known) throw new UsageError(`--log-level takes ${levels.join(', ')} (got ${JSON.stringify(level)})`);
    cfg.log.level = known;
  }
  // a file's config was checked as it was read, and the defaults are valid: what a flag or the
  // demo's own builder set is what is left to check
  if (v.demo || v.port !== undefined || v.host !== undefined || v.isolate !== undefined) validateConfig(cfg);
  return cfg;
}

/** `ballast <area> <command> [--config FILE | --demo] [--] ARG…` (runtime/area-commands.ts). */
async function areaMain(area: AreaModule<unknown>, argv: string[]): Promise<number> {
  const [sub, ...rest] = argv;
  let parsed;
  try {
    parsed = parseArgs({ args: rest, options: CONFIG_OPTIONS, allowPositionals: true, strict: true });
  } catch (e) {
    throw new UsageError(`${area.name} ${sub ?? ''}: ${(e as Error).message.split('\n')[0]}`);
  }
  if (parsed.values.help) {
    process.stdout.write(`usage:\n  ${area.commands?.[sub ?? '']?.usage ?? areaCommandUsages().join('\n  ')}\n`);
    return 0;
  }
  return runAreaCommand(area, sub, parsed.positionals, configFrom(parsed.values), (m) => new UsageError(m));
}

async function main(argv: string[]): Promise<number> {
  const area = argv[0] === undefined ? undefined : areaWithCommands(argv[0]);
  if (area) return areaMain(area, argv.slice(1));
  const p = parseCommandLine(argv);
  if (p === 'version') {
    const { version } = JSON.parse(readFileSync(join(repoRoot(), 'package.json'), 'utf8')) as { version: string };
    process.stdout.write(`ballast ${version}\n`);
    return 0;
  }
  if (p === 'help') {
    process.stdout.write(USAGE);
    return 0;
  }
  const { command, values: v, positionals } = p;
  if (v.help) {
    process.stdout.write(commandHelp(command));
    return 0;
  }
  switch (command) {
    case 'serve': {
      const cfg = configFrom(v);
      const repo = repoRoot();
      await serve({
        config: cfg,
        // its directory is the host's own: no area's roots may reach it
        configFile: v.demo ? undefined : configFileOf(v),
        distDir: resolve(repo, 'dist'),
        announceToken: async (db) => {
          const demo = v.demo === true;
          if (demo && existsSync(demoTokenFile(cfg))) return;
          if (!demo && hasLiveTokens(db)) return;
          const { token } = await createToken(db, demo ? `demo-admin-${Date.now()}` : 'admin', ['*']);
          if (demo) {
            const file = writeDemoToken(cfg, token);
            process.stdout.write(`Demo admin token (also in ${file}): ${token}\n`);
          } else {
            process.stdout.write(
              `No API tokens existed, so an admin token was created. It is shown only this once:\n  ${token}\n`,
            );
          }
        },
      });
      startupDone();
      return 0;
    }
    case 'token': {
      const [sub, name] = positionals;
      // the subcommand and its operand are checked before the database is opened (or created)
      if (sub !== 'create' && sub !== 'list' && sub !== 'revoke')
        throw new UsageError(
          `token: ${sub ? `unknown subcommand ${JSON.stringify(sub)}` : 'needs a subcommand'} (create, list, revoke)`,
        );
      if (sub === 'create' && !name) throw new UsageError('token create needs a NAME');
      if (sub === 'create' && !v.perm?.length)
        throw new UsageError('token create needs at least one --perm (<area>:read, <area>:manage or *)');
      if (sub === 'revoke' && !name) throw new UsageError('token revoke needs an ID or NAME');
      if (sub === 'list' && name) throw new UsageError(`token list: unexpected operand ${JSON.stringify(name)}`);
      if (v.db !== undefined && (v.config !== undefined || v.demo))
        throw new UsageError('--db excludes --config and --demo');
      const db = openDatabase(v.db !== undefined ? resolve(v.db) : dbFile(configFrom(v)));
      try {
        if (sub === 'create') {
          const expires = v.expires ? parseExpiry(v.expires) : null;
          const areas = permissionAreas(readManifest(resolve(repoRoot(), 'dist')));
          const { id, token } = await createToken(db, name, v.perm ?? [], expires, areas);
          process.stdout.write(`created token ${id} (${name}); it is shown only this once:\n${token}\n`);
        } else if (sub === 'list') {
          const rows = listTokens(db);
          if (v.json) process.stdout.write(`${JSON.stringify(rows, null, 2)}\n`);
          else
            for (const t of rows)
              process.stdout.write(
                `${t.id}  ${t.name}  ${t.permissions.join(',')}  created ${t.createdAt}  expires ${t.expiresAt ?? 'never'}  last used ${t.lastUsedAt ?? 'never'}${t.revokedAt ? `  REVOKED ${t.revokedAt}` : ''}\n`,
              );
        } else {
          if (!revokeToken(db, name)) throw new Error(`no live token with id or name ${name}`);
          process.stdout.write(`revoked ${name}\n`);
        }
      } finally {
        db.close();
      }
      return 0;
    }
    case 'record': {
      if (positionals.length === 0) throw new UsageError('record needs -- /abs/binary ARG...');
      const cfg = configFrom(v);
      cfg.system.mode = 'live';
      const dir = resolve(v.dir ?? 'fixtures/recorded');
      const rec = new RecordBackend(backendFor(cfg), dir);
      const r = await rec.exec(positionals, {});
      process.stdout.write(r.stdout);
      process.stderr.write(r.stderr);
      process.stderr.write(`recorded exit ${r.code} into ${dir}\n`);
      return 0;
    }
  }
}

main(process.argv.slice(2)).then(
  (code) => {
    if (code !== 0) process.exit(code);
  },
  (e: Error) => {
    process.stderr.write(`ballast: ${e.message}\n`);
    process.exit(e instanceof UsageError ? 2 : 1);
  },
);
