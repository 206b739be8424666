/**
 * System tier: a real MIT KDC on loopback (test/system/helpers/kdc.ts), real kinit/klist, and
 * the product's parsers on their output. Nothing here touches the machine's /etc/krb5.conf:
 * every command runs with the harness's private KRB5_CONFIG / KRB5_KDC_PROFILE / KRB5CCNAME.
 * A missing krb5kdc makes beforeAll throw, so the tests fail; they never skip.
 */
import { existsSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { keytabList, klist, parseKeytabList, parseKlist } from '../../handlers/kerberos/parse/klist';
import { parseKrb5Error } from '../../handlers/kerberos/parse/krb5-error';
import { startKdc, type Kdc } from './helpers/kdc';

const PASSWORD = 'Corr3ct horse "battery" staple';
const isAlive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};
const seconds = (iso: string) => Date.parse(iso) / 1000;

describe('MIT KDC on loopback', () => {
  let kdc: Kdc;

  beforeAll(async () => {
    kdc = await startKdc({
      principals: [{ name: 'alice', password: PASSWORD }],
      keytabPrincipals: ['host/nas01.example.test', 'nfs/nas01.example.test'],
    });
  });
  afterAll(async () => {
    await kdc?.stop();
  });

  it('listens on 127.0.0.1 with a private configuration', () => {
    expect(kdc.kdcPort).toBeGreaterThan(0);
    expect(kdc.env.KRB5_CONFIG.startsWith(kdc.dir)).toBe(true);
    expect(kdc.env.KRB5_KDC_PROFILE.startsWith(kdc.dir)).toBe(true);
    expect(kdc.env.KRB5CCNAME).toBe(`FILE:${kdc.dir}/krb5cc`);
    expect(isAlive(kdc.pid)).toBe(true);
  });

  it('kinit reads the password from a stdin pipe and klist shows the TGT', async () => {
    const before = Math.floor(Date.now() / 1000);
    const r = await kdc.kinit('alice@EXAMPLE.TEST', PASSWORD);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe('Password for alice@EXAMPLE.TEST: \n');

    const l = await kdc.run([kdc.bin.klist]);
    expect(l.code, l.stderr).toBe(0);
    const parsed = parseKlist(l.stdout);
    expect(() => klist.parse(parsed)).not.toThrow();
    expect(parsed.cache).toBe(kdc.env.KRB5CCNAME);
    expect(parsed.defaultPrincipal).toBe('alice@EXAMPLE.TEST');
    expect(parsed.tickets).toHaveLength(1);
    const [tgt] = parsed.tickets;
    expect(tgt.service).toBe('krbtgt/EXAMPLE.TEST@EXAMPLE.TEST');
    // klist printed local time under TZ=UTC; the parser read it as UTC: it must be "now".
    expect(seconds(tgt.start)).toBeGreaterThanOrEqual(before - 1);
    expect(seconds(tgt.start)).toBeLessThanOrEqual(Math.ceil(Date.now() / 1000) + 1);
    expect(seconds(tgt.expires) - seconds(tgt.start)).toBe(10 * 3600); // kdc.conf max_life
    expect(seconds(tgt.renewUntil ?? '') - seconds(tgt.start)).toBe(7 * 86400); // renew_lifetime
  });

  it('lists a service ticket with flags and enctypes', async () => {
    const v = await kdc.run([kdc.bin.kvno, 'nfs/nas01.example.test@EXAMPLE.TEST']);
    expect(v.code, v.stderr).toBe(0);
    const l = await kdc.run([kdc.bin.klist, '-f', '-e']);
    const { tickets } = parseKlist(l.stdout);
    expect(tickets.map((t) => t.service)).toEqual([
      'krbtgt/EXAMPLE.TEST@EXAMPLE.TEST',
      'nfs/nas01.example.test@EXAMPLE.TEST',
    ]);
    expect(tickets[0].flags).toContain('I'); // initial
    expect(tickets[1].flags).not.toContain('I');
    for (const t of tickets) {
      expect(t.flags).toMatch(/F/); // forwardable = true in the client config
      expect(t.etypes?.ticket).toBe('aes256-cts-hmac-sha1-96');
    }
  });

  it('klist -k -t -e lists the exported keytab', async () => {
    const l = await kdc.run([kdc.bin.klist, '-k', '-t', '-e', kdc.keytabPath]);
    expect(l.code, l.stderr).toBe(0);
    const parsed = parseKeytabList(l.stdout);
    expect(() => keytabList.parse(parsed)).not.toThrow();
    expect(parsed.keytab).toBe(`FILE:${kdc.keytabPath}`);
    const summary = parsed.keys.map((k) => `${k.kvno} ${k.principal} ${k.enctype}`).sort();
    expect(summary).toEqual([
      '2 host/nas01.example.test@EXAMPLE.TEST aes128-cts-hmac-sha1-96',
      '2 host/nas01.example.test@EXAMPLE.TEST aes256-cts-hmac-sha1-96',
      '2 nfs/nas01.example.test@EXAMPLE.TEST aes128-cts-hmac-sha1-96',
      '2 nfs/nas01.example.test@EXAMPLE.TEST aes256-cts-hmac-sha1-96',
    ]);
    // The keytab works: kinit -k gets a TGT for the host principal.
    const k = await kdc.run([kdc.bin.kinit, '-k', '-t', kdc.keytabPath, 'host/nas01.example.test@EXAMPLE.TEST'], {
      env: { KRB5CCNAME: `FILE:${kdc.dir}/krb5cc_host` },
    });
    expect(k.code, k.stderr).toBe(0);
  });

  it('a wrong password gives "Password incorrect"', async () => {
    const r = await kdc.kinit('alice@EXAMPLE.TEST', 'not the password');
    expect(r.code).toBe(1);
    expect(r.stderr).toBe('kinit: Password incorrect while getting initial credentials\n');
    expect(parseKrb5Error(r.stderr, r.stdout)).toEqual({
      tool: 'kinit',
      kind: 'password-incorrect',
      message: 'Password incorrect',
      during: 'getting initial credentials',
    });
  });

  it('a missing keytab and an empty cache are classified', async () => {
    const k = await kdc.run([kdc.bin.klist, '-k', `${kdc.dir}/none.keytab`]);
    expect(k.code).toBe(1);
    expect(parseKrb5Error(k.stderr)?.kind).toBe('keytab-not-found');
    expect(() => parseKeytabList(k.stdout)).toThrow(/line 2/);

    expect((await kdc.run([kdc.bin.kdestroy])).code).toBe(0);
    const l = await kdc.run([kdc.bin.klist]);
    expect(l.code).toBe(1);
    expect(parseKrb5Error(l.stderr)).toMatchObject({ kind: 'no-credentials-cache', subject: `${kdc.dir}/krb5cc` });
  });
});

describe('KDC harness lifecycle', () => {
  it('stop() ends krb5kdc and removes the directory', async () => {
    const kdc = await startKdc({
      principals: [],
      keytabPrincipals: ['host/probe.example.test'],
      realm: 'LIFECYCLE.TEST',
    });
    expect(isAlive(kdc.pid)).toBe(true);
    const l = await kdc.run([kdc.bin.klist, '-k', kdc.keytabPath]);
    expect(parseKeytabList(l.stdout).keys.map((k) => k.principal)).toContain('host/probe.example.test@LIFECYCLE.TEST');
    await kdc.stop();
    expect(isAlive(kdc.pid)).toBe(false);
    expect(existsSync(kdc.dir)).toBe(false);
    await kdc.stop(); // idempotent
  });

  it('fails loudly when krb5kdc is missing (never skips)', async () => {
    await expect(startKdc({ principals: [], bin: { krb5kdc: '/nonexistent/sbin/krb5kdc' } })).rejects.toThrow(
      /\/nonexistent\/sbin\/krb5kdc \(Debian package krb5-kdc\).*missing/,
    );
  });

  it('refuses principal names that could be options', async () => {
    await expect(startKdc({ principals: [{ name: '-x', password: 'p' }] })).rejects.toThrow();
  });
});
