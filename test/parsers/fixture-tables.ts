/**
 * Which pure parser reads which recorded invocation, per area, decided from the argv (and exit
 * code) exactly as the route decides it. Run by test/helpers/fixture-runner.ts from each area's
 * fixtures.test.ts, and used by the drafting tools (test/tools/<area>/draft-expected.ts).
 */
import { existsSync } from 'node:fs';
import assert from 'node:assert/strict';
import * as z from 'zod';
import type { Fixture } from '../../runtime/system/fixture-file';
import { expectedFileOf, type FixtureTable } from '../helpers/fixture-table';
// tools (commands several areas run)
import { mountEntry, parseFindmnt } from '../../handlers/tools/findmnt';
import { lsblkDevice, parseLsblk } from '../../handlers/tools/lsblk';
import { ipLinkRecord, linkNames, parseIpLink } from '../../handlers/tools/ip-link';
// fs
import {
  getfaclFile,
  parseGetfacl,
  parseSetfaclErrors,
  parseSetfaclTest,
  setfaclError,
  setfaclTestRecord,
} from '../../handlers/fs/parse/getfacl';
import { parseProcSwaps, swapEntry } from '../../handlers/fs/parse/proc-swaps';
import { parseWipefs, wipefsSignature } from '../../handlers/fs/parse/wipefs';
import { parseXxhsumCheck, parseXxhsumSums, xxhsumCheck, xxhsumSum } from '../../handlers/fs/parse/xxhsum';
// kerberos
import {
  keytabList,
  klist,
  klistCollection,
  parseKeytabList,
  parseKlist,
  parseKlistCollection,
} from '../../handlers/kerberos/parse/klist';
import { krb5Error, parseKrb5Error } from '../../handlers/kerberos/parse/krb5-error';
// network
import { ipAddrRecord, parseIpAddr } from '../../handlers/network/parse/ip-addr';
import {
  ethtoolDriverInfo,
  ethtoolSettings,
  parseEthtool,
  parseEthtoolDriver,
} from '../../handlers/network/parse/ethtool';
// traffic
import { parseTcQdisc, queueEntry } from '../../handlers/traffic/parse/tc-qdisc';
import { classEntry, parseTcClass } from '../../handlers/traffic/parse/tc-class';
import { filterEntry, parseTcFilter, parseTcFilterText } from '../../handlers/traffic/parse/tc-filter';
// certificate
import { parseUpdateCaCertificates } from '../../handlers/certificate/parse/update-ca-certificates';
// pod
import { parseComposePs } from '../../handlers/pod/parse/compose-ps';

const args = (f: Fixture) => f.argv.slice(1);

/* ---------------- tools (handlers/tools: commands several areas run) ---------------- */

