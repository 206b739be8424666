/**
 * Records the traffic-control fixtures under fixtures/tc from this machine, inside a private
 * pair of network namespaces (test/system/helpers/tc-netns.ts), and turns the upstream tc
 * samples in ../shared/upstream-samples/tc into fixtures. Writes with
 * runtime/system/fixture-file.ts so stdout is stored byte for byte.
 *
 *   npx vite-node test/tools/traffic/record-fixtures.ts        # as root; redo any time
 *
 * Every command is an argv array run as `ip netns exec <ns> <argv>`; the fixture stores the
 * product's argv (without the netns prefix), so route tests can replay it. The mutating
 * commands are the ones handlers/traffic/plan.ts produces, so the recorded state is the state
 * the product makes.
 *
 * Stateful reads of one device share an argv, so each fixture names its `scenario`:
 *   tc-fresh      veth0 as it comes (noqueue, no classes, no filters)
 *   tc-two-rules  after planCreateRule for rule 1 (10.213.77.2, 1 MB/s) and 2 (10.213.77.3, 2.5 MB/s)
 *   tc-one-rule   after planRemoveRule for rule 2
 *   tc-foreign    veth2 shaped by hand (htb 1: default 0x30, nested classes, sfq leaf, u32 with
 *                 two matches): the "not ours" case
 *   tc-ifb        ifb0/ifb1: pfifo_fast and mq (4 queues) as the kernel attaches them
 *   tc-upstream-* the upstream samples (argv reconstructed from the file names)
 *
 * It never writes `*.expected.json`: those are written and reviewed by hand. Counters differ on
 * every run (Sent/tokens in the -s captures, direct_packets_stat, which counts the unclassified
 * ARP/ND packets): after re-recording, test/parsers/traffic/fixtures.test.ts flags the expected
 * files whose numbers moved; check each against the new capture before updating it.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, readdirSync } from 'node:fs';
import { release } from 'node:os';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { writeFixture, type Fixture } from '../../../runtime/system/fixture-file';
import {
  IP,
  TC,
  createVethPair,
  inNetns,
  must,
  requireNetnsTools,
  run,
  startReceiver,
  timedSend,
  type RunResult,
  type VethPair,
} from '../../system/helpers/tc-netns';
import {
  planCreateRule,
  planRemoveRule,
  planAddRule,
  showClassArgv,
  showFilterArgv,
  showQdiscArgv,
} from '../../../handlers/traffic/plan';
import { parseTcQdisc } from '../../../handlers/traffic/parse/tc-qdisc';
import type { StoredRule } from '../../../handlers/traffic/store';

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '..', '..', '..');
const outDir = join(root, 'fixtures', 'tc');
const upstream = join(root, '..', 'shared', 'upstream-samples', 'tc');

requireNetnsTools();
const tcVersion = must([TC, '-V']).stdout.trim();
const when = new Date().toISOString().slice(0, 10);
const machine = `Debian 12, kernel ${release()}, ${tcVersion}, LC_ALL=C, as root`;

function save(name: string, f: Fixture): void {
  writeFixture(join(outDir, `${name}.yaml`), f);
  console.log(`wrote fixtures/tc/${name}.yaml`);
}

/** Run the product argv inside `ns`; store it under the product argv. */
function record(ns: string, name: string, argv: string[], scenario: string, setup: string): RunResult {
  const r = run(inNetns(ns, argv));
  save(name, {
    source: `recorded ${when} on this build machine (${machine}) inside a private network namespace (ip netns exec <ns>) by test/tools/traffic/record-fixtures.ts; ${setup}`,
    argv,
    code: r.code,
    stdout: r.stdout,
    stderr: r.stderr,
    scenario,
  });
  return r;
}

/** Like record, but the command must succeed (it changes the state later captures depend on). */
function apply(ns: string, name: string, argv: string[], scenario: string, setup: string): void {
  const r = record(ns, name, argv, scenario, setup);
  if (r.code !== 0) throw new Error(`${JSON.stringify(argv)} exited ${r.code}: ${r.stderr.trim()}`);
}

const rule1: StoredRule = { name: 'backup-target', device: 'veth0', ip: '10.213.77.2', rate: 1, id: 1 };
const rule2: StoredRule = { name: 'replica', device: 'veth0', ip: '10.213.77.3', rate: 2.5, id: 2 };

