/**
 * Records the fixtures the traffic ROUTES replay, on top of the parser captures that
 * record-fixtures.ts makes (which it owns, and wipes, at the top of fixtures/tc):
 *
 *   fixtures/tc/routes/*.yaml      the commands the three routes run and tc's answers, including
 *                                  the failures they must tell apart ("already gone" on destroy,
 *                                  htb refusing a `replace` of itself, a missing device)
 *   fixtures/demo/traffic/*.yaml   the demo appliance's devices (eno1, eno2) as GET reads them
 *
 *   npx vite-node test/tools/traffic/record-route-fixtures.ts     # as root; redo any time
 *
 * Same method as record-fixtures.ts: a private namespace pair (test/system/helpers/tc-netns.ts),
 * every command an argv run as `ip netns exec <ns> <argv>`, the product's argv stored without the
 * netns prefix, mutating commands taken from handlers/traffic/plan.ts (in the `replace` mode the
 * create route uses). Each fixture names its `scenario`, since one argv answers differently
 * before and after a change. Successful reads get a hand-reviewed `<name>.expected.json` (checked
 * by test/parsers/traffic/fixtures.test.ts); this tool never writes those.
 */
import { mkdirSync, readdirSync, rmSync } from 'node:fs';
import { release } from 'node:os';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { writeFixture } from '../../../runtime/system/fixture-file';
import {
  IP,
  TC,
  createVethPair,
  deleteNetns,
  inNetns,
  must,
  requireNetnsTools,
  run,
  type RunResult,
} from '../../system/helpers/tc-netns';
import {
  planAddRule,
  planEnsureRoot,
  planRemoveRoot,
  planRemoveRule,
  showClassArgv,
  showFilterArgv,
  showQdiscArgv,
} from '../../../handlers/traffic/plan';
import { parseTcQdisc } from '../../../handlers/traffic/parse/tc-qdisc';
import type { StoredRule } from '../../../handlers/traffic/store';

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '..', '..', '..');
const routesDir = join(root, 'fixtures', 'tc', 'routes');
const demoDir = join(root, 'fixtures', 'demo', 'traffic');
const TOOL = 'test/tools/traffic/record-route-fixtures.ts';

requireNetnsTools();
const tcVersion = must([TC, '-V']).stdout.trim();
const when = new Date().toISOString().slice(0, 10);
const machine = `Debian 12, kernel ${release()}, ${tcVersion}, LC_ALL=C, as root`;

function clean(dir: string): void {
  mkdirSync(dir, { recursive: true });
  for (const f of readdirSync(dir)) if (f.endsWith('.yaml')) rmSync(join(dir, f));
}

function record(
  dir: string,
  ns: string,
  name: string,
  argv: string[],
  scenario: string | undefined,
  setup: string,
): RunResult {
  const r = run(inNetns(ns, argv));
  writeFixture(join(dir, `${name}.yaml`), {
    source: `recorded ${when} on this build machine (${machine}) inside a private network namespace (ip netns exec <ns>) by ${TOOL}; ${setup}`,
    argv,
    code: r.code,
    stdout: r.stdout,
    stderr: r.stderr,
    ...(scenario ? { scenario } : {}),
  });
  console.log(`wrote ${join(dir, name).slice(root.length + 1)}.yaml (exit ${r.code})`);
  return r;
}

function expectCode(r: RunResult, code: number, what: string): void {
  if (r.code !== code) throw new Error(`${what}: expected exit ${code}, got ${r.code}: ${r.stderr.trim()}`);
}

// The same rules as record-fixtures.ts, so the reads recorded there (class-two-rules, ...) fit.
const rule1: StoredRule = { name: 'backup-target', device: 'veth0', ip: '10.213.77.2', rate: 1, id: 1 };
const rule2: StoredRule = { name: 'replica', device: 'veth0', ip: '10.213.77.3', rate: 2.5, id: 2 };

