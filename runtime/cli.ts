import { existsSync } from 'node:fs';
import { join, resolve, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadConfigFile, defaultConfig, dbFile, validateConfig, type HostConfig } from './config';
import { openDatabase } from './db/database';
import { createToken, hasLiveTokens, listTokens, parseExpiry, revokeToken } from './tokens';
import { demoConfig, demoTokenFile, seedDemo, writeDemoToken } from './demo';
import { serve } from './serve';
import { backendFor } from './host';
import { RecordBackend } from './system/record';

const DEFAULT_CONFIG_FILE = '/etc/ballast/config.yaml';

/** The repo (or install) root: this file is bundled to dist/host/cli.mjs, or run from runtime/. */
function repoRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(dir, 'package.json')) && dir !== '/') dir = dirname(dir);
  return dir;
}

interface Args {
  positional: string[];
  flags: Map<string, string[]>;
  rest: string[];
}

function parseArgs(argv: string[]): Args {
  const a: Args = { positional: [], flags: new Map(), rest: [] };
  for (let i = 0; i < argv.length; i++) {
    const t = argv[i];
    if (t === '--') {
      a.rest = argv.slice(i + 1);
      break;
    }
    if (t.startsWith('--')) {
      const [k, inline] = t.slice(2).split('=', 2);
      const boolean = ['demo', 'isolate', 'json'].includes(k);
      const v = inline ?? (boolean ? 'true' : argv[++i]);
      if (v === undefined) throw new Error(`--${k} needs a value`);
      a.flags.set(k, [...(a.flags.get(k) ?? []), v]);
    } else a.positional.push(t);
  }
  return a;
}

const flag = (a: Args, k: string) => a.flags.get(k)?.at(-1);

function configFrom(a: Args): HostConfig {
  const repo = repoRoot();
  let cfg: HostConfig;
  if (flag(a, 'demo')) {
    cfg = demoConfig(repo, Number(process.env.PORT ?? 8080));
    seedDemo(repo, cfg);
  } else {
    const file = flag(a, 'config') ?? process.env.BALLAST_CONFIG ?? DEFAULT_CONFIG_FILE;
    cfg = existsSync(file) ? loadConfigFile(file) : defaultConfig();
  }
  if (flag(a, 'port')) cfg.listen.port = Number(flag(a, 'port'));
  if (flag(a, 'host')) cfg.listen.host = flag(a, 'host')!;
  if (flag(a, 'isolate')) cfg.isolate = true;
  validateConfig(cfg);
  return cfg;
}

const USAGE = `usage:
  ballast serve [--config FILE | --demo] [--isolate] [--port N] [--host ADDR]
  ballast token create NAME --perm PERM [--perm PERM ...] [--expires 30d|ISO-DATE] [--config FILE | --demo]
  ballast token list [--config FILE | --demo]
  ballast token revoke ID-OR-NAME [--config FILE | --demo]
  ballast record [--dir DIR] [--config FILE] -- /abs/binary ARG...
`;

async function main(argv: string[]): Promise<number> {
  const a = parseArgs(argv);
  const [cmd, sub, name] = a.positional;
  switch (cmd) {
    case 'serve': {
      const cfg = configFrom(a);
      const repo = repoRoot();
      await serve({
        config: cfg,
        distDir: resolve(repo, 'dist'),
        announceToken: async (db) => {
          const demo = flag(a, 'demo') !== undefined;
          if (demo && existsSync(demoTokenFile(cfg))) return;
          if (!demo && hasLiveTokens(db)) return;
          const { token } = await createToken(db, demo ? `demo-admin-${Date.now()}` : 'admin', ['*']);
          if (demo) {
            const file = writeDemoToken(cfg, token);
            process.stdout.write(`Demo admin token (also in ${file}): ${token}\n`);
          } else {
            process.stdout.write(`No API tokens existed, so an admin token was created. It is shown only this once:\n  ${token}\n`);
          }
        },
      });
      return 0;
    }
    case 'token': {
      const cfg = configFrom(a);
      const db = openDatabase(dbFile(cfg));
      try {
        if (sub === 'create') {
          if (!name) throw new Error('token create needs a NAME');
          const perms = a.flags.get('perm') ?? [];
          const expires = flag(a, 'expires');
          const { id, token } = await createToken(db, name, perms, expires ? parseExpiry(expires) : null);
          process.stdout.write(`created token ${id} (${name}); it is shown only this once:\n${token}\n`);
        } else if (sub === 'list') {
          const rows = listTokens(db);
          if (flag(a, 'json')) process.stdout.write(`${JSON.stringify(rows, null, 2)}\n`);
          else for (const t of rows) process.stdout.write(`${t.id}  ${t.name}  ${t.permissions.join(',')}  created ${t.createdAt}  expires ${t.expiresAt ?? 'never'}  last used ${t.lastUsedAt ?? 'never'}${t.revokedAt ? `  REVOKED ${t.revokedAt}` : ''}\n`);
        } else if (sub === 'revoke') {
          if (!name) throw new Error('token revoke needs an ID or NAME');
          if (!revokeToken(db, name)) throw new Error(`no live token with id or name ${name}`);
          process.stdout.write(`revoked ${name}\n`);
        } else throw new Error(USAGE);
      } finally {
        db.close();
      }
      return 0;
    }
    case 'record': {
      const cfg = configFrom(a);
      cfg.system.mode = 'live';
      const dir = resolve(flag(a, 'dir') ?? 'fixtures/recorded');
      const rec = new RecordBackend(backendFor(cfg), dir);
      if (a.rest.length === 0) throw new Error('record needs -- /abs/binary ARG...');
      const r = await rec.exec(a.rest, {});
      process.stdout.write(r.stdout);
      process.stderr.write(r.stderr);
      process.stderr.write(`recorded exit ${r.code} into ${dir}\n`);
      return 0;
    }
    default:
      process.stderr.write(USAGE);
      return cmd ? 2 : 0;
  }
}

main(process.argv.slice(2)).then(
  (code) => {
    if (code !== 0) process.exit(code);
  },
  (e: Error) => {
    process.stderr.write(`ballast: ${e.message}\n`);
    process.exit(1);
  },
);