async function main(): Promise<void> {
  // Old recordings go first, so a renamed capture does not linger. Hand-written
  // *.expected.json files are kept.
  mkdirSync(outDir, { recursive: true });
  for (const f of readdirSync(outDir, { withFileTypes: true })) {
    if (f.isFile() && f.name.endsWith('.yaml')) rmSync(join(outDir, f.name));
  }

  const pair: VethPair = createVethPair({ tag: 'rec', subnet: 77, peerAddresses: 2 });
  const A = pair.nsA;
  try {
    // Extra devices in A: a second veth (shaped by hand), and two ifb devices, which are the
    // devices here that get the kernel's default qdiscs (veth is IFF_NO_QUEUE -> noqueue).
    must([IP, '-n', A, 'link', 'add', 'veth2', 'type', 'veth', 'peer', 'name', 'veth3', 'netns', pair.nsB]);
    must([IP, '-n', A, 'link', 'set', 'veth2', 'up']);
    must([IP, '-n', pair.nsB, 'link', 'set', 'veth3', 'up']);
    must([IP, '-n', A, 'link', 'add', 'ifb0', 'type', 'ifb']);
    must([IP, '-n', A, 'link', 'add', 'ifb1', 'numtxqueues', '4', 'numrxqueues', '4', 'type', 'ifb']);
    must([IP, '-n', A, 'link', 'set', 'ifb0', 'up']);
    must([IP, '-n', A, 'link', 'set', 'ifb1', 'up']);

    const fresh =
      'veth0 (10.213.77.1/24) in namespace A, peer veth1 (10.213.77.2/24, 10.213.77.3/24) in namespace B, nothing configured on veth0';
    record(A, 'qdisc-noqueue-veth', showQdiscArgv('veth0'), 'tc-fresh', fresh);
    record(A, 'class-empty', showClassArgv('veth0'), 'tc-fresh', fresh);
    record(A, 'filter-empty', showFilterArgv('veth0'), 'tc-fresh', fresh);
    record(A, 'qdisc-missing-device', showQdiscArgv('nosuch0'), 'tc-fresh', 'no device nosuch0 in the namespace');

    const ifb =
      'ifb0 (1 queue) and ifb1 (4 tx queues) created and set up, qdiscs as the kernel attached them (net.core.default_qdisc = pfifo_fast)';
    record(A, 'qdisc-pfifo-fast-ifb', showQdiscArgv('ifb0'), 'tc-ifb', ifb);
    record(A, 'qdisc-mq-ifb-4q', showQdiscArgv('ifb1'), 'tc-ifb', ifb);
    record(A, 'class-mq-ifb-4q', showClassArgv('ifb1'), 'tc-ifb', ifb);

    // Our rules, with the plan's own argv.
    const queues = parseTcQdisc(run(inNetns(A, showQdiscArgv('veth0'))).stdout, 'veth0');
    const create1 = planCreateRule(rule1, queues);
    if (!create1.ok) throw new Error(create1.reason);
    const [rootCmd, class1, filter1] = create1.argv;
    const [class2, filter2] = planAddRule(rule2);
    const applying = 'veth0 while rules are being created with handlers/traffic/plan.ts';
    apply(A, 'cmd-root-replace', rootCmd!, 'tc-two-rules', applying);
    apply(A, 'cmd-class-add-1', class1!, 'tc-two-rules', applying);
    apply(A, 'cmd-filter-add-1', filter1!, 'tc-two-rules', applying);
    apply(A, 'cmd-class-add-2', class2!, 'tc-two-rules', applying);
    apply(A, 'cmd-filter-add-2', filter2!, 'tc-two-rules', applying);

    // Some traffic through both classes and the unclassified path, so -s shows real counters.
    const receiver = await startReceiver(pair.nsB, pair.addrsB, 5201);
    try {
      for (const host of pair.addrsB) await timedSend(A, host, 5201, 300_000);
    } finally {
      await receiver.stop();
    }

    const two =
      'veth0 after cmd-root-replace and rules 1 (10.213.77.2, 1 MB/s) and 2 (10.213.77.3, 2.5 MB/s) from plan.ts; 300 kB sent over TCP to each peer address';
    record(A, 'qdisc-htb-ours', showQdiscArgv('veth0'), 'tc-two-rules', two);
    record(A, 'qdisc-s-htb-ours', [TC, '-s', '-j', 'qdisc', 'show', 'dev', 'veth0'], 'tc-two-rules', two);
    record(A, 'class-two-rules', showClassArgv('veth0'), 'tc-two-rules', two);
    record(
      A,
      'class-j-two-rules',
      [TC, '-j', 'class', 'show', 'dev', 'veth0'],
      'tc-two-rules',
      `${two}; note: -j is ignored for classes by iproute2 6.1`,
    );
    record(A, 'class-s-two-rules', [TC, '-s', 'class', 'show', 'dev', 'veth0'], 'tc-two-rules', two);
    record(A, 'filter-two-rules', showFilterArgv('veth0'), 'tc-two-rules', two);
    record(A, 'filter-text-two-rules', [TC, 'filter', 'show', 'dev', 'veth0'], 'tc-two-rules', two);

    // Failures the routes must report.
    record(A, 'cmd-class-add-1-exists', class1!, 'tc-two-rules', `${two}; class 1:1 already exists`);
    record(
      A,
      'cmd-class-del-1-in-use',
      planRemoveRule(rule1)[1]!,
      'tc-two-rules',
      `${two}; filter 800::1 still points at class 1:1`,
    );

    // Remove rule 2 with the plan.
    const [filterDel2, classDel2] = planRemoveRule(rule2);
    apply(A, 'cmd-filter-del-2', filterDel2!, 'tc-one-rule', 'veth0 with rules 1 and 2, removing rule 2');
    apply(A, 'cmd-class-del-2', classDel2!, 'tc-one-rule', 'veth0 with rules 1 and 2, removing rule 2');
    const one = 'veth0 after rule 2 was removed with plan.ts (rule 1 left: 10.213.77.2, 1 MB/s)';
    record(A, 'cmd-filter-del-2-missing', filterDel2!, 'tc-one-rule', `${one}; filter 800::2 is already gone`);
    record(A, 'class-one-rule', showClassArgv('veth0'), 'tc-one-rule', one);
    record(A, 'filter-one-rule', showFilterArgv('veth0'), 'tc-one-rule', one);

    // A hand-made htb on veth2: the shape of the upstream samples, plus a pfifo leaf qdisc, which
    // Ballast must recognise as not its own.
    for (const argv of [
      [TC, 'qdisc', 'add', 'dev', 'veth2', 'root', 'handle', '1:', 'htb', 'default', '30', 'r2q', '10'],
      [
        TC,
        'class',
        'add',
        'dev',
        'veth2',
        'parent',
        '1:',
        'classid',
        '1:1',
        'htb',
        'rate',
        '100mbit',
        'ceil',
        '100mbit',
      ],
      [
        TC,
        'class',
        'add',
        'dev',
        'veth2',
        'parent',
        '1:1',
        'classid',
        '1:10',
        'htb',
        'rate',
        '1mbps',
        'ceil',
        '2mbps',
        'burst',
        '15k',
      ],
      [TC, 'class', 'add', 'dev', 'veth2', 'parent', '1:1', 'classid', '1:30', 'htb', 'rate', '1mbps', 'ceil', '2mbps'],
      [TC, 'qdisc', 'add', 'dev', 'veth2', 'parent', '1:10', 'handle', '10:', 'pfifo', 'limit', '100'],
      [
        TC,
        'filter',
        'add',
        'dev',
        'veth2',
        'parent',
        '1:',
        'protocol',
        'ip',
        'prio',
        '2',
        'u32',
        'match',
        'ip',
        'dst',
        '192.168.1.50/32',
        'match',
        'ip',
        'dport',
        '445',
        '0xffff',
        'flowid',
        '1:10',
      ],
      [
        TC,
        'filter',
        'add',
        'dev',
        'veth2',
        'parent',
        '1:',
        'protocol',
        'ip',
        'prio',
        '2',
        'u32',
        'match',
        'ip',
        'src',
        '10.0.0.0/24',
        'flowid',
        '1:30',
      ],
    ]) {
      must(inNetns(A, argv));
    }
    const foreign =
      'veth2 shaped by hand: tc qdisc add dev veth2 root handle 1: htb default 30 r2q 10; class 1:1 rate 100mbit; ' +
      'classes 1:10 (rate 1mbps ceil 2mbps burst 15k) and 1:30 (rate 1mbps ceil 2mbps) under 1:1; pfifo 10: (limit 100) under 1:10; ' +
      'u32 prio 2: match ip dst 192.168.1.50/32 match ip dport 445 0xffff flowid 1:10, and match ip src 10.0.0.0/24 flowid 1:30';
    record(A, 'qdisc-htb-foreign', showQdiscArgv('veth2'), 'tc-foreign', foreign);
    record(A, 'class-foreign', showClassArgv('veth2'), 'tc-foreign', foreign);
    record(A, 'class-s-foreign', [TC, '-s', 'class', 'show', 'dev', 'veth2'], 'tc-foreign', foreign);
    record(A, 'filter-foreign-two-matches', showFilterArgv('veth2'), 'tc-foreign', foreign);
    record(A, 'filter-text-foreign-two-matches', [TC, 'filter', 'show', 'dev', 'veth2'], 'tc-foreign', foreign);
    // 6.1's pretty JSON with a port match prints broken JSON and aborts (json_writer assertion);
    // node reports the signal, the fixture format has only an exit code: 128 + SIGABRT(6).
    {
      const argv = [TC, '-p', '-j', 'filter', 'show', 'dev', 'veth2'];
      const full = inNetns(A, argv);
      const r = spawnSync(full[0]!, full.slice(1), { encoding: 'utf8', env: { ...process.env, LC_ALL: 'C' } });
      save('filter-p-j-foreign-broken', {
        source: `recorded ${when} on this build machine (${machine}) inside a private network namespace (ip netns exec <ns>) by test/tools/traffic/record-fixtures.ts; ${foreign}; tc was killed by ${r.signal ?? 'no signal'}, stored as exit code ${r.signal === 'SIGABRT' ? 134 : r.status}`,
        argv,
        code: r.signal === 'SIGABRT' ? 134 : (r.status ?? -1),
        stdout: r.stdout,
        stderr: r.stderr,
        scenario: 'tc-foreign',
      });
    }

    // All devices at once (the listing's GET could read it this way): has "dev" in each entry.
    record(A, 'qdisc-all-devices', [TC, '-j', 'qdisc', 'show'], 'tc-all', `${one}; plus ${foreign}; plus ${ifb}`);
  } finally {
    pair.cleanup();
  }

  upstreamSamples();
}

