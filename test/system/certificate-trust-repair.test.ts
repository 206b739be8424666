/**
 * System tier: trust store changes stay whole when update-ca-certificates is stopped part way,
 * with the real tool on private directories (as certificate-routes.test.ts).
 *   - A timeout in the middle of the tool: a `find` first on the tools' PATH (config
 *     `system.env.PATH`) sleeps at its Nth call, so the tool is killed at a known step: during
 *     `--fresh`'s clearing (hash links left dangling) or before `openssl rehash` and the bundle's
 *     rename (a `<name>.pem` link to a file about to go, `ca-certificates.crt.new` left). The
 *     answer is a 504; the store is as before: no dangling link, no partial bundle, and
 *     `openssl verify -CApath` trusts exactly the CAs that are still trusted.
 *   - A host killed mid-change (simulated: the intent file it writes first, the files as the kill
 *     left them): the next start records a change that had taken effect (event, audit row, once)
 *     and rolls back one that had not.
 */
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { existsSync, lstatSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { HostConfig } from '../../runtime/config';
import { serve, type Serving } from '../../runtime/serve';
import { createToken } from '../../runtime/tokens';
import { trustIntentFile, type TrustIntent } from '../../runtime/areas/certificate/trust-store';
import { distDir, makeTestConfig } from '../helpers/host';
import { privateDir } from '../helpers/tmp';
import { makePki, OPENSSL, type Pki } from '../helpers/certificate-pki';
import { errorCode, errorMessage, updateArgv } from '../routes/certificate-helpers';

const UPDATE = '/usr/sbin/update-ca-certificates';

let pki: Pki;
let pemDir: string;
beforeAll(() => {
  if (!existsSync(UPDATE)) throw new Error(`${UPDATE} is missing: install the Debian package ca-certificates`);
  pki = makePki(privateDir('certificate-pki'));
  pemDir = privateDir('certificate-pems');
});

interface Box {
  s: Serving;
  config: HostConfig;
  /** the tool's `find` sleeps at its nth call from now (120 s: killed by the time limit) */
  stallFindAt(n: number, seconds?: number): void;
  call(method: string, path: string, body?: unknown): Promise<{ status: number; json: unknown }>;
}

const running: Serving[] = [];
afterEach(async () => {
  for (const s of running.splice(0)) await s.stop();
});

function configure(limits: { commandTimeoutMs: number; trustTimeoutMs: number } = TIMEOUT_LIMITS): {
  config: HostConfig;
  arm: string;
} {
  const base = makeTestConfig();
  const stubs = join(base.state, 'stubs');
  const arm = join(base.state, 'find-arm');
  mkdirSync(stubs);
  // the arm file holds `<n> <seconds>`: the nth find from now sleeps that long, then finds
  writeFileSync(
    join(stubs, 'find'),
    `#!/bin/sh\nif [ -f ${arm} ]; then\n  read n s < ${arm}\n  if [ "$n" -le 1 ]; then rm -f ${arm}; /usr/bin/sleep "$s"; else echo "$((n - 1)) $s" > ${arm}; fi\nfi\nexec /usr/bin/find "$@"\n`,
    { mode: 0o755 },
  );
  const config: HostConfig = {
    ...base.config,
    system: {
      ...base.config.system,
      mode: 'live',
      env: { ...base.config.system.env, PATH: `${stubs}:/usr/sbin:/usr/bin:/sbin:/bin` },
    },
    limits: { ...base.config.limits, commandTimeoutMs: limits.commandTimeoutMs },
    settings: {
      ...base.config.settings,
      certificate: { ...(base.config.settings.certificate ?? {}), trustTimeoutMs: limits.trustTimeoutMs },
    },
  };
  // a conf that is not empty (an empty one makes every run --fresh): add runs without it, as on a box
  writeFileSync(config.paths.caCertificatesConf, '# no distribution certificates here\n');
  return { config, arm };
}

/** The tool's own limit decides, not the host's command limit (which is longer here). */
const TIMEOUT_LIMITS = { commandTimeoutMs: 30_000, trustTimeoutMs: 5000 };

async function start(config: HostConfig, arm = ''): Promise<Box> {
  const s = await serve({ config, distDir, signals: false, accessLog: false, log: () => undefined });
  running.push(s);
  const token = (await createToken(s.host.db, `admin-${Date.now()}-${Math.random()}`, ['*'])).token;
  return {
    s,
    config,
    stallFindAt: (n, seconds = 120) => writeFileSync(arm, `${n} ${seconds}`),
    async call(method, path, body) {
      const res = await fetch(`${s.server.url}/api/v2${path}`, {
        method,
        headers: { token, 'content-type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      const text = await res.text();
      return { status: res.status, json: text === '' ? undefined : (JSON.parse(text) as unknown) };
    },
  };
}

/** `openssl verify` with nothing but the store's hash links as trust anchors. */
function trusted(config: HostConfig, pem: string): boolean {
  const f = join(pemDir, `${Math.random().toString(16).slice(2)}.pem`);
  writeFileSync(f, pem);
  const r = spawnSync(OPENSSL, ['verify', '-no-CAfile', '-no-CAstore', '-CApath', config.paths.sslCerts, f]);
  return r.status === 0;
}

function dangling(dir: string): string[] {
  return readdirSync(dir).filter((n) => lstatSync(join(dir, n)).isSymbolicLink() && !existsSync(join(dir, n)));
}

function bundle(config: HostConfig): string {
  return readFileSync(join(config.paths.sslCerts, 'ca-certificates.crt'), 'utf8');
}

const normalized = (pem: string) => new X509Certificate(pem).toString();
const partial = (config: HostConfig) => join(config.paths.sslCerts, 'ca-certificates.crt.new');

function events(s: Serving, kind: string): { data: unknown; requestId: string | null }[] {
  return (
    s.host.db.prepare('SELECT data, request_id FROM events WHERE kind = ? ORDER BY seq').all(kind) as {
      data: string;
      request_id: string | null;
    }[]
  ).map((e) => ({ data: JSON.parse(e.data) as unknown, requestId: e.request_id }));
}

function trustAudit(s: Serving): { requestId: string | null; note: string }[] {
  return (
    s.host.db.prepare("SELECT request_id, note FROM audit_log WHERE kind = 'certificate/trust' ORDER BY id").all() as {
      request_id: string | null;
      note: string;
    }[]
  ).map((r) => ({ requestId: r.request_id, note: r.note }));
}

async function until(what: string, f: () => boolean, ms = 20_000): Promise<void> {
  const end = Date.now() + ms;
  while (!f()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('a trust store change whose update-ca-certificates times out', () => {
  it('remove, killed while --fresh cleared the links: 504, the file back, links rebuilt, both CAs verify', async () => {
    const { config, arm } = configure();
    const b = await start(config, arm);
    expect((await b.call('POST', '/certificate/add', { name: 'ca-a', certificate: pki.a.root })).status).toBe(200);
    expect((await b.call('POST', '/certificate/add', { name: 'ca-b', certificate: pki.b.root })).status).toBe(200);
    expect([trusted(config, pki.a.root), trusted(config, pki.b.root)]).toEqual([true, true]);

    // --fresh: 1st find lists the links to delete, the 2nd (the dangling ones) stalls
    b.stallFindAt(2);
    const started = Date.now();
    const r = await b.call('POST', '/certificate/remove', { name: 'ca-a' });
    expect([r.status, errorCode(r.json), errorMessage(r.json)]).toEqual([
      504,
      'command_timeout',
      'update-ca-certificates did not finish within its time limit (settings.certificate.trustTimeoutMs); the trust store was put back as it was',
    ]);
    // the stalled find went with the tool (its process group), so the answer did not wait for it
    expect(Date.now() - started).toBeLessThan(60_000);
    expect(readdirSync(config.paths.caCertificates).sort()).toEqual(['ca-a.crt', 'ca-b.crt']);
    expect(dangling(config.paths.sslCerts)).toEqual([]);
    expect(existsSync(partial(config))).toBe(false);
    expect([trusted(config, pki.a.root), trusted(config, pki.b.root)]).toEqual([true, true]);
    expect(bundle(config)).toContain(normalized(pki.a.root));
    expect(existsSync(trustIntentFile(config.stateDir))).toBe(false);
    expect(events(b.s, 'certificate.trusted.removed')).toEqual([]);

    // and the store works on: the remove now goes through
    const again = await b.call('POST', '/certificate/remove', { name: 'ca-a' });
    expect(again.status, JSON.stringify(again.json)).toBe(200);
    expect([trusted(config, pki.a.root), trusted(config, pki.b.root)]).toEqual([false, true]);
    expect(dangling(config.paths.sslCerts)).toEqual([]);
  });

  it('add, killed before the rehash and the bundle rename: 504, the file gone, no .new, no dangling link', async () => {
    const { config, arm } = configure();
    const b = await start(config, arm);
    expect((await b.call('POST', '/certificate/add', { name: 'ca-a', certificate: pki.a.root })).status).toBe(200);

    // 1st find: the local certificates (the new link is made), the 2nd (orphan links) stalls
    b.stallFindAt(2);
    const r = await b.call('POST', '/certificate/add', { name: 'ca-b', certificate: pki.b.root });
    expect([r.status, errorCode(r.json)]).toEqual([504, 'command_timeout']);
    expect(readdirSync(config.paths.caCertificates)).toEqual(['ca-a.crt']);
    expect(existsSync(partial(config))).toBe(false);
    expect(existsSync(join(config.paths.sslCerts, 'ca-b.pem'))).toBe(false);
    expect(dangling(config.paths.sslCerts)).toEqual([]);
    expect([trusted(config, pki.a.root), trusted(config, pki.b.root)]).toEqual([true, false]);
    expect(bundle(config)).not.toContain(normalized(pki.b.root));
    expect(events(b.s, 'certificate.trusted.added').map((e) => e.data)).toEqual([{ name: 'ca-a' }]);

    // the partial bundle is not appended to by the next run: the retry's bundle is whole
    const again = await b.call('POST', '/certificate/add', { name: 'ca-b', certificate: pki.b.root });
    expect(again.status, JSON.stringify(again.json)).toBe(200);
    expect(bundle(config)).toBe(normalized(pki.a.root) + normalized(pki.b.root));
    expect([trusted(config, pki.a.root), trusted(config, pki.b.root)]).toEqual([true, true]);
  });
});

describe('the tool has its own time limit (settings.certificate.trustTimeoutMs)', () => {
  it('a run longer than limits.commandTimeoutMs but inside trustTimeoutMs succeeds', async () => {
    // 1 s for every other command; the trust store's runs get 8 s (the host caps at 10 x 1 s)
    const { config, arm } = configure({ commandTimeoutMs: 1000, trustTimeoutMs: 8000 });
    const b = await start(config, arm);
    b.stallFindAt(1, 2);
    const started = Date.now();
    const r = await b.call('POST', '/certificate/add', { name: 'ca-a', certificate: pki.a.root });
    expect(r.status, JSON.stringify(r.json)).toBe(200);
    expect(Date.now() - started).toBeGreaterThanOrEqual(2000);
    expect(existsSync(arm)).toBe(false);
    expect(trusted(config, pki.a.root)).toBe(true);
    expect(events(b.s, 'certificate.trusted.added').map((e) => e.data)).toEqual([{ name: 'ca-a' }]);
  });
});

/** The intent of an add of ca-b a killed host left while the tool ran. */
const killedAddOfB = () =>
  ({
    action: 'add',
    name: 'ca-b',
    content: normalized(pki.b.root),
    requestId: 'req-killed',
    phase: 'applying',
  }) as const;

describe('a trust store change a killed host left', () => {
  /** The intent file as the host writes it before changing anything. */
  function leaveIntent(config: HostConfig, i: Omit<TrustIntent, 'startedAt'>, startedAt = Date.now() - 1000): void {
    mkdirSync(dirname(trustIntentFile(config.stateDir)), { recursive: true, mode: 0o700 });
    writeFileSync(trustIntentFile(config.stateDir), JSON.stringify({ ...i, startedAt }), { mode: 0o600 });
  }
  /** What the tool does for the host (as it would have finished after the kill). */
  function runTool(config: HostConfig): void {
    const r = spawnSync(updateArgv(config.paths, false)[0], updateArgv(config.paths, false).slice(1), {
      encoding: 'utf8',
    });
    expect(r.status, r.stderr).toBe(0);
  }

  it('an add that had taken effect is recorded at the next start (event with its request id, audit row), once', async () => {
    const { config } = configure();
    const first = await start(config);
    expect((await first.call('POST', '/certificate/add', { name: 'ca-a', certificate: pki.a.root })).status).toBe(200);
    await first.s.stop();
    running.splice(running.indexOf(first.s), 1);

    // killed after the tool finished, before the event: file, link and bundle all hold ca-b
    writeFileSync(join(config.paths.caCertificates, 'ca-b.crt'), normalized(pki.b.root), { mode: 0o644 });
    runTool(config);
    const startedAt = Date.now() - 1000;
    const intent = killedAddOfB();
    leaveIntent(config, intent, startedAt);

    const second = await start(config);
    await until('the intent to be settled', () => !existsSync(trustIntentFile(config.stateDir)));
    // committed before the intent went: there at once, not with a later batch
    expect(events(second.s, 'certificate.trusted.added')).toEqual([
      { data: { name: 'ca-a' }, requestId: expect.any(String) },
      { data: { name: 'ca-b' }, requestId: 'req-killed' },
    ]);
    expect(trustAudit(second.s)).toEqual([
      { requestId: 'req-killed', note: 'add of ca-b.crt had taken effect when the host stopped; recorded at start' },
    ]);
    expect(events(second.s, 'certificate.trusted.rolled_back')).toEqual([]);
    expect(readdirSync(config.paths.caCertificates).sort()).toEqual(['ca-a.crt', 'ca-b.crt']);
    expect([trusted(config, pki.a.root), trusted(config, pki.b.root)]).toEqual([true, true]);
    await second.s.stop();
    running.splice(running.indexOf(second.s), 1);

    // killed after the event, before the intent went: not recorded twice
    leaveIntent(config, intent, startedAt);
    const third = await start(config);
    await until('the intent to be settled', () => !existsSync(trustIntentFile(config.stateDir)));
    expect(events(third.s, 'certificate.trusted.added').filter((e) => e.requestId === 'req-killed')).toHaveLength(1);
  });

  it('an add that had not taken effect is rolled back at the next start: file and partial bundle gone, links rebuilt', async () => {
    const { config } = configure();
    const first = await start(config);
    expect((await first.call('POST', '/certificate/add', { name: 'ca-a', certificate: pki.a.root })).status).toBe(200);
    await first.s.stop();
    running.splice(running.indexOf(first.s), 1);

    // killed while the tool ran: the file, its link (dangling once the file goes), half a bundle
    writeFileSync(join(config.paths.caCertificates, 'ca-b.crt'), normalized(pki.b.root), { mode: 0o644 });
    spawnSync('/usr/bin/ln', [
      '-s',
      join(config.paths.caCertificates, 'ca-b.crt'),
      join(config.paths.sslCerts, 'ca-b.pem'),
    ]);
    writeFileSync(partial(config), normalized(pki.a.root) + normalized(pki.b.root));
    leaveIntent(config, killedAddOfB());

    const second = await start(config);
    await until('the intent to be settled', () => !existsSync(trustIntentFile(config.stateDir)));
    // committed before the intent went: there at once, not with a later batch
    expect(readdirSync(config.paths.caCertificates)).toEqual(['ca-a.crt']);
    expect(existsSync(partial(config))).toBe(false);
    expect(dangling(config.paths.sslCerts)).toEqual([]);
    expect([trusted(config, pki.a.root), trusted(config, pki.b.root)]).toEqual([true, false]);
    expect(bundle(config)).toBe(normalized(pki.a.root));
    expect(events(second.s, 'certificate.trusted.rolled_back')).toEqual([
      {
        data: { name: 'ca-b', action: 'add', reason: 'the host stopped during the change' },
        requestId: 'req-killed',
      },
    ]);
    expect(events(second.s, 'certificate.trusted.added').map((e) => e.data)).toEqual([{ name: 'ca-a' }]);
    expect(trustAudit(second.s)).toEqual([
      {
        requestId: 'req-killed',
        note: 'add of ca-b.crt interrupted by a host stop; rolled back (file as before, update-ca-certificates --fresh)',
      },
    ]);
  });

  it('a rollback whose audit row cannot be written keeps its intent; the next start records it, the event once', async () => {
    const { config } = configure();
    const first = await start(config);
    expect((await first.call('POST', '/certificate/add', { name: 'ca-a', certificate: pki.a.root })).status).toBe(200);
    // the database refuses the repair's row (as a full disk would)
    first.s.host.db.exec(
      "CREATE TRIGGER no_trust_row BEFORE INSERT ON audit_log WHEN NEW.kind = 'certificate/trust' BEGIN SELECT RAISE(ABORT, 'disk full'); END",
    );
    await first.s.stop();
    running.splice(running.indexOf(first.s), 1);
    writeFileSync(join(config.paths.caCertificates, 'ca-b.crt'), normalized(pki.b.root), { mode: 0o644 });
    leaveIntent(config, killedAddOfB());

    const second = await start(config);
    await until('the rollback', () => events(second.s, 'certificate.trusted.rolled_back').length > 0);
    expect(readdirSync(config.paths.caCertificates)).toEqual(['ca-a.crt']);
    expect(trustAudit(second.s)).toEqual([]);
    expect(existsSync(trustIntentFile(config.stateDir))).toBe(true);
    second.s.host.db.exec('DROP TRIGGER no_trust_row');
    await second.s.stop();
    running.splice(running.indexOf(second.s), 1);

    const third = await start(config);
    await until('the intent to be settled', () => !existsSync(trustIntentFile(config.stateDir)));
    expect(trustAudit(third.s)).toEqual([
      {
        requestId: 'req-killed',
        note: 'add of ca-b.crt interrupted by a host stop; rolled back (file as before, update-ca-certificates --fresh)',
      },
    ]);
    expect(events(third.s, 'certificate.trusted.rolled_back')).toEqual([
      {
        data: { name: 'ca-b', action: 'add', reason: 'the host stopped during the change' },
        requestId: 'req-killed',
      },
    ]);
    expect([trusted(config, pki.a.root), trusted(config, pki.b.root)]).toEqual([true, false]);
  });

  it('a partial bundle without a change in flight is removed at start', async () => {
    const { config } = configure();
    writeFileSync(partial(config), 'half a bundle');
    await start(config);
    expect(existsSync(partial(config))).toBe(false);
  });
});
