import { afterAll, describe, expect, it } from 'vitest';
import { spawn, spawnSync, execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { repo } from '../helpers/host';
import { freePort } from '../bench/lib';
import { jsonOf } from '../helpers/answers';
import type { Krb5Conf } from '../../handlers/kerberos/parse/krb5-conf';
import { defaultConfig, loadConfigFile, validateConfig } from '../../runtime/config';

const cli = join(repo, 'dist/host/cli.mjs');
const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

function tmp(): string {
  const d = mkdtempSync(join(tmpdir(), 'ballast-cli-'));
  dirs.push(d);
  return d;
}

async function untilOutput(child: ReturnType<typeof spawn>, re: RegExp): Promise<string> {
  let out = '';
  return new Promise((resolve, reject) => {
    const t = setTimeout(() => reject(new Error(`no ${re} in: ${out}`)), 20_000);
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      if (re.test(out)) {
        clearTimeout(t);
        resolve(out);
      }
    });
  });
}

describe('host CLI', () => {
  it('token create shows the token once; list never shows it; revoke ends it', () => {
    const d = tmp();
    const cfg = join(d, 'config.yaml');
    writeFileSync(cfg, stringify({ stateDir: d }));
    const out = execFileSync(
      process.execPath,
      [
        cli,
        'token',
        'create',
        'ui',
        '--perm',
        'network:read',
        '--perm',
        'kerberos:manage',
        '--expires',
        '30d',
        '--config',
        cfg,
      ],
      { encoding: 'utf8' },
    );
    const token = out.trim().split('\n').at(-1)!;
    expect(token).toMatch(/^blt_[0-9a-f]{12}_[A-Za-z0-9_-]{43}$/);
    const list = JSON.parse(
      execFileSync(process.execPath, [cli, 'token', 'list', '--json', '--config', cfg], { encoding: 'utf8' }),
    ) as { expiresAt: string }[];
    expect(list).toHaveLength(1);
    expect(list[0]).toMatchObject({ name: 'ui', permissions: ['network:read', 'kerberos:manage'], revokedAt: null });
    expect(Date.parse(list[0].expiresAt) - Date.now()).toBeGreaterThan(29 * 86_400_000);
    // the secret may itself contain '_', so take everything after the id
    const secret = token.slice('blt_'.length + 12 + 1);
    expect(secret).toHaveLength(43);
    expect(JSON.stringify(list)).not.toContain(secret);
    expect(readFileSync(join(d, 'ballast.db')).includes(Buffer.from(secret))).toBe(false);
    execFileSync(process.execPath, [cli, 'token', 'revoke', 'ui', '--config', cfg]);
    expect(
      JSON.parse(
        execFileSync(process.execPath, [cli, 'token', 'list', '--json', '--config', cfg], { encoding: 'utf8' }),
      )[0].revokedAt,
    ).not.toBeNull();
    expect(() =>
      execFileSync(process.execPath, [cli, 'token', 'create', 'bad', '--perm', 'root', '--config', cfg], {
        stdio: 'pipe',
      }),
    ).toThrow(/bad permission root/);
  });

  it('first start with no tokens creates an admin token, shows it once, and it works', async () => {
    const d = tmp();
    const port = await freePort();
    const cfg = join(d, 'config.yaml');
    writeFileSync(
      cfg,
      stringify({
        stateDir: d,
        listen: { host: '127.0.0.1', port },
        paths: { krb5Conf: join(d, 'krb5.conf') },
        system: { mode: 'replay' },
      }),
    );
    writeFileSync(join(d, 'krb5.conf'), 'includedir /etc/krb5.conf.d\n');
    const child = spawn(process.execPath, [cli, 'serve', '--config', cfg], { stdio: ['ignore', 'pipe', 'inherit'] });
    try {
      const out = await untilOutput(child, /listening on/);
      const token = /\n {2}(blt_\S+)\n/.exec(out)?.[1];
      expect(token).toMatch(/^blt_[0-9a-f]{12}_[A-Za-z0-9_-]{43}$/);
      const r = await fetch(`http://127.0.0.1:${port}/api/v2/kerberos/conf`, { headers: { token: token! } });
      expect(r.status).toBe(200);
    } finally {
      child.kill('SIGTERM');
      await new Promise((r) => child.once('exit', r));
    }
    expect(child.exitCode).toBe(0);
    // second start: tokens exist, none is shown
    const again = spawn(process.execPath, [cli, 'serve', '--config', cfg], { stdio: ['ignore', 'pipe', 'inherit'] });
    const out2 = await untilOutput(again, /listening on/);
    again.kill('SIGTERM');
    await new Promise((r) => again.once('exit', r));
    expect(out2).not.toContain('blt_');
  });

  it('the demo serves kerberos/conf with its token file and refuses without it', async () => {
    const d = tmp();
    const port = await freePort();
    const env: Record<string, string | undefined> = { ...process.env, PORT: String(port) };
    delete env.BALLAST_DEMO_DIR;
    // state goes to the working directory's var/demo, wherever the CLI is installed
    const child = spawn(process.execPath, [cli, 'serve', '--demo'], {
      cwd: d,
      env,
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    try {
      await untilOutput(child, /listening on/);
      const token = readFileSync(join(d, 'var/demo/admin.token'), 'utf8').trim();
      const r = await fetch(`http://127.0.0.1:${port}/api/v2/kerberos/conf`, { headers: { token } });
      expect(r.status).toBe(200);
      expect(r.headers.get('x-powered-by')).toBe('Ballast Demo Appliance');
      const body = await jsonOf<{ raw: string; json: Krb5Conf }>(r);
      expect(body.raw.split('\n')[0]).toBe('includedir /etc/krb5.conf.d');
      expect(body.json.sections.libdefaults.default_realm).toBe('CORP.EXAMPLE.COM');
      expect((await fetch(`http://127.0.0.1:${port}/api/v2/kerberos/conf`)).status).toBe(401);
    } finally {
      child.kill('SIGTERM');
      await new Promise((r) => child.once('exit', r));
    }
  });
});

describe('command line and config file are strict', () => {
  const run = (args: string[]) => {
    const r = spawnSync(process.execPath, [cli, ...args], {
      encoding: 'utf8',
      env: { ...process.env, BALLAST_CONFIG: '/nonexistent/ballast.yaml' },
    });
    return { code: r.status, out: r.stdout, err: r.stderr };
  };

  it('--help and <command> --help print usage and exit 0', () => {
    const top = run(['--help']);
    expect(top.code).toBe(0);
    expect(top.out).toMatch(/^usage:\n {2}ballast serve /);
    const serveHelp = run(['serve', '--help']);
    expect(serveHelp.code).toBe(0);
    expect(serveHelp.out).toMatch(
      /^usage:\n {2}ballast serve \[--config FILE \| --demo\] \[--isolate \[workerd\|deno\]\] \[--port N\] \[--host ADDR\] \[--log-format json\|text\] \[--log-level LEVEL\]\n\noptions:\n/,
    );
    // every option the command takes has a line of its own
    for (const o of [
      '--config FILE ',
      '--demo ',
      '--isolate [workerd|deno] ',
      '--port N ',
      '--host ADDR ',
      '--log-format json|text ',
      '--log-level LEVEL ',
      '--help ',
    ])
      expect(serveHelp.out).toContain(`\n  ${o}`);
    expect(serveHelp.out).toContain('--port N                  listen on port N, 0 to 65535');
    const tokenHelp = run(['token', '--help']);
    for (const o of ['--perm PERM', '--expires WHEN', '--json', '--db FILE'])
      expect(tokenHelp.out).toContain(`\n  ${o}`);
    const recordHelp = run(['record', '--help']);
    for (const o of ['--dir DIR', '--config FILE', '--demo', '--help']) expect(recordHelp.out).toContain(`\n  ${o}`);
    expect(recordHelp.out).toContain('default fixtures/recorded in the working directory');
  });

  it.each([
    [['serve', '--demo', '--prot', '1'], "ballast: serve: Unknown option '--prot' (did you mean --port?)\n"],
    [['serve', '--demo', '--zzzz', '1'], "ballast: serve: Unknown option '--zzzz'\n"],
    [['serve', '--port'], "ballast: serve: Option '--port <value>' argument missing\n"],
    [['serve', '--port', 'eighty'], 'ballast: --port must be a number from 0 to 65535 (got "eighty")\n'],
    [['serve', '--port', '70000'], 'ballast: --port must be a number from 0 to 65535 (got "70000")\n'],
    [['serve', '--port', '65536'], 'ballast: --port must be a number from 0 to 65535 (got "65536")\n'],
    [
      ['token', 'create', 'x', '--db', '/nonexistent/x.db'],
      'ballast: token create needs at least one --perm (<area>:read, <area>:manage or *)\n',
    ],
    [['serve', '--isolate=bun'], 'ballast: --isolate takes workerd or deno (got "bun")\n'],
    [['token'], 'ballast: token: needs a subcommand (create, list, revoke)\n'],
    [['frobnicate'], 'ballast: unknown command "frobnicate" (commands: serve, token, record)\n'],
  ])('%j exits 2 with one line saying what is wrong', (args, line) => {
    const r = run(args);
    expect(r.code).toBe(2);
    expect(r.err).toBe(line);
  });

  it('--version prints the package version', () => {
    const r = run(['--version']);
    const { version } = JSON.parse(readFileSync(join(repo, 'package.json'), 'utf8')) as { version: string };
    expect([r.code, r.out]).toEqual([0, `ballast ${version}\n`]);
  });

  it('nothing is created on disk before the command is known', () => {
    const d = tmp();
    const cfg = join(d, 'config.yaml');
    writeFileSync(cfg, stringify({ stateDir: join(d, 'state') }));
    expect(run(['token', '--config', cfg]).code).toBe(2);
    expect(run(['token', 'create', '--config', cfg]).code).toBe(2);
    expect(existsSync(join(d, 'state'))).toBe(false);
  });

  it('the defaults, and any file merged onto them, pass the whole check (loadConfigFile checks only the file)', () => {
    expect(() => validateConfig(defaultConfig())).not.toThrow();
    const d = tmp();
    const cfg = join(d, 'config.yaml');
    writeFileSync(
      cfg,
      stringify({
        stateDir: join(d, 'state'),
        listen: { port: 9000 },
        limits: { bodyBytes: 4096 },
        system: { binaries: { ip: '/usr/local/sbin/ip' } },
        settings: { network: { concurrency: 2 } },
      }),
    );
    const loaded = loadConfigFile(cfg);
    expect(() => validateConfig(loaded)).not.toThrow();
    expect([loaded.listen, loaded.limits.bodyBytes, loaded.system.binaries.ip]).toEqual([
      { host: defaultConfig().listen.host, port: 9000 },
      4096,
      '/usr/local/sbin/ip',
    ]);
    // a flag's value is what validateConfig is for
    expect(() => validateConfig({ ...loaded, listen: { ...loaded.listen, port: 70_000 } })).toThrow(/listen\.port/);
  });

  it.each([
    ['listn: 1\n', '(root): Unrecognized key: "listn" ("listn": did you mean "listen"?)'],
    ['listen: { prot: 80 }\n', 'listen: Unrecognized key: "prot" ("prot": did you mean "port"?)'],
    ['limits: { BodyBytes: 80 }\n', 'limits: Unrecognized key: "BodyBytes" ("BodyBytes": did you mean "bodyBytes"?)'],
    [
      'settings: { kerberos: { kinitTimoutMs: 5 } }\n',
      'settings.kerberos: Unrecognized key: "kinitTimoutMs" ("kinitTimoutMs": did you mean "kinitTimeoutMs"?)',
    ],
    ['limits: { bodyBytes: "big" }\n', 'limits.bodyBytes: Invalid input: expected number, received string'],
    // nothing close: no guess
    ['settings: { network: { nope: 1 } }\n', 'settings.network: Unrecognized key: "nope"\n'],
    ['settings: { fs: { readRoots: [relative] } }\n', 'settings.fs.readRoots.0: must be an absolute path'],
    ['limits: { commandConcurrency: -1 }\n', 'limits.commandConcurrency: Too small'],
    ['isolate: "no"\n', 'isolate: must be false, true (= workerd), workerd or deno'],
    ['paths: { krb5Conf: etc/krb5.conf }\n', 'paths.krb5Conf: must be an absolute path'],
    ['productName: "a\\nb"\n', 'productName: must be plain text'],
  ])('a config file with %j stops serve naming the key and the file', (yaml, message) => {
    const d = tmp();
    const cfg = join(d, 'config.yaml');
    writeFileSync(cfg, `stateDir: ${join(d, 'state')}\n${yaml}`);
    const r = run(['serve', '--config', cfg]);
    expect(r.code).toBe(1);
    expect(r.err).toContain(`ballast: config ${cfg}: ${message}`);
    expect(existsSync(join(d, 'state'))).toBe(false);
  });

  it("an area command reads its settings as the host does: every issue, the key's hint", () => {
    const d = tmp();
    const cfg = join(d, 'config.yaml');
    writeFileSync(cfg, `stateDir: ${join(d, 'state')}\nsettings: { pod: { prefx: x, engineCheck: maybe } }\n`);
    const r = run(['pod', 'verify', '--config', cfg, '--', 'web']);
    expect(r.code).toBe(1);
    expect(r.err).toBe(
      `ballast: config ${cfg}: settings.pod.engineCheck: Invalid input: expected boolean, received string; settings.pod: Unrecognized key: "prefx" ("prefx": did you mean "prefix"?)\n`,
    );
  });
});

describe('serve --log-format and --log-level', () => {
  it('refuse values they do not take, naming the ones they do', () => {
    const cli = join(repo, 'dist/host/cli.mjs');
    const bad = (args: string[]) =>
      spawnSync(process.execPath, [cli, 'serve', '--demo', ...args], { encoding: 'utf8' });
    expect(bad(['--log-format', 'xml']).stderr).toBe('ballast: --log-format takes json or text (got "xml")\n');
    expect(bad(['--log-level', 'loud']).stderr).toBe(
      'ballast: --log-level takes trace, debug, info, warn, error, fatal, silent (got "loud")\n',
    );
  });
});