/**
 * The upstream samples are stdout only. Their argv is reconstructed from the file name; the
 * device is veth0 (SOURCES.md: captured with veth0/veth1 in `unshare -n`; no "dev" key in the
 * JSON means `dev X` was given).
 */
function upstreamSamples(): void {
  const samples: [file: string, name: string, argv: string[]][] = [
    [
      'debian12-iproute2-6.1-tc-j-qdisc-show-default.out',
      'upstream-j-qdisc-show-default',
      [TC, '-j', 'qdisc', 'show', 'dev', 'veth0'],
    ],
    [
      'debian12-iproute2-6.1-tc-j-qdisc-show-htb.out',
      'upstream-j-qdisc-show-htb',
      [TC, '-j', 'qdisc', 'show', 'dev', 'veth0'],
    ],
    [
      'debian12-iproute2-6.1-tc-s-j-qdisc-show-htb.out',
      'upstream-s-j-qdisc-show-htb',
      [TC, '-s', '-j', 'qdisc', 'show', 'dev', 'veth0'],
    ],
    [
      'debian12-iproute2-6.1-tc-j-class-show-empty.out',
      'upstream-j-class-show-empty',
      [TC, '-j', 'class', 'show', 'dev', 'veth0'],
    ],
    [
      'debian12-iproute2-6.1-tc-j-class-show-htb.out',
      'upstream-j-class-show-htb',
      [TC, '-j', 'class', 'show', 'dev', 'veth0'],
    ],
    [
      'debian12-iproute2-6.1-tc-s-class-show-htb.out',
      'upstream-s-class-show-htb',
      [TC, '-s', 'class', 'show', 'dev', 'veth0'],
    ],
    [
      'debian12-iproute2-6.1-tc-j-filter-show-empty.out',
      'upstream-j-filter-show-empty',
      [TC, '-j', 'filter', 'show', 'dev', 'veth0'],
    ],
    [
      'debian12-iproute2-6.1-tc-j-filter-show-u32.out',
      'upstream-j-filter-show-u32',
      [TC, '-j', 'filter', 'show', 'dev', 'veth0'],
    ],
    [
      'debian12-iproute2-6.1-tc-j-filter-show-u32-two-matches.out',
      'upstream-j-filter-show-u32-two-matches',
      [TC, '-j', 'filter', 'show', 'dev', 'veth0'],
    ],
    [
      'debian12-iproute2-6.1-tc-filter-show-u32.out',
      'upstream-filter-show-u32',
      [TC, 'filter', 'show', 'dev', 'veth0'],
    ],
    [
      'debian12-iproute2-6.1-tc-filter-show-u32-two-matches.out',
      'upstream-filter-show-u32-two-matches',
      [TC, 'filter', 'show', 'dev', 'veth0'],
    ],
    [
      'debian12-iproute2-6.1-tc-p-j-filter-show-u32.out',
      'upstream-p-j-filter-show-u32',
      [TC, '-p', '-j', 'filter', 'show', 'dev', 'veth0'],
    ],
  ];
  for (const [file, name, argv] of samples) {
    const aborted = name.startsWith('upstream-p-j');
    save(name, {
      source:
        `../shared/upstream-samples/tc/${file} (own capture on Debian 12, iproute2 6.1.0-3, see SOURCES.md); stdout verbatim; ` +
        `argv reconstructed from the file name (device veth0)` +
        (aborted
          ? '; exit code and stderr were not kept with the sample: 134 (SIGABRT) is what fixtures/tc/filter-p-j-foreign-broken.yaml recorded for the same command here, stderr left empty'
          : '; exit code 0 and empty stderr assumed (stdout-only sample)'),
      argv,
      code: aborted ? 134 : 0,
      stdout: readFileSync(join(upstream, file), 'utf8'),
      stderr: '',
      scenario: `tc-upstream-${name.replace(/^upstream-/, '')}`,
    });
  }
}

await main();
