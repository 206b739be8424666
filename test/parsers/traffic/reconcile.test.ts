/**
 * reconcile(): stored rules vs. what tc shows, on states recorded from a real kernel.
 */
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { readFixture } from '../../../runtime/system/fixture-file';
import { parseTcQdisc } from '../../../handlers/traffic/parse/tc-qdisc';
import { parseTcClass } from '../../../handlers/traffic/parse/tc-class';
import { parseTcFilter } from '../../../handlers/traffic/parse/tc-filter';
import { TC, planAddRule, planEnsureRoot } from '../../../handlers/traffic/plan';
import { reconcile, type DeviceTcState } from '../../../handlers/traffic/reconcile';
import type { StoredRule } from '../../../handlers/traffic/store';

const dir = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', 'fixtures', 'tc');
const out = (name: string) => readFixture(join(dir, `${name}.yaml`)).stdout;
const state = (qdisc: string, cls: string, filter: string, dev = 'veth0'): DeviceTcState => ({
  queues: parseTcQdisc(out(qdisc), dev),
  classes: parseTcClass(out(cls)),
  filters: parseTcFilter(out(filter)),
});

// The rules the recorder applied (test/tools/traffic/record-fixtures.ts).
const rule1: StoredRule = { name: 'backup-target', device: 'veth0', ip: '10.213.77.2', rate: 1, id: 1 };
const rule2: StoredRule = { name: 'replica', device: 'veth0', ip: '10.213.77.3', rate: 2.5, id: 2 };

const fresh = () => state('qdisc-noqueue-veth', 'class-empty', 'filter-empty');
const twoRules = () => state('qdisc-htb-ours', 'class-two-rules', 'filter-two-rules');
const oneRule = () => state('qdisc-htb-ours', 'class-one-rule', 'filter-one-rule');

describe('reconcile', () => {
  it('nothing to do when tc matches the DB', () => {
    expect(reconcile([rule1, rule2], { veth0: twoRules() })).toEqual({ argv: [], skipped: [], stale: [] });
    expect(reconcile([], { veth0: twoRules() })).toEqual({ argv: [], skipped: [], stale: [] });
  });

  it('after a reboot: root, then classes, then filters, all with replace', () => {
    const r = reconcile([rule2, rule1], { veth0: fresh() });
    expect(r.argv).toEqual([
      [TC, 'qdisc', 'replace', 'dev', 'veth0', 'root', 'handle', '1:', 'htb', 'default', 'ba11'],
      [
        TC,
        'class',
        'replace',
        'dev',
        'veth0',
        'parent',
        '1:',
        'classid',
        '1:1',
        'htb',
        'rate',
        '8mbit',
        'ceil',
        '8mbit',
        'burst',
        '16384b',
        'cburst',
        '16384b',
      ],
      [
        TC,
        'class',
        'replace',
        'dev',
        'veth0',
        'parent',
        '1:',
        'classid',
        '1:2',
        'htb',
        'rate',
        '20mbit',
        'ceil',
        '20mbit',
        'burst',
        '25000b',
        'cburst',
        '25000b',
      ],
      [
        TC,
        'filter',
        'replace',
        'dev',
        'veth0',
        'parent',
        '1:',
        'protocol',
        'ip',
        'prio',
        '1',
        'handle',
        '800::1',
        'u32',
        'match',
        'ip',
        'dst',
        '10.213.77.2/32',
        'flowid',
        '1:1',
      ],
      [
        TC,
        'filter',
        'replace',
        'dev',
        'veth0',
        'parent',
        '1:',
        'protocol',
        'ip',
        'prio',
        '1',
        'handle',
        '800::2',
        'u32',
        'match',
        'ip',
        'dst',
        '10.213.77.3/32',
        'flowid',
        '1:2',
      ],
    ]);
    expect(r.skipped).toEqual([]);
  });

  it('a rule removed by hand is put back, the other left alone', () => {
    const r = reconcile([rule1, rule2], { veth0: oneRule() });
    expect(r.argv).toEqual(planAddRule(rule2, 'replace'));
  });

  it('only the missing half of a rule is re-applied', () => {
    const s = twoRules();
    s.filters = s.filters.filter((f) => f.handle !== '800::2');
    expect(reconcile([rule1, rule2], { veth0: s }).argv).toEqual([planAddRule(rule2, 'replace')[1]]);
    const t = twoRules();
    t.classes = t.classes.filter((c) => c.classid !== '1:1');
    expect(reconcile([rule1, rule2], { veth0: t }).argv).toEqual([planAddRule(rule1, 'replace')[0]]);
  });

  it('a class at the wrong rate, or a filter to the wrong address, is replaced', () => {
    expect(reconcile([{ ...rule1, rate: 2 }, rule2], { veth0: twoRules() }).argv).toEqual([
      planAddRule({ ...rule1, rate: 2 }, 'replace')[0],
    ]);
    expect(reconcile([rule1, { ...rule2, ip: '10.213.77.9' }], { veth0: twoRules() }).argv).toEqual([
      planAddRule({ ...rule2, ip: '10.213.77.9' }, 'replace')[1],
    ]);
  });

  it('rates are compared as tc displays them, so a lossy display is not a difference', () => {
    // 1.2345678 MB/s = 9876544 bit/s, which tc shows as "9876Kbit"
    const odd = { ...rule1, rate: 1.2345678 };
    const s = twoRules();
    s.classes = s.classes.map((c) => (c.classid === '1:1' ? { ...c, rate: 9_876_000, ceil: 9_876_000 } : c));
    expect(reconcile([odd, rule2], { veth0: s }).argv).toEqual([]);
  });

  it('objects under our root that no rule owns are reported, not removed', () => {
    const r = reconcile([rule1], { veth0: twoRules() });
    expect(r.argv).toEqual([]);
    expect(r.stale).toEqual([
      { device: 'veth0', kind: 'class', id: '1:2' },
      { device: 'veth0', kind: 'filter', id: '800::2' },
    ]);
  });

  it('a foreign htb root: the device rules are skipped with the reason', () => {
    const onVeth2 = { ...rule1, device: 'veth2' };
    const r = reconcile([onVeth2], {
      veth2: state('qdisc-htb-foreign', 'class-foreign', 'filter-foreign-two-matches', 'veth2'),
    });
    expect(r.argv).toEqual([]);
    const refusal = planEnsureRoot('veth2', parseTcQdisc(out('qdisc-htb-foreign'), 'veth2'));
    expect(refusal.ok).toBe(false);
    expect(r.skipped).toEqual([{ rule: 'backup-target', device: 'veth2', reason: refusal.ok ? '' : refusal.reason }]);
    expect(r.stale).toEqual([]);
  });

  it('a device that is gone: skipped', () => {
    const r = reconcile([{ ...rule1, device: 'eth7' }], { veth0: twoRules() });
    expect(r).toEqual({
      argv: [],
      skipped: [{ rule: 'backup-target', device: 'eth7', reason: 'device eth7 not found' }],
      stale: [],
    });
  });

  it('several devices, each planned on its own state, in device order', () => {
    const onIfb = { ...rule2, device: 'ifb0', id: 3 };
    const r = reconcile([onIfb, rule1], {
      veth0: oneRule(),
      ifb0: { queues: parseTcQdisc(out('qdisc-pfifo-fast-ifb'), 'ifb0'), classes: [], filters: [] },
    });
    expect(r.argv).toEqual([
      [TC, 'qdisc', 'replace', 'dev', 'ifb0', 'root', 'handle', '1:', 'htb', 'default', 'ba11'],
      ...planAddRule(onIfb, 'replace'),
    ]);
  });
});