function routes(): void {
  clean(routesDir);
  const pair = createVethPair({ tag: 'recrt', subnet: 77, peerAddresses: 2 });
  const A = pair.nsA;
  const rec = (name: string, argv: string[], scenario: string, setup: string) =>
    record(routesDir, A, name, argv, scenario, setup);
  try {
    // A second veth that is never brought up: tc lists no qdisc for it at all.
    must([IP, '-n', A, 'link', 'add', 'veth4', 'type', 'veth', 'peer', 'name', 'veth5', 'netns', pair.nsB]);
    const fresh =
      'veth0 (10.213.77.1/24, peer 10.213.77.2 and .3 in namespace B) as it comes; veth4 (peer veth5 in B) created and never set up';
    rec('ip-link-show', ['/usr/sbin/ip', '-j', 'link', 'show'], 'tc-fresh', fresh);
    rec('qdisc-never-up', showQdiscArgv('veth4'), 'tc-fresh', fresh);
    rec('class-never-up', showClassArgv('veth4'), 'tc-fresh', fresh);
    rec('filter-never-up', showFilterArgv('veth4'), 'tc-fresh', fresh);
    rec('class-missing-device', showClassArgv('nosuch0'), 'tc-fresh', 'no device nosuch0 in the namespace');
    rec('filter-missing-device', showFilterArgv('nosuch0'), 'tc-fresh', 'no device nosuch0 in the namespace');

    // An administrator's own root (not htb): the create route must refuse it.
    must(inNetns(A, [TC, 'qdisc', 'add', 'dev', 'veth0', 'root', 'pfifo', 'limit', '500']));
    rec(
      'qdisc-pfifo-admin',
      showQdiscArgv('veth0'),
      'tc-admin-root',
      'veth0 after `tc qdisc add dev veth0 root pfifo limit 500` (the kernel numbers it 8001:)',
    );
    must(inNetns(A, [TC, 'qdisc', 'del', 'dev', 'veth0', 'root']));

    // Create rule 1 then 2 the way the create route does: root, class replace, filter replace.
    const queues = parseTcQdisc(must(inNetns(A, showQdiscArgv('veth0'))).stdout, 'veth0');
    const rootPlan = planEnsureRoot('veth0', queues);
    if (!rootPlan.ok || rootPlan.argv.length !== 1) throw new Error('expected one root command on a fresh veth0');
    const rootArgv = rootPlan.argv[0]!;
    must(inNetns(A, rootArgv)); // recorded by record-fixtures.ts as cmd-root-replace
    const creating =
      'veth0 while the create route applies rule 1 (10.213.77.2, 1 MB/s) and rule 2 (10.213.77.3, 2.5 MB/s) under our htb root';
    const [class1, filter1] = planAddRule(rule1, 'replace');
    expectCode(rec('cmd-class-replace-1', class1!, 'tc-routes', creating), 0, 'class replace 1');
    expectCode(rec('cmd-filter-replace-1', filter1!, 'tc-routes', creating), 0, 'filter replace 1');
    const [class2, filter2] = planAddRule(rule2, 'replace');
    expectCode(rec('cmd-class-replace-2', class2!, 'tc-routes', creating), 0, 'class replace 2');
    expectCode(rec('cmd-filter-replace-2', filter2!, 'tc-routes', creating), 0, 'filter replace 2');
    // A second `qdisc replace` on our own htb: what a create racing another create meets.
    expectCode(
      rec(
        'cmd-root-replace-ours',
        rootArgv,
        'tc-routes-race',
        'veth0 whose root is already our htb (1:, default 0xba11)',
      ),
      2,
      'root replace on ours',
    );

    // Destroy rule 1 (rule 2 stays), then rule 2 (the last: our root goes too).
    const [filterDel1, classDel1] = planRemoveRule(rule1);
    const destroying = 'veth0 with rules 1 and 2, the destroy route removing rule 1';
    expectCode(rec('cmd-filter-del-1', filterDel1!, 'tc-routes', destroying), 0, 'filter del 1');
    expectCode(rec('cmd-class-del-1', classDel1!, 'tc-routes', destroying), 0, 'class del 1');
    const [filterDel2, classDel2] = planRemoveRule(rule2);
    must(inNetns(A, filterDel2!)); // recorded by record-fixtures.ts as cmd-filter-del-2
    must(inNetns(A, classDel2!));
    const empty = 'veth0 with our htb root but no rule left (both removed)';
    expectCode(
      rec('cmd-filter-del-1-no-chain', filterDel1!, 'tc-routes-gone', `${empty}; filter 800::1 already gone`),
      2,
      'filter del, no chain',
    );
    expectCode(
      rec('cmd-class-del-1-missing', classDel1!, 'tc-routes-gone', `${empty}; class 1:1 already gone`),
      2,
      'class del, missing',
    );
    expectCode(
      rec('cmd-root-del', planRemoveRoot('veth0')[0]!, 'tc-routes', `${empty}: the destroy route removes our root`),
      0,
      'root del',
    );
    const noRoot = 'veth0 back on its default root (noqueue) after our htb root was removed';
    expectCode(rec('cmd-filter-del-1-no-root', filterDel1!, 'tc-routes-noroot', noRoot), 2, 'filter del, no root');
    expectCode(rec('cmd-class-del-1-no-root', classDel1!, 'tc-routes-noroot', noRoot), 2, 'class del, no root');
  } finally {
    pair.cleanup();
  }
}

/**
 * The demo appliance's NICs. ifb devices stand in for them because they are the virtual devices
 * that get the kernel's default qdiscs like a real NIC (veth is noqueue): eno1 with 4 tx queues
 * (mq, one pfifo_fast per queue), eno2 with one (pfifo_fast). Nothing is shaped: the demo starts
 * with no stored rules, and its listing must agree with that.
 */
function demo(): void {
  clean(demoDir);
  const ns = `blt-recdemo-${process.pid}`;
  must([IP, 'netns', 'add', ns]);
  try {
    must([IP, '-n', ns, 'link', 'set', 'lo', 'up']);
    must([IP, '-n', ns, 'link', 'add', 'eno1', 'numtxqueues', '4', 'numrxqueues', '4', 'type', 'ifb']);
    must([IP, '-n', ns, 'link', 'add', 'eno2', 'type', 'ifb']);
    must([IP, '-n', ns, 'link', 'set', 'eno1', 'up']);
    must([IP, '-n', ns, 'link', 'set', 'eno2', 'up']);
    const setup =
      'the demo appliance: ifb devices named eno1 (4 tx queues) and eno2 (1 queue) stand in for its NICs, ' +
      'set up with the qdiscs the kernel attaches by default (net.core.default_qdisc = pfifo_fast); nothing shaped';
    const rec = (name: string, argv: string[]) =>
      expectCode(record(demoDir, ns, name, argv, undefined, setup), 0, name);
    rec('ip-link-show', ['/usr/sbin/ip', '-j', 'link', 'show']);
    for (const dev of ['eno1', 'eno2']) {
      rec(`tc-qdisc-${dev}`, showQdiscArgv(dev));
      rec(`tc-class-${dev}`, showClassArgv(dev));
      rec(`tc-filter-${dev}`, showFilterArgv(dev));
    }
  } finally {
    deleteNetns(ns);
  }
}

routes();
demo();
