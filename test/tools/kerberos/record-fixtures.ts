/**
 * Records the Kerberos fixtures under fixtures/klist and fixtures/kinit from a throwaway MIT KDC
 * on this machine (test/system/helpers/kdc.ts), and converts the upstream klist captures in
 * ../shared/upstream-samples/klist into fixtures. Writes with runtime/system/fixture-file.ts so
 * stdout/stderr are stored byte for byte.
 *
 *   npx vite-node test/tools/kerberos/record-fixtures.ts     # as root, krb5-kdc installed
 *
 * It never writes `*.expected.json`: those are written and reviewed by hand. Re-recording
 * changes timestamps and the scratch directory name, so the expected files must be revisited.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { writeFixture, type Fixture } from '../../../runtime/system/fixture-file';
import { parseKrb5Conf } from '../../../handlers/kerberos/parse/krb5-conf';
import { renderKrb5Conf } from '../../../handlers/kerberos/render/krb5-conf';
import { startKdc, type RunOptions, type RunResult } from '../../system/helpers/kdc';

const repo = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
const upstream = resolve(repo, '../shared/upstream-samples');

const dpkgVersion = (pkg: string) =>
  execFileSync('/usr/bin/dpkg-query', ['-W', '-f=${Version}', pkg], { encoding: 'utf8' }).trim();
const today = new Date().toISOString().slice(0, 10);
const machine = `Debian 12, krb5-user/krb5-kdc ${dpkgVersion('krb5-kdc')}, LC_ALL=C TZ=UTC, as root`;

/**
 * Replay keeps the last loaded fixture per argv, so the base set (no scenario) must have one
 * fixture per argv: every other fixture with the same argv belongs to a named scenario.
 * Base per argv: klist → local-tgt-service, klist -f -e → local-tgt-service-f-e, klist -e →
 * local-tgt-service-e, klist -l → local-collection-l, kinit alice → local-password-ok.
 */
const SCENARIO: Record<string, string> = {
  'klist/upstream-klist': 'kerberos-upstream-alice',
  'klist/upstream-klist-f-e': 'kerberos-upstream-alice',
  'klist/upstream-klist-two-tickets': 'kerberos-upstream-host',
  'klist/upstream-klist-l': 'kerberos-upstream-host',
  'klist/upstream-klist-no-cache': 'kerberos-upstream-no-cache',
  'klist/local-no-cache': 'kerberos-no-cache',
  'klist/local-after-kdestroy': 'kerberos-after-kdestroy',
  'klist/local-tgt': 'kerberos-tgt-only',
  'klist/local-norenew-f-e': 'kerberos-not-renewable',
  'klist/local-norenew-e': 'kerberos-not-renewable',
  'klist/local-for-client': 'kerberos-for-client',
  'klist/local-for-client-f-e': 'kerberos-for-client',
  'kinit/local-password-incorrect': 'kerberos-password-incorrect',
  'kinit/local-no-password': 'kerberos-no-password',
  'kinit/local-client-revoked': 'kerberos-client-revoked',
  'kinit/local-client-expired': 'kerberos-client-expired',
  'kinit/local-password-expired': 'kerberos-password-expired',
};

function save(tool: 'klist' | 'kinit', name: string, source: string, r: RunResult): void {
  const scenario = SCENARIO[`${tool}/${name}`];
  const f: Fixture = {
    source,
    argv: r.argv,
    code: r.code ?? -1,
    stdout: r.stdout,
    stderr: r.stderr,
    ...(scenario ? { scenario } : {}),
  };
  const file = join(repo, 'fixtures', tool, `${name}.yaml`);
  writeFixture(file, f);
  console.log(`${file}  rc=${f.code}`);
}

// --- upstream captures ---------------------------------------------------------------------------

