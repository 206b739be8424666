/**
 * Traffic control against the real kernel: the plan's argv run with real tc inside a private
 * pair of network namespaces joined by a veth, read back with tc and our parsers, and a real
 * TCP transfer timed through the limit.
 *
 * Namespace A ("this box") has veth0 10.213.78.1; namespace B ("the peer") has veth1 with
 * 10.213.78.2 (limited to 1 MB/s by rule 1) and 10.213.78.3 (no rule). Shaping is on A's egress,
 * so traffic A sends to .2 is limited and traffic to .3 is not.
 *
 * Requires root, ip, tc and node; a missing tool fails the file (never a skip).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  TC,
  createVethPair,
  inNetns,
  must,
  requireNetnsTools,
  run,
  startReceiver,
  timedSend,
  type VethPair,
} from './helpers/tc-netns';
import { parseTcQdisc } from '../../handlers/traffic/parse/tc-qdisc';
import { parseTcClass } from '../../handlers/traffic/parse/tc-class';
import { parseTcFilter } from '../../handlers/traffic/parse/tc-filter';
import {
  classIdFor,
  filterHandleFor,
  planCreateRule,
  planEnsureRoot,
  planRemoveRule,
  rootState,
  showClassArgv,
  showFilterArgv,
  showQdiscArgv,
  type Argv,
} from '../../handlers/traffic/plan';
import { reconcile, type DeviceTcState } from '../../handlers/traffic/reconcile';
import type { StoredRule } from '../../handlers/traffic/store';

let pair: VethPair;
let rule: StoredRule;

/** Run planned argv inside namespace A, each must succeed. */
function apply(argvs: Argv[]): void {
  for (const argv of argvs) must(inNetns(pair.nsA, argv));
}

function read(dev = pair.devA): DeviceTcState {
  return {
    queues: parseTcQdisc(must(inNetns(pair.nsA, showQdiscArgv(dev))).stdout, dev),
    classes: parseTcClass(must(inNetns(pair.nsA, showClassArgv(dev))).stdout),
    filters: parseTcFilter(must(inNetns(pair.nsA, showFilterArgv(dev))).stdout),
  };
}

beforeAll(() => {
  requireNetnsTools();
  pair = createVethPair({ tag: 'tcsys', subnet: 78, peerAddresses: 2 });
  rule = { name: 'limited-peer', device: pair.devA, ip: pair.addrsB[0]!, rate: 1, id: 1 };
});

afterAll(() => {
  pair?.cleanup();
  // The namespaces (and with them the veth) must really be gone.
  const left = run(['/usr/sbin/ip', 'netns', 'list']).stdout;
  if (pair) expect(left).not.toContain(pair.nsA);
});

