/**
 * A throwaway MIT KDC for the system test tier (and for recording Kerberos fixtures).
 *
 * Everything lives in a private directory under os.tmpdir(): its own kdc.conf and krb5.conf
 * (pointed at by KRB5_KDC_PROFILE / KRB5_CONFIG, so the machine's /etc/krb5.conf and
 * /etc/krb5kdc are never read or written), database, stash, keytab, ticket caches and logs.
 * The KDC listens on 127.0.0.1 only, on a port that was free when it started; `krb5kdc -n` runs
 * in the foreground as our child, so stop() (or this process exiting) ends it.
 *
 * Commands run from argv arrays (spawn, no shell) with a clean environment: PATH, the KRB5_*
 * variables below, LC_ALL=C (the parsers read the C locale) and TZ=UTC (klist prints local
 * time without a zone; the parsers read it as UTC).
 *
 * A missing MIT tool is an error, never a skip: a Kerberos system test that silently skips
 * proves nothing, and CI must go red if the machine lost krb5-kdc or krb5-user.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createSocket } from 'node:dgram';
import { accessSync, constants, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { renderKrb5Conf } from '../../../handlers/kerberos/render/krb5-conf';
import { principal, realmName } from '../../../handlers/kerberos/names';

/** Absolute paths of the MIT tools on Debian 12 (krb5-kdc, krb5-admin-server, krb5-user). */
export const KRB5_BIN = {
  krb5kdc: '/usr/sbin/krb5kdc',
  kdb5_util: '/usr/sbin/kdb5_util',
  kadminLocal: '/usr/sbin/kadmin.local',
  kinit: '/usr/bin/kinit',
  klist: '/usr/bin/klist',
  kdestroy: '/usr/bin/kdestroy',
  kvno: '/usr/bin/kvno',
} as const;
export type Krb5Bin = { -readonly [K in keyof typeof KRB5_BIN]: string };

export interface KdcPrincipal {
  /** without realm, e.g. `alice` or `admin/admin` */
  name: string;
  password: string;
}

export interface KdcOptions {
  /** default `EXAMPLE.TEST` */
  realm?: string;
  /** principals with a password (kinit-able from stdin) */
  principals: KdcPrincipal[];
  /** service principals created with random keys and exported to `keytabPath` (one ktadd) */
  keytabPrincipals?: string[];
  /** enctypes for that ktadd, e.g. `['aes256-cts-hmac-sha1-96:normal']`; default: the KDC's */
  keytabEnctypes?: string[];
  /** [libdefaults] renew_lifetime of the client krb5.conf; default `7d`, null for none */
  renewLifetime?: string | null;
  /** override tool paths (tests of the harness itself) */
  bin?: Partial<Krb5Bin>;
  /** ms to wait for the KDC to answer; default 15000 */
  startTimeoutMs?: number;
}

export interface RunResult {
  argv: string[];
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

export interface RunOptions {
  stdin?: string;
  /** merged over the KDC environment */
  env?: Record<string, string>;
  timeoutMs?: number;
}

export interface Kdc {
  realm: string;
  dir: string;
  krb5ConfPath: string;
  kdcConfPath: string;
  /**
   * KRB5_CONFIG, KRB5_KDC_PROFILE, KRB5CCNAME (FILE:<dir>/krb5cc), KRB5_KTNAME and
   * KRB5_CLIENT_KTNAME (FILE:<keytabPath>), LC_ALL=C, TZ=UTC. Pass it to any krb5 command.
   */
  env: Record<string, string>;
  /** where keytabPrincipals were exported; the file exists only if there were any */
  keytabPath: string;
  kdcPort: number;
  /** pid of the krb5kdc child */
  pid: number;
  bin: Krb5Bin;
  /** Run a command with the KDC environment (argv array, no shell). Never throws on exit code. */
  run(argv: string[], opts?: RunOptions): Promise<RunResult>;
  /** `kadmin.local -r REALM <args…>`; throws if it fails. */
  kadmin(...args: string[]): Promise<RunResult>;
  /** `kinit principal` with the password on stdin (MIT kinit reads a pipe when stdin is not a tty). */
  kinit(principal: string, password: string, opts?: RunOptions): Promise<RunResult>;
  /** The KDC's own log so far (for failure messages). */
  log(): string;
  /** Kill the KDC, wait for it, remove the directory. Idempotent. */
  stop(): Promise<void>;
}

const PATH = '/usr/sbin:/usr/bin:/sbin:/bin';

function requireTool(path: string, pkg: string): void {
  try {
    accessSync(path, constants.X_OK);
  } catch {
    throw new Error(`Kerberos system tests need ${path} (Debian package ${pkg}); it is missing or not executable`);
  }
}

export function runCommand(argv: string[], env: Record<string, string>, opts: RunOptions = {}): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(argv[0], argv.slice(1), {
      env: { PATH, ...env, ...opts.env },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on('data', (b: Buffer) => out.push(b));
    child.stderr.on('data', (b: Buffer) => err.push(b));
    const timer = setTimeout(() => child.kill('SIGKILL'), opts.timeoutMs ?? 20_000);
    child.on('error', (e) => {
      clearTimeout(timer);
      reject(e);
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({
        argv,
        code,
        signal,
        stdout: Buffer.concat(out).toString('utf8'),
        stderr: Buffer.concat(err).toString('utf8'),
      });
    });
    // A closed stdin (EOF) is what a non-interactive caller gives; kinit then fails cleanly.
    child.stdin.on('error', () => undefined);
    child.stdin.end(opts.stdin ?? '');
  });
}