function fromUpstream(): void {
  const src = (file: string, how: string) =>
    `upstream sample ../shared/upstream-samples/klist/${file} (Debian 12, krb5 1.20.1-2+deb12u5, LC_ALL=C, throwaway KDC for EXAMPLE.TEST; see its SOURCES.md); ${how}`;
  const out = (file: string) => readFileSync(join(upstream, 'klist', file), 'utf8');
  const plain: [string, string, string[]][] = [
    ['upstream-klist', 'debian12-krb5-1.20.1-klist.out', ['/usr/bin/klist']],
    ['upstream-klist-f-e', 'debian12-krb5-1.20.1-klist-f-e.out', ['/usr/bin/klist', '-f', '-e']],
    ['upstream-klist-two-tickets', 'debian12-krb5-1.20.1-klist-two-tickets.out', ['/usr/bin/klist']],
    [
      'upstream-klist-k-keytab',
      'debian12-krb5-1.20.1-klist-k-keytab.out',
      ['/usr/bin/klist', '-k', '/srv/storage1/scratch/krb/krb5.keytab'],
    ],
    [
      'upstream-klist-k-t-e-keytab',
      'debian12-krb5-1.20.1-klist-k-t-e-keytab.out',
      ['/usr/bin/klist', '-k', '-t', '-e', '/srv/storage1/scratch/krb/krb5.keytab'],
    ],
  ];
  for (const [name, file, argv] of plain) {
    save(
      'klist',
      name,
      src(
        file,
        'stdout verbatim; argv reconstructed from the file name and the printed keytab path; exit code 0 assumed (.out files hold stdout only)',
      ),
      {
        argv,
        code: 0,
        signal: null,
        stdout: out(file),
        stderr: '',
      },
    );
  }
  // The transcript holds several invocations; each [stdout]/[stderr]/[rc] block becomes one fixture.
  const t = 'debian12-krb5-1.20.1-klist-errors-and-l.transcript.txt';
  const blocks = out(t).split(/^\$ /m).filter(Boolean);
  const byCmd = new Map<string, { stdout: string; stderr: string; code: number }>();
  for (const b of blocks) {
    const m = /^(.*)\n\[stdout\]\n([\s\S]*?)\[stderr\]\n([\s\S]*?)\[rc\] (\d+)\n?$/.exec(b);
    if (!m) throw new Error(`cannot read transcript block: ${b.slice(0, 40)}`);
    byCmd.set(m[1].trim(), { stdout: m[2], stderr: m[3], code: Number(m[4]) });
  }
  const pick = (cmd: string) => {
    const v = byCmd.get(cmd);
    if (!v) throw new Error(`transcript has no '${cmd}'`);
    return v;
  };
  const tsrc = (cmd: string, how: string) => src(t, `block '$ ${cmd}'; ${how}`);
  save('klist', 'upstream-klist-no-cache', tsrc('klist   (no credentials cache)', 'argv reconstructed'), {
    argv: ['/usr/bin/klist'],
    signal: null,
    ...pick('klist   (no credentials cache)'),
  });
  save('klist', 'upstream-klist-s-no-cache', tsrc('klist -s   (no credentials cache)', 'argv reconstructed'), {
    argv: ['/usr/bin/klist', '-s'],
    signal: null,
    ...pick('klist -s   (no credentials cache)'),
  });
  save(
    'klist',
    'upstream-klist-k-missing',
    tsrc('klist -k missing.keytab', 'the transcript abbreviates the path; argv uses the absolute path klist printed'),
    {
      argv: ['/usr/bin/klist', '-k', '/srv/storage1/scratch/krb/none.keytab'],
      signal: null,
      ...pick('klist -k missing.keytab'),
    },
  );
  save('klist', 'upstream-klist-l', tsrc('klist -l', 'argv reconstructed'), {
    argv: ['/usr/bin/klist', '-l'],
    signal: null,
    ...pick('klist -l'),
  });
}

// --- this machine ----------------------------------------------------------------------------------