describe('tc in a private netns', () => {
  it('creates a rule with the planned argv and reads it back', () => {
    const before = read();
    expect(before.queues.find((q) => q.owner === 'root')!.qtype).toBe('noqueue');
    const plan = planCreateRule(rule, before.queues);
    if (!plan.ok) throw new Error(plan.reason);
    expect(plan.argv).toHaveLength(3);
    apply(plan.argv);

    const after = read();
    expect(rootState(pair.devA, after.queues)).toEqual({ kind: 'ours' });
    const cls = after.classes.find((c) => c.classid === classIdFor(rule.id));
    expect(cls).toMatchObject({ kind: 'htb', parent: null, rate: 8_000_000, ceil: 8_000_000 });
    const flt = after.filters.find((f) => f.handle === filterHandleFor(rule.id));
    expect(flt).toMatchObject({ kind: 'u32', protocol: 'ip', pref: 1, flowid: '1:1' });
    expect(flt!.matches).toEqual([
      {
        offset: 16,
        value: '0ad54e02',
        mask: 'ffffffff',
        offmask: '',
        field: 'dst',
        address: pair.addrsB[0],
        prefix_length: 32,
      },
    ]);
    // Nothing left to do according to the reconciler.
    expect(reconcile([rule], { [pair.devA]: after })).toEqual({ argv: [], skipped: [], stale: [] });
  });

  it('limits the rule IP to ~1 MB/s while the other peer address runs free', async () => {
    const bytes = 3_000_000;
    const receiver = await startReceiver(pair.nsB, pair.addrsB, 5202);
    let limited;
    let free;
    try {
      free = await timedSend(pair.nsA, pair.addrsB[1]!, 5202, bytes);
      limited = await timedSend(pair.nsA, pair.addrsB[0]!, 5202, bytes);
    } finally {
      await receiver.stop();
    }
    const mbps = (r: { ms: number }) => bytes / 1e6 / (r.ms / 1000);
    console.log(
      `transfer of ${bytes} bytes: limited (${pair.addrsB[0]}, 1 MB/s rule) ${limited.ms.toFixed(0)} ms = ${mbps(limited).toFixed(2)} MB/s; ` +
        `unlimited (${pair.addrsB[1]}) ${free.ms.toFixed(0)} ms = ${mbps(free).toFixed(1)} MB/s`,
    );
    expect(limited.received).toBe(bytes);
    expect(free.received).toBe(bytes);
    // 3 MB at 1 MB/s is ~3 s; the bounds are generous (the first burst passes at line rate,
    // and a loaded CI box may be slow), but a missing limit would finish in well under 1 s.
    expect(limited.ms).toBeGreaterThanOrEqual(2000);
    expect(limited.ms).toBeLessThan(15_000);
    expect(free.ms).toBeLessThan(limited.ms / 4);

    const stats = must(inNetns(pair.nsA, [TC, '-s', 'class', 'show', 'dev', pair.devA])).stdout;
    const [cls] = parseTcClass(stats);
    // The limited flow really went through class 1:1.
    expect(cls!.stats!.bytes).toBeGreaterThan(bytes);
  });

  it('reconcile puts back a filter deleted by hand, and everything after a root reset', () => {
    // Someone deletes the filter: the traffic would no longer be limited.
    apply([planRemoveRule(rule)[0]!]);
    let state = read();
    expect(state.filters).toEqual([]);
    let r = reconcile([rule], { [pair.devA]: state });
    expect(r.argv).toHaveLength(1);
    expect(r.argv[0]!.slice(0, 3)).toEqual([TC, 'filter', 'replace']);
    apply(r.argv);
    state = read();
    expect(reconcile([rule], { [pair.devA]: state }).argv).toEqual([]);

    // A reboot, in effect: the root qdisc (and with it every class and filter) is gone.
    must(inNetns(pair.nsA, [TC, 'qdisc', 'del', 'dev', pair.devA, 'root']));
    state = read();
    expect(state.queues.find((q) => q.owner === 'root')!.qtype).toBe('noqueue');
    r = reconcile([rule], { [pair.devA]: state });
    expect(r.argv.map((a) => a.slice(1, 3))).toEqual([
      ['qdisc', 'replace'],
      ['class', 'replace'],
      ['filter', 'replace'],
    ]);
    apply(r.argv);
    state = read();
    expect(reconcile([rule], { [pair.devA]: state })).toEqual({ argv: [], skipped: [], stale: [] });
    expect(state.filters[0]!.matches[0]!.address).toBe(pair.addrsB[0]);
  });

  it('removes the rule: class and filter gone, our root stays', () => {
    apply(planRemoveRule(rule));
    const state = read();
    expect(state.classes).toEqual([]);
    expect(state.filters).toEqual([]);
    expect(rootState(pair.devA, state.queues)).toEqual({ kind: 'ours' });
    // Removing again fails loudly in tc (the route reports it), it does not half-succeed. With
    // the last filter gone the whole u32 instance at pref 1 is gone too, so tc says "chain"
    // here, and "handle not found" while other rules remain (fixtures/tc/cmd-filter-del-2-missing).
    const again = run(inNetns(pair.nsA, planRemoveRule(rule)[0]!));
    expect(again.code).toBe(2);
    expect(again.stderr).toMatch(/Cannot find specified filter chain/);
  });

  it('refuses to take over an htb root it did not create', () => {
    must(inNetns(pair.nsA, [TC, 'qdisc', 'del', 'dev', pair.devA, 'root']));
    must(inNetns(pair.nsA, [TC, 'qdisc', 'add', 'dev', pair.devA, 'root', 'handle', '1:', 'htb', 'default', '30']));
    const plan = planEnsureRoot(pair.devA, read().queues);
    expect(plan).toEqual({
      ok: false,
      reason: `device ${pair.devA} already has an htb root qdisc (handle 1:, default 0x30) that Ballast did not create; refusing to replace it (remove it by hand if it is not needed)`,
    });
  });
});
