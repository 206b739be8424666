/** Reading shares: unit file + environment file + `systemctl is-enabled`. */
import { badGateway, conflict, notFound } from '../core/errors';
import { ParseError } from '../core/parse-error';
import type { SystemClient } from '../core/system';
import { bin, path, type Vars } from '../core/vars';
import { envPath, serviceName, UNIT_DIR_KEY, UNIT_FILE_PATTERN, unitPath } from './names';
import { parseEnvFile } from './parse/env-file';
import { parseIsEnabled } from './parse/is-enabled';
import { parseSsListening } from './parse/ss';
import { parseUnit } from '../tools/systemd-unit';
import { areaSettings } from '../core/settings';
import { s3Settings, type S3Settings } from './contract';
import type { ShareDetailsAnswer } from './responses';

export interface Ctx {
  system: SystemClient;
  vars: Vars;
}

/** Masked secret: every character but the last two replaced by `*`; all of them below 8 characters. */
export function maskSecret(secret: string): string {
  const chars = [...secret];
  const keep = chars.length >= 8 ? 2 : 0;
  return '*'.repeat(chars.length - keep) + chars.slice(chars.length - keep).join('');
}

/** Share names, from the `s3-<name>.service` files of the unit directory. */
export async function shareNames(c: Ctx): Promise<string[]> {
  const entries = (await c.system.listDir(path(c.vars, UNIT_DIR_KEY))) ?? [];
  const out: string[] = [];
  for (const e of entries) {
    const m = UNIT_FILE_PATTERN.exec(e.name);
    if (m && e.type === 'file') out.push(m[1]);
  }
  return out;
}

export interface EnvValues {
  rootUser: string;
  rootPassword: string;
  path: string;
  port: string;
}

/** The environment file's text and values (empty strings for values it lacks), or null when absent. */
export async function readEnv(
  c: Ctx,
  settings: S3Settings,
  share: string,
): Promise<{ text: string; values: EnvValues } | null> {
  const p = envPath(c.vars, share);
  if (!(await isRegularFile(c, p))) return null;
  const text = await c.system.readFile(p);
  if (text === null) return null;
  const env = parseEnvFile(text);
  const n = settings.env;
  return {
    text,
    values: {
      rootUser: env[n.rootUser] ?? '',
      rootPassword: env[n.rootPassword] ?? '',
      path: env[n.path] ?? '',
      port: env[n.port] ?? '',
    },
  };
}

/**
 * false when absent; a 502 for anything but a regular file (a FIFO would block the read). The
 * host resolves symlinks before it stats (one leading out of the configured directories is a 403).
 */
async function isRegularFile(c: Ctx, p: string): Promise<boolean> {
  const st = await c.system.stat(p);
  if (st === null) return false;
  if (st.type !== 'file')
    throw badGateway(`${p} is not a regular file (${st.type}); it was not written by this service`);
  return true;
}

export async function isEnabled(c: Ctx, share: string): Promise<boolean> {
  const argv = [bin(c.vars, 'systemctl'), 'is-enabled', '--', serviceName(share)];
  const r = await c.system.exec(argv);
  // stdout carries the state for every exit code; stderr alone ("Failed to get unit file state")
  // means systemd does not know the unit: not enabled.
  if (r.stdout.trim() === '' && r.code !== 0) return false;
  return parseIsEnabled(r.stdout);
}

/** One share with the clear password, raw and conf; 404 when its unit file does not exist. */
export async function readShare(c: Ctx, share: string): Promise<ShareDetailsAnswer> {
  const settings = areaSettings(c.vars, 's3', s3Settings);
  const file = unitPath(c.vars, share);
  const raw = (await isRegularFile(c, file)) ? await c.system.readFile(file) : null;
  if (raw === null) throw notFound(`no S3 share ${share}`);
  const unit = parseUnit(raw);
  const [env, enabled] = await Promise.all([readEnv(c, settings, share), isEnabled(c, share)]);
  const v = env?.values ?? { rootUser: '', rootPassword: '', path: '', port: '' };
  return {
    shareName: share,
    path: v.path,
    enabled,
    port: v.port,
    user: unit.Service?.User || 'root',
    rootUser: v.rootUser,
    rootPassword: v.rootPassword,
    raw,
    conf: env?.text ?? '',
  };
}

/** Ports of the existing shares (from their environment files), by share name. */
export async function sharePorts(c: Ctx, settings: S3Settings): Promise<Map<string, string>> {
  const names = await shareNames(c);
  const out = new Map<string, string>();
  await Promise.all(
    names.map(async (n) => {
      const env = await readEnv(c, settings, n).catch((e: unknown) => {
        if (e instanceof ParseError) return null; // a broken file holds no port we could honour
        throw e;
      });
      if (env?.values.port) out.set(n, env.values.port);
    }),
  );
  return out;
}

/** 409 when `port` is another share's or a listening TCP socket's (`ss -Hltn`). */
export async function checkPortFree(c: Ctx, settings: S3Settings, port: string, self?: string): Promise<void> {
  for (const [name, p] of await sharePorts(c, settings)) {
    if (name !== self && Number(p) === Number(port))
      throw conflict(`port ${port} is already used by S3 share ${name}`, { port, shareName: name });
  }
  const r = await c.system.run([bin(c.vars, 'ss'), '-Hltn']);
  if (parseSsListening(r.stdout).includes(Number(port)))
    throw conflict(`port ${port} is in use: a process listens on it`, { port });
}