/** A port free on 127.0.0.1 for both TCP and UDP at the time of the check. */
async function freePort(): Promise<number> {
  for (let attempt = 0; attempt < 20; attempt++) {
    const port = await new Promise<number>((resolve, reject) => {
      const s = createServer();
      s.once('error', reject);
      s.listen(0, '127.0.0.1', () => {
        const addr = s.address();
        const p = typeof addr === 'object' && addr ? addr.port : 0;
        s.close(() => resolve(p));
      });
    });
    const udpFree = await new Promise<boolean>((resolve) => {
      const u = createSocket('udp4');
      u.once('error', () => {
        u.close();
        resolve(false);
      });
      u.bind(port, '127.0.0.1', () => u.close(() => resolve(true)));
    });
    if (port > 0 && udpFree) return port;
  }
  throw new Error('no free port on 127.0.0.1 for the test KDC');
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function startKdc(options: KdcOptions): Promise<Kdc> {
  const bin: Krb5Bin = { ...KRB5_BIN, ...options.bin };
  requireTool(bin.krb5kdc, 'krb5-kdc');
  requireTool(bin.kdb5_util, 'krb5-kdc');
  requireTool(bin.kadminLocal, 'krb5-admin-server');
  requireTool(bin.kinit, 'krb5-user');
  requireTool(bin.klist, 'krb5-user');

  const realm = realmName.parse(options.realm ?? 'EXAMPLE.TEST');
  for (const p of options.principals) principal.parse(p.name);
  for (const p of options.keytabPrincipals ?? []) principal.parse(p);

  const dir = mkdtempSync(join(tmpdir(), 'ballast-kdc-'));
  const krb5ConfPath = join(dir, 'krb5.conf');
  const kdcConfPath = join(dir, 'kdc.conf');
  const keytabPath = join(dir, 'krb5.keytab');
  const env: Record<string, string> = {
    KRB5_CONFIG: krb5ConfPath,
    KRB5_KDC_PROFILE: kdcConfPath,
    KRB5CCNAME: `FILE:${join(dir, 'krb5cc')}`,
    KRB5_KTNAME: `FILE:${keytabPath}`,
    KRB5_CLIENT_KTNAME: `FILE:${keytabPath}`,
    HOME: dir,
    LC_ALL: 'C',
    TZ: 'UTC',
  };

  let child: ChildProcess | undefined;
  let kdcOutput = '';
  let stopped = false;
  // If the test process dies without stop(), do not leave a KDC or key material behind.
  const onExit = () => {
    child?.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  };
  process.once('exit', onExit);

  const writeConfs = (port: number) => {
    // kdc.conf: read only by krb5kdc / kdb5_util / kadmin.local (KRB5_KDC_PROFILE).
    writeFileSync(
      kdcConfPath,
      [
        '[kdcdefaults]',
        `\tkdc_listen = 127.0.0.1:${port}`,
        `\tkdc_tcp_listen = 127.0.0.1:${port}`,
        '',
        '[realms]',
        `\t${realm} = {`,
        `\t\tdatabase_name = ${join(dir, 'principal')}`,
        `\t\tkey_stash_file = ${join(dir, 'stash')}`,
        `\t\tacl_file = ${join(dir, 'kadm5.acl')}`,
        '\t\tmax_life = 10h 0m 0s',
        '\t\tmax_renewable_life = 7d 0h 0m 0s',
        '\t}',
        '',
        '[logging]',
        `\tkdc = FILE:${join(dir, 'kdc.log')}`,
        `\tadmin_server = FILE:${join(dir, 'kadmin.log')}`,
        `\tdefault = FILE:${join(dir, 'krb5lib.log')}`,
        '',
      ].join('\n'),
    );
    // krb5.conf goes through the product's renderer, so every system test also proves that MIT
    // reads what renderKrb5Conf writes.
    const libdefaults: Record<string, string> = {
      default_realm: realm,
      dns_lookup_kdc: 'false',
      dns_lookup_realm: 'false',
      dns_canonicalize_hostname: 'false',
      rdns: 'false',
      qualify_shortname: '',
      forwardable: 'true',
    };
    const renew = options.renewLifetime === undefined ? '7d' : options.renewLifetime;
    if (renew !== null) libdefaults.renew_lifetime = renew;
    writeFileSync(
      krb5ConfPath,
      renderKrb5Conf({
        libdefaults,
        realms: { [realm]: { kdc: [`127.0.0.1:${port}`] } },
      }),
    );
  };

  const run = (argv: string[], opts?: RunOptions) => runCommand(argv, env, opts);
  const kadmin = async (...args: string[]) => {
    const r = await run([bin.kadminLocal, '-r', realm, ...args]);
    if (r.code !== 0 || /error|failed|not found/i.test(r.stderr)) {
      throw new Error(`kadmin.local ${args[0]} failed (rc ${r.code}): ${r.stderr.trim()}`);
    }
    return r;
  };
  const kinit = (principal: string, password: string, opts?: RunOptions) =>
    run([bin.kinit, principal], { ...opts, stdin: `${password}\n` });
  const log = () => {
    let text = kdcOutput;
    try {
      text += readFileSync(join(dir, 'kdc.log'), 'utf8');
    } catch {
      /* not written yet */
    }
    return text;
  };
  const stop = async () => {
    if (stopped) return;
    stopped = true;
    process.removeListener('exit', onExit);
    const c = child;
    if (c && c.exitCode === null && c.signalCode === null) {
      const gone = new Promise<void>((r) => c.once('exit', () => r()));
      c.kill('SIGTERM');
      const killed = await Promise.race([gone.then(() => true), sleep(5000).then(() => false)]);
      if (!killed) {
        c.kill('SIGKILL');
        await gone;
      }
    }
    rmSync(dir, { recursive: true, force: true });
  };

  try {
    writeConfs(0);
    const masterPassword = randomBytes(24).toString('hex');
    const created = await run([bin.kdb5_util, 'create', '-s', '-r', realm, '-P', masterPassword]);
    if (created.code !== 0) throw new Error(`kdb5_util create failed (rc ${created.code}): ${created.stderr.trim()}`);
    writeFileSync(join(dir, 'kadm5.acl'), '');

    for (const p of options.principals) await kadmin('addprinc', '-pw', p.password, p.name);
    const keytabPrincipals = options.keytabPrincipals ?? [];
    for (const p of keytabPrincipals) await kadmin('addprinc', '-randkey', p);
    if (keytabPrincipals.length > 0) {
      const enc = options.keytabEnctypes ? ['-e', options.keytabEnctypes.join(' ')] : [];
      await kadmin('ktadd', '-k', keytabPath, ...enc, ...keytabPrincipals);
    }
    // Something to probe readiness with, that does not disturb the caller's ticket cache.
    let probe: RunOptions & { argv: string[] };
    const probeEnv = { KRB5CCNAME: `FILE:${join(dir, 'probe_cc')}` };
    if (options.principals[0]) {
      probe = {
        argv: [bin.kinit, options.principals[0].name],
        stdin: `${options.principals[0].password}\n`,
        env: probeEnv,
      };
    } else if (keytabPrincipals[0]) {
      probe = { argv: [bin.kinit, '-k', '-t', keytabPath, keytabPrincipals[0]], env: probeEnv };
    } else {
      const pw = randomBytes(16).toString('hex');
      await kadmin('addprinc', '-pw', pw, 'ballast-probe');
      probe = { argv: [bin.kinit, 'ballast-probe'], stdin: `${pw}\n`, env: probeEnv };
    }

    const deadline = Date.now() + (options.startTimeoutMs ?? 15_000);
    let port = 0;
    let lastProbe = '';
    // The port can be taken between the check and krb5kdc's bind: then the KDC exits and we
    // try another one.
    for (let attempt = 0; attempt < 3 && port === 0; attempt++) {
      const candidate = await freePort();
      writeConfs(candidate);
      kdcOutput = '';
      const c = spawn(bin.krb5kdc, ['-n', '-r', realm], { env: { PATH, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
      child = c;
      c.stdout?.on('data', (b: Buffer) => (kdcOutput += b.toString('utf8')));
      c.stderr?.on('data', (b: Buffer) => (kdcOutput += b.toString('utf8')));
      const spawnError = new Promise<Error>((r) => c.once('error', r));
      while (Date.now() < deadline) {
        if (c.exitCode !== null || c.signalCode !== null) break;
        const r = await Promise.race([run(probe.argv, probe), spawnError]);
        if (r instanceof Error) throw new Error(`cannot start ${bin.krb5kdc}: ${r.message}`);
        if (r.code === 0) {
          port = candidate;
          break;
        }
        lastProbe = r.stderr.trim();
        await sleep(50);
      }
      if (port === 0 && (c.exitCode !== null || c.signalCode !== null)) continue;
      if (port === 0) break;
    }
    if (port === 0) {
      throw new Error(`test KDC did not answer (last kinit: ${lastProbe || 'none'}); KDC output:\n${log()}`);
    }
    rmSync(join(dir, 'probe_cc'), { force: true });

    const pid = child?.pid;
    if (pid === undefined) throw new Error('krb5kdc has no pid');
    return {
      realm,
      dir,
      krb5ConfPath,
      kdcConfPath,
      env,
      keytabPath,
      kdcPort: port,
      pid,
      bin,
      run,
      kadmin,
      kinit,
      log,
      stop,
    };
  } catch (e) {
    await stop();
    throw e;
  }
}
