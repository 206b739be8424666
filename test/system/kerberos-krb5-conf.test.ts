/**
 * System tier: MIT krb5 1.20 itself reads the krb5.conf fixtures and what renderKrb5Conf
 * writes, and agrees with parseKrb5Conf. MIT has no "dump the profile" tool, so two relations
 * with visible effects are used as probes:
 *   - [libdefaults] default_keytab_name: `klist -k` prints it as "Keytab name: …";
 *   - [libdefaults] err_fmt: MIT formats every error message with it (%M = message).
 * Each config is a scratch file passed as KRB5_CONFIG (the machine's /etc/krb5.conf is never
 * read); include/includedir paths are redirected to empty scratch files first.
 */
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parseKrb5Conf } from '../../handlers/kerberos/parse/krb5-conf';
import { renderKrb5Conf } from '../../handlers/kerberos/render/krb5-conf';
import { KRB5_BIN, runCommand } from './helpers/kdc';

const dir = mkdtempSync(join(tmpdir(), 'ballast-krb5conf-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
writeFileSync(join(dir, 'empty.conf'), '');
mkdirSync(join(dir, 'empty.d'));

let n = 0;
async function klistWith(conf: string, args: string[]) {
  const file = join(dir, `c${n++}.conf`);
  writeFileSync(file, conf);
  return runCommand([KRB5_BIN.klist, ...args], {
    KRB5_CONFIG: file,
    LC_ALL: 'C',
    TZ: 'UTC',
    KRB5CCNAME: `FILE:${dir}/cc`,
  });
}
const CONFIG_ERROR = /configuration file|profile/i;

describe('MIT reads the krb5.conf fixtures', () => {
  const fixtures = resolve(__dirname, '../../fixtures/krb5-conf');
  const files = readdirSync(fixtures).filter((f) => f.endsWith('.conf') && f !== 'module-directive.conf');

  for (const name of files) {
    it(`${name} is accepted by MIT`, async () => {
      const text = readFileSync(join(fixtures, name), 'utf8').replace(
        /^(include|includedir)([ \t].*)$/gm,
        (_m, d: string) => (d === 'include' ? `include ${dir}/empty.conf` : `includedir ${dir}/empty.d`),
      );
      const r = await klistWith(text, ['-k', `${dir}/none.keytab`]);
      expect(r.stderr).not.toMatch(CONFIG_ERROR);
      expect(r.stdout).toBe(`Keytab name: FILE:${dir}/none.keytab\n`);
    });
  }

  it('reads the quoted values of syntax-edge-cases.conf as the parser does', async () => {
    const raw = readFileSync(join(fixtures, 'syntax-edge-cases.conf'), 'utf8');
    const lib = parseKrb5Conf(raw).sections.libdefaults;
    const text = raw.replace(/^(include|includedir)([ \t].*)$/gm, (_m, d: string) =>
      d === 'include' ? `include ${dir}/empty.conf` : `includedir ${dir}/empty.d`,
    );
    const r = await klistWith(text, ['-k']);
    expect(r.stdout).toBe(`Keytab name: ${String(lib.default_keytab_name)}\n`);
    // err_fmt = "%M (code %C)\t[\"quoted\" \\ backslash]\nsecond line": MIT substitutes the
    // message and the numeric code, and the rest must come out exactly as the parser decoded it.
    const [before, after] = String(lib.err_fmt)
      .replace('%M', "Key table file '/var/lib/krb5/with space.keytab' not found")
      .split('%C');
    const prefix = `klist: ${before}`;
    const suffix = `${after} while starting keytab scan\n`;
    expect(r.stderr.startsWith(prefix), r.stderr).toBe(true);
    expect(r.stderr.endsWith(suffix), r.stderr).toBe(true);
    expect(r.stderr.slice(prefix.length, r.stderr.length - suffix.length)).toMatch(/^-?\d+$/);
  });
});

describe('MIT reads what renderKrb5Conf writes', () => {
  const values = [
    'plain',
    '  leading and trailing  ',
    '"starts with a quote',
    'ends with a quote"',
    'back\\slash \\n not an escape',
    '# not a comment ; nor this',
    '{',
    '{ braces }',
    '[section]',
    'tab\there',
    '\ttab first',
    'line one\nline two',
    'x = y',
    '',
  ];
  for (const v of values) {
    it(`err_fmt ${JSON.stringify(v)}`, async () => {
      const conf = { libdefaults: { err_fmt: `${v}|%M` } };
      const text = renderKrb5Conf(conf);
      expect(parseKrb5Conf(text).sections).toEqual(conf);
      const r = await klistWith(text, ['-k', `${dir}/none.keytab`]);
      expect(r.stderr).toBe(`klist: ${v}|Key table file '${dir}/none.keytab' not found while starting keytab scan\n`);
    });
  }

  it('a realm file in the short shape works for kinit (realm found, KDC unreachable)', async () => {
    const text = renderKrb5Conf({
      libdefaults: { default_realm: 'LAB.TEST', dns_lookup_kdc: 'false', dns_lookup_realm: 'false' },
      realms: { 'LAB.TEST': { kdc: ['127.0.0.1:1'], admin_server: '127.0.0.1:1' } },
      domain_realm: { '.lab.test': 'LAB.TEST' },
    });
    const file = join(dir, 'realm.conf');
    writeFileSync(file, text);
    const r = await runCommand([KRB5_BIN.kinit, 'alice'], {
      KRB5_CONFIG: file,
      LC_ALL: 'C',
      KRB5CCNAME: `FILE:${dir}/cc`,
    });
    expect(r.stderr).toBe("kinit: Cannot contact any KDC for realm 'LAB.TEST' while getting initial credentials\n");
  });
});

describe('MIT also rejects what the parser rejects', () => {
  // Not every parser error is an MIT error (see parse/krb5-conf.ts for the deliberate
  // differences); these are the ones where MIT fails too, so the parser is not being fussy.
  const cases: [string, string][] = [
    ['blank line between tag = and {', '[realms]\n\tA =\n\n\t{\n\t}\n'],
    ['section header inside a subsection', '[realms]\n\tA = {\n[libdefaults]\n\t}\n'],
    ['extra closing brace', '[realms]\n\tA = {\n\t}\n\t}\n'],
    ['text after a section header', '[realms] x\n'],
    ['a line that is not a relation', '[libdefaults]\n\tthis is not a relation\n'],
    ['two words before =', '[libdefaults]\n\ta b = c\n'],
  ];
  for (const [what, text] of cases) {
    it(what, async () => {
      expect(() => parseKrb5Conf(text)).toThrow();
      const r = await klistWith(text, ['-k', `${dir}/none.keytab`]);
      expect(r.code).toBe(1);
      expect(r.stderr).toMatch(CONFIG_ERROR);
    });
  }
});