async function fromLocalKdc(): Promise<void> {
  const kdc = await startKdc({
    principals: [{ name: 'alice', password: 'alice-Secret-1' }],
    keytabPrincipals: ['host/nas01.example.test', 'nfs/nas01.example.test'],
  });
  const { bin, dir, keytabPath } = kdc;
  const where = `recorded ${today} on this build machine (${machine}) from a throwaway KDC (test/system/helpers/kdc.ts: krb5kdc -n on 127.0.0.1:${kdc.kdcPort}, realm EXAMPLE.TEST, scratch directory ${dir}) by test/tools/kerberos/record-fixtures.ts`;
  const run = (argv: string[], opts?: RunOptions) => kdc.run(argv, opts);
  try {
    save('klist', 'local-no-cache', `${where}; before any kinit`, await run([bin.klist]));
    save(
      'kinit',
      'local-password-ok',
      `${where}; password for alice on stdin (pipe)`,
      await kdc.kinit('alice@EXAMPLE.TEST', 'alice-Secret-1'),
    );
    save('klist', 'local-tgt', `${where}; after kinit alice (TGT only)`, await run([bin.klist]));

    const kvno = await run([bin.kvno, 'nfs/nas01.example.test@EXAMPLE.TEST']);
    if (kvno.code !== 0) throw new Error(`kvno failed: ${kvno.stderr}`);
    const two = `${where}; cache holds alice's TGT and a service ticket for nfs/nas01 (from kvno)`;
    save('klist', 'local-tgt-service', two, await run([bin.klist]));
    save('klist', 'local-tgt-service-f', `${two}; -f`, await run([bin.klist, '-f']));
    save('klist', 'local-tgt-service-e', `${two}; -e puts Etype on the renew line`, await run([bin.klist, '-e']));
    save('klist', 'local-tgt-service-f-e', `${two}; -f -e`, await run([bin.klist, '-f', '-e']));

    // A non-renewable ticket: client config without renew_lifetime (rendered by the product's
    // renderer from the harness config) and a lifetime below the KDC maximum.
    const noRenew = join(dir, 'krb5-norenew.conf');
    const conf = parseKrb5Conf(readFileSync(kdc.krb5ConfPath, 'utf8'));
    const lib = conf.sections.libdefaults;
    if (lib) delete lib.renew_lifetime;
    writeFileSync(noRenew, renderKrb5Conf(conf));
    const nrEnv = { KRB5_CONFIG: noRenew, KRB5CCNAME: `FILE:${join(dir, 'krb5cc_norenew')}` };
    const nr = await run([bin.kinit, '-l', '1h', 'alice@EXAMPLE.TEST'], { stdin: 'alice-Secret-1\n', env: nrEnv });
    if (nr.code !== 0) throw new Error(`kinit -l 1h failed: ${nr.stderr}`);
    const nrw = `${where}; non-renewable 1h TGT (kinit -l 1h, no renew_lifetime in the client config)`;
    save(
      'klist',
      'local-norenew-f-e',
      `${nrw}; -f -e: Flags and Etype share one line`,
      await run([bin.klist, '-f', '-e'], { env: nrEnv }),
    );
    save(
      'klist',
      'local-norenew-e',
      `${nrw}; -e: the detail line holds only Etype`,
      await run([bin.klist, '-e'], { env: nrEnv }),
    );

    // S4U2Self: a ticket whose client differs from the cache's default principal ("for client").
    await kdc.kadmin('modprinc', '+ok_to_auth_as_delegate', 'host/nas01.example.test');
    const hostEnv = { KRB5CCNAME: `FILE:${join(dir, 'krb5cc_host')}` };
    const hk = await run([bin.kinit, '-k', '-t', keytabPath, 'host/nas01.example.test@EXAMPLE.TEST'], { env: hostEnv });
    save('kinit', 'local-keytab-ok', `${where}; kinit from the keytab`, hk);
    const s4u = await run([bin.kvno, '-U', 'alice', 'host/nas01.example.test@EXAMPLE.TEST'], { env: hostEnv });
    if (s4u.code !== 0) throw new Error(`kvno -U failed: ${s4u.stderr}`);
    const fc = `${where}; host/nas01 cache after kvno -U alice (S4U2Self)`;
    save('klist', 'local-for-client', fc, await run([bin.klist], { env: hostEnv }));
    save('klist', 'local-for-client-f-e', `${fc}; -f -e`, await run([bin.klist, '-f', '-e'], { env: hostEnv }));

    // A DIR: collection with two caches, for klist -l.
    const ccdir = join(dir, 'ccdir');
    mkdirSync(ccdir);
    const colEnv = { KRB5CCNAME: `DIR:${ccdir}` };
    await kdc.kinit('alice@EXAMPLE.TEST', 'alice-Secret-1', { env: colEnv });
    await run([bin.kinit, '-k', '-t', keytabPath, 'host/nas01.example.test@EXAMPLE.TEST'], { env: colEnv });
    save(
      'klist',
      'local-collection-l',
      `${where}; DIR: collection with caches for alice and host/nas01 (36 characters, cut to 30)`,
      await run([bin.klist, '-l'], { env: colEnv }),
    );

    // Keytabs: the harness keytab (kvno 2, default enctypes) and one with several enctypes/kvnos.
    const kt = `${where}; keytab from ktadd of host/nas01 and nfs/nas01 (KDC default enctypes)`;
    save('klist', 'local-keytab-k-t-e', kt, await run([bin.klist, '-k', '-t', '-e', keytabPath]));
    const multi = join(dir, 'multi.keytab');
    await kdc.kadmin(
      'ktadd',
      '-k',
      multi,
      '-e',
      'aes256-cts-hmac-sha1-96:normal aes128-cts-hmac-sha1-96:normal aes256-cts-hmac-sha384-192:normal camellia256-cts-cmac:normal arcfour-hmac:normal',
      'nfs/nas01.example.test',
    );
    await kdc.kadmin('ktadd', '-k', multi, 'nfs/nas01.example.test');
    await kdc.kadmin('ktadd', '-k', multi, '-norandkey', 'host/nas01.example.test');
    const mk = `${where}; keytab with nfs/nas01 kvno 3 (five enctypes incl. deprecated arcfour-hmac), nfs/nas01 kvno 4 and host/nas01 kvno 2 (ktadd -norandkey)`;
    save('klist', 'local-multi-keytab-k', `${mk}; -k`, await run([bin.klist, '-k', multi]));
    save('klist', 'local-multi-keytab-k-t', `${mk}; -k -t`, await run([bin.klist, '-k', '-t', multi]));
    save('klist', 'local-multi-keytab-k-e', `${mk}; -k -e`, await run([bin.klist, '-k', '-e', multi]));
    save('klist', 'local-multi-keytab-k-t-e', `${mk}; -k -t -e`, await run([bin.klist, '-k', '-t', '-e', multi]));
    save(
      'klist',
      'local-keytab-missing',
      `${where}; keytab path that does not exist`,
      await run([bin.klist, '-k', '-t', '-e', join(dir, 'missing.keytab')]),
    );
    const empty = join(dir, 'empty.keytab');
    writeFileSync(empty, '');
    save(
      'klist',
      'local-keytab-empty-file',
      `${where}; keytab path is an empty file`,
      await run([bin.klist, '-k', '-t', '-e', empty]),
    );

    // kinit failures.
    const kw = `${where}; kinit`;
    save(
      'kinit',
      'local-password-incorrect',
      `${kw} with a wrong password on stdin`,
      await kdc.kinit('alice@EXAMPLE.TEST', 'wrong'),
    );
    save(
      'kinit',
      'local-client-not-found',
      `${kw} of a principal the KDC does not have`,
      await kdc.kinit('carol@EXAMPLE.TEST', 'x'),
    );
    save(
      'kinit',
      'local-no-password',
      `${kw} with stdin closed (no password)`,
      await run([bin.kinit, 'alice@EXAMPLE.TEST']),
    );
    save(
      'kinit',
      'local-keytab-missing',
      `${kw} -k with a missing keytab`,
      await run([bin.kinit, '-k', '-t', join(dir, 'missing.keytab'), 'host/nas01.example.test@EXAMPLE.TEST'], {
        env: hostEnv,
      }),
    );
    save(
      'kinit',
      'local-keytab-no-suitable-keys',
      `${kw} -k for a principal that is not in the keytab`,
      await run([bin.kinit, '-k', '-t', keytabPath, 'cifs/nas01.example.test@EXAMPLE.TEST'], { env: hostEnv }),
    );
    save(
      'kinit',
      'local-realm-unknown',
      `${kw} for a realm with no [realms] entry and DNS lookups off`,
      await kdc.kinit('alice@NOWHERE.TEST', 'x'),
    );
    const other = join(dir, 'krb5-other.conf');
    const oconf = parseKrb5Conf(readFileSync(kdc.krb5ConfPath, 'utf8'));
    // Port 1 on loopback: nothing listens there, so the KDC is unreachable at once.
    oconf.sections.realms['OTHER.TEST'] = { kdc: ['127.0.0.1:1'] };
    writeFileSync(other, renderKrb5Conf(oconf));
    save(
      'kinit',
      'local-kdc-unreachable',
      `${kw} for realm OTHER.TEST whose only kdc is 127.0.0.1:1 (nothing listens)`,
      await kdc.kinit('alice@OTHER.TEST', 'x', { env: { KRB5_CONFIG: other } }),
    );

    await kdc.kadmin('modprinc', '-allow_tix', 'alice');
    save(
      'kinit',
      'local-client-revoked',
      `${kw} after kadmin modprinc -allow_tix alice`,
      await kdc.kinit('alice@EXAMPLE.TEST', 'alice-Secret-1'),
    );
    await kdc.kadmin('modprinc', '+allow_tix', 'alice');
    await kdc.kadmin('modprinc', '-expire', '2020-01-01', 'alice');
    save(
      'kinit',
      'local-client-expired',
      `${kw} after kadmin modprinc -expire 2020-01-01 alice`,
      await kdc.kinit('alice@EXAMPLE.TEST', 'alice-Secret-1'),
    );
    await kdc.kadmin('modprinc', '-expire', 'never', 'alice');
    await kdc.kadmin('modprinc', '-pwexpire', '2020-01-01', 'alice');
    save(
      'kinit',
      'local-password-expired',
      `${kw} after kadmin modprinc -pwexpire 2020-01-01 alice; stdin holds only the old password, so the new-password prompt reads EOF`,
      await kdc.kinit('alice@EXAMPLE.TEST', 'alice-Secret-1'),
    );
    await kdc.kadmin('modprinc', '-pwexpire', 'never', 'alice');

    const d = await run([bin.kdestroy]);
    if (d.code !== 0) throw new Error(`kdestroy failed: ${d.stderr}`);
    save('klist', 'local-after-kdestroy', `${where}; after kdestroy`, await run([bin.klist]));
  } finally {
    await kdc.stop();
  }
  if (existsSync(dir)) throw new Error(`scratch directory ${dir} was not removed`);
}

fromUpstream();
await fromLocalKdc();