/** lsblk and findmnt, recorded by test/tools/fs/record-fixtures.ts; fs and pod read them */
export const TOOLS_FIXTURES: FixtureTable = {
  area: 'tools',
  dirs: ['lsblk', 'findmnt'],
  check: (f) => assert.match(f.argv[0], /^\//, 'absolute binaries only'),
  entries: [
    { name: 'lsblk', match: /^lsblk\//, parse: (f) => parseLsblk(f.stdout), schema: z.array(lsblkDevice) },
    { name: 'findmnt', match: /^findmnt\//, parse: (f) => parseFindmnt(f.stdout), schema: z.array(mountEntry) },
  ],
};

/* ---------------- fs ---------------- */

/** file operands of an xxhsum generate call: after `--`, else every non-option argument */
export function xxhsumFileNames(argv: readonly string[]): string[] {
  const dd = argv.indexOf('--');
  if (dd >= 0) return argv.slice(dd + 1);
  return argv.slice(1).filter((a) => !a.startsWith('-'));
}

export const isXxhsumCheck = (argv: readonly string[]): boolean => argv.includes('-c') || argv.includes('--check');

/** what a setfacl invocation yields: the --test records (if any) and classified stderr */
export const setfaclOutcome = z.object({
  records: z.array(setfaclTestRecord),
  errors: z.array(setfaclError),
});

export const FS_FIXTURES: FixtureTable = {
  area: 'fs',
  dirs: ['xxhsum', 'getfacl', 'setfacl', 'wipefs', 'swaps'],
  check: (f) => assert.match(f.argv[0], /^\//, 'absolute binaries only'),
  entries: [
    {
      name: 'xxhsum -c',
      match: (f, p) => p.startsWith('xxhsum/') && isXxhsumCheck(f.argv),
      parse: (f) => parseXxhsumCheck(f.stdout, f.stderr),
      schema: xxhsumCheck,
    },
    {
      name: 'xxhsum',
      match: (f, p) => p.startsWith('xxhsum/') && !isXxhsumCheck(f.argv),
      parse: (f) => parseXxhsumSums(f.stdout, { fileNames: xxhsumFileNames(f.argv) }),
      schema: z.array(xxhsumSum),
    },
    { name: 'getfacl', match: /^getfacl\//, parse: (f) => parseGetfacl(f.stdout), schema: z.array(getfaclFile) },
    {
      name: 'setfacl',
      match: /^setfacl\//,
      parse: (f) => ({
        records: parseSetfaclTest(f.stdout, f.argv.includes('--test') ? { root: f.argv[f.argv.length - 1] } : {}),
        errors: parseSetfaclErrors(f.stderr),
      }),
      schema: setfaclOutcome,
    },
    { name: 'wipefs', match: /^wipefs\//, parse: (f) => parseWipefs(f.stdout), schema: z.array(wipefsSignature) },
    {
      name: '/proc/swaps',
      match: /^swaps\//,
      parse: (f) => parseProcSwaps(f.stdout),
      schema: z.array(swapEntry),
    },
  ],
};

/* ---------------- kerberos ---------------- */

/** a failed command (or any kinit, whose only output worth reading is an error) is read from stderr */
const isKrb5Error = (f: Fixture) => f.code !== 0 || f.argv[0].endsWith('/kinit');

export const KERBEROS_FIXTURES: FixtureTable = {
  area: 'kerberos',
  dirs: ['klist', 'kinit'],
  minFixtures: 40,
  check: (f) => assert.match(f.argv[0], /^\/usr\/bin\/(klist|kinit)$/, f.file),
  entries: [
    {
      name: 'krb5 error',
      match: isKrb5Error,
      parse: (f) => parseKrb5Error(f.stderr, f.stdout),
      schema: krb5Error.nullable(),
    },
    {
      name: 'klist -k',
      match: (f) => !isKrb5Error(f) && f.argv.includes('-k'),
      parse: (f) => parseKeytabList(f.stdout),
      schema: keytabList,
    },
    {
      name: 'klist -l',
      match: (f) => !isKrb5Error(f) && !f.argv.includes('-k') && f.argv.includes('-l'),
      parse: (f) => parseKlistCollection(f.stdout),
      schema: klistCollection,
    },
    {
      name: 'klist',
      match: (f) => !isKrb5Error(f) && !f.argv.includes('-k') && !f.argv.includes('-l'),
      parse: (f) => parseKlist(f.stdout),
      schema: klist,
    },
  ],
};

/* ---------------- network ---------------- */

const IP = '/usr/sbin/ip';
const ETHTOOL = '/usr/sbin/ethtool';

export const NETWORK_FIXTURES: FixtureTable = {
  area: 'network',
  dirs: ['ip', 'ethtool'],
  minFixtures: 6,
  // the route looks at the exit code first; a parser handed a failed command's output by
  // mistake must refuse it (ParseError at the line expected.json names), not invent a success
  refuseFailed: true,
  check: (f) => {
    assert.match(f.argv[0], /^\/usr\/sbin\/(ip|ethtool)$/);
    assert.ok(f.source.length > 20, 'the fixture says where it comes from');
  },
  entries: [
    {
      name: 'ip link',
      match: (f) => f.argv[0] === IP && args(f).includes('link'),
      parse: (f) => parseIpLink(f.stdout),
      schema: z.array(ipLinkRecord),
    },
    {
      name: 'ip addr',
      match: (f) => f.argv[0] === IP && !args(f).includes('link') && args(f).includes('addr'),
      parse: (f) => parseIpAddr(f.stdout),
      schema: z.array(ipAddrRecord),
    },
    {
      name: 'ethtool -i',
      match: (f) => f.argv[0] === ETHTOOL && f.argv[1] === '-i',
      parse: (f) => parseEthtoolDriver(f.stdout),
      schema: ethtoolDriverInfo,
    },
    {
      name: 'ethtool',
      match: (f) => f.argv[0] === ETHTOOL && f.argv[1] !== '-i',
      parse: (f) => parseEthtool(f.stdout),
      schema: ethtoolSettings,
    },
  ],
};

/* ---------------- traffic ---------------- */

const TC = '/usr/sbin/tc';
const tcShow = (f: Fixture, what: string) => f.argv[0] === TC && args(f).includes('show') && args(f).includes(what);
/** A failed read kept for route replay only carries no expected parse. */
const replayOnly = (f: Fixture) => f.code !== 0 && !existsSync(expectedFileOf(f));

/** The device a `... show dev X` asked about (qdisc JSON omits it then). */
export function deviceOf(f: Fixture): string | undefined {
  const i = f.argv.indexOf('dev');
  return i >= 0 ? f.argv[i + 1] : undefined;
}

export const TRAFFIC_FIXTURES: FixtureTable = {
  area: 'traffic',
  dirs: ['tc'],
  minFixtures: 40,
  check: (f) => {
    assert.ok(f.source.length > 20, 'the fixture says where it comes from');
    // text qdisc output has no parser: every qdisc read is -j
    if (tcShow(f, 'qdisc')) assert.ok(f.argv.includes('-j'), `text qdisc output has no parser: ${f.file ?? '?'}`);
  },
  entries: [
    // the listing's one non-tc read: which devices exist (fixtures/tc/routes/ip-link-show.yaml)
    {
      name: 'ip link names (linkNames)',
      match: (f) => f.argv[0] === IP && args(f).join(' ') === '-j link show',
      parse: (f) => linkNames(parseIpLink(f.stdout)),
      schema: z.array(z.object({ name: z.string().min(1), loopback: z.boolean() }).strict()),
    },
    // mutating commands (add/replace/del) are the plan's argv, for replay: absolute binary, no parse
    { name: 'tc command', match: (f) => f.argv[0] === TC && !args(f).includes('show'), parse: null },
    {
      name: 'failed read, replay only',
      match: (f) => f.argv[0] === TC && args(f).includes('show') && replayOnly(f),
      parse: null,
    },
    {
      name: 'tc-qdisc',
      match: (f) => tcShow(f, 'qdisc') && !replayOnly(f),
      parse: (f) => parseTcQdisc(f.stdout, deviceOf(f)),
      schema: z.array(queueEntry),
    },
    // iproute2 6.1 ignores -j for classes: always text
    {
      name: 'tc-class',
      match: (f) => tcShow(f, 'class') && !replayOnly(f),
      parse: (f) => parseTcClass(f.stdout),
      schema: z.array(classEntry),
    },
    {
      name: 'tc-filter',
      match: (f) => tcShow(f, 'filter') && f.argv.includes('-j') && !replayOnly(f),
      parse: (f) => parseTcFilter(f.stdout),
      schema: z.array(filterEntry),
    },
    {
      name: 'tc-filter-text',
      match: (f) => tcShow(f, 'filter') && !f.argv.includes('-j') && !replayOnly(f),
      parse: (f) => parseTcFilterText(f.stdout),
      schema: z.array(filterEntry),
    },
  ],
};

/* ---------------- certificate ---------------- */

export const CERTIFICATE_FIXTURES: FixtureTable = {
  area: 'certificate',
  dirs: ['update-ca-certificates'],
  minFixtures: 4,
  check: (f) => assert.equal(f.argv[0], '/usr/sbin/update-ca-certificates', f.file),
  entries: [
    {
      name: 'update-ca-certificates',
      match: /^update-ca-certificates\//,
      parse: (f) => parseUpdateCaCertificates(f.stdout, f.stderr),
    },
  ],
};

/* ---------------- pod ---------------- */

export const POD_FIXTURES: FixtureTable = {
  area: 'pod',
  dirs: ['compose'],
  minFixtures: 7,
  entries: [
    {
      name: 'compose ps',
      match: /^compose\//,
      // the project is the argument of -p, as the route passes it
      parse: (f) => parseComposePs(f.stdout, f.argv[f.argv.indexOf('-p') + 1]),
    },
  ],
};
