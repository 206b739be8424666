/**
 * The tc argv plans, compared element for element, and the id bookkeeping. The recorded
 * `cmd-*` fixtures were made by running these plans on a real kernel, so they are also checked
 * here to still be what the plan produces.
 */
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { readFixture } from '../../../runtime/system/fixture-file';
import { parseTcQdisc } from '../../../handlers/traffic/parse/tc-qdisc';
import { parseTcClass } from '../../../handlers/traffic/parse/tc-class';
import { parseTcFilter } from '../../../handlers/traffic/parse/tc-filter';
import {
  TC,
  TrafficPlanError,
  burstBytes,
  classIdFor,
  filterHandleFor,
  idsFromRules,
  idsInUseOnDevice,
  isOurRoot,
  nextFreeId,
  planAddRule,
  planCreateRule,
  planEnsureRoot,
  planRemoveRoot,
  planRemoveRule,
  rateArg,
  removeId,
  rootState,
  showClassArgv,
  showFilterArgv,
  showQdiscArgv,
} from '../../../handlers/traffic/plan';
import { createRuleBody } from '../../../handlers/traffic/requests';
import { idList, trafficListing } from '../../../handlers/traffic/responses';
import type { StoredRule } from '../../../handlers/traffic/store';

const dir = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', 'fixtures', 'tc');
const fx = (name: string) => readFixture(join(dir, `${name}.yaml`));
const queuesOf = (name: string) => {
  const f = fx(name);
  return parseTcQdisc(f.stdout, f.argv[f.argv.indexOf('dev') + 1]);
};

const rule = (over: Partial<StoredRule> = {}): StoredRule => ({
  name: 'r',
  device: 'eth1',
  ip: '192.0.2.10',
  rate: 1,
  id: 1,
  ...over,
});

describe('reading argv', () => {
  it('qdisc and filter as JSON, class as text', () => {
    expect(showQdiscArgv('eth1')).toEqual([TC, '-j', 'qdisc', 'show', 'dev', 'eth1']);
    expect(showClassArgv('eth1')).toEqual([TC, 'class', 'show', 'dev', 'eth1']);
    expect(showFilterArgv('eth1')).toEqual([TC, '-j', 'filter', 'show', 'dev', 'eth1']);
    expect(TC).toBe('/usr/sbin/tc');
  });

  it('the recorded reads used exactly these argv', () => {
    expect(fx('qdisc-htb-ours').argv).toEqual(showQdiscArgv('veth0'));
    expect(fx('class-two-rules').argv).toEqual(showClassArgv('veth0'));
    expect(fx('filter-two-rules').argv).toEqual(showFilterArgv('veth0'));
  });
});

describe('root qdisc', () => {
  const replace = [TC, 'qdisc', 'replace', 'dev', 'veth0', 'root', 'handle', '1:', 'htb', 'default', 'ba11'];

  it('replaces the root the kernel attached by default (handle 0:)', () => {
    expect(planEnsureRoot('veth0', queuesOf('qdisc-noqueue-veth'))).toEqual({ ok: true, argv: [replace] });
    expect(planEnsureRoot('ifb0', queuesOf('qdisc-pfifo-fast-ifb'))).toEqual({
      ok: true,
      argv: [[...replace.slice(0, 4), 'ifb0', ...replace.slice(5)]],
    });
    expect(planEnsureRoot('ifb1', queuesOf('qdisc-mq-ifb-4q'))).toEqual({
      ok: true,
      argv: [[...replace.slice(0, 4), 'ifb1', ...replace.slice(5)]],
    });
  });

  it('does nothing when our htb is already there', () => {
    expect(planEnsureRoot('veth0', queuesOf('qdisc-htb-ours'))).toEqual({ ok: true, argv: [] });
    expect(rootState('veth0', queuesOf('qdisc-all-devices'))).toEqual({ kind: 'ours' });
  });

  it('recognises ours by handle 1: AND default 0xba11', () => {
    const [ours] = queuesOf('qdisc-htb-ours');
    expect(isOurRoot(ours!)).toBe(true);
    expect(isOurRoot({ ...ours!, handler: 2 })).toBe(false);
    expect(isOurRoot({ ...ours!, details: { ...ours!.details, default: '0x30' } })).toBe(false);
    expect(isOurRoot({ ...ours!, details: { ...ours!.details, default: '0' } })).toBe(false);
    expect(isOurRoot({ ...ours!, details: undefined })).toBe(false);
    expect(isOurRoot({ ...ours!, qtype: 'hfsc' })).toBe(false);
    expect(isOurRoot({ ...ours!, owner: 'parent' })).toBe(false);
  });

  it('refuses a foreign htb with a reason that says why', () => {
    for (const [dev, qs] of [
      ['veth2', queuesOf('qdisc-htb-foreign')],
      ['veth0', queuesOf('upstream-j-qdisc-show-htb')],
      ['veth2', queuesOf('qdisc-all-devices')],
    ] as const) {
      const p = planEnsureRoot(dev, qs);
      expect(p.ok).toBe(false);
      if (!p.ok)
        expect(p.reason).toBe(
          `device ${dev} already has an htb root qdisc (handle 1:, default 0x30) that Ballast did not create; refusing to replace it (remove it by hand if it is not needed)`,
        );
    }
  });

  it('refuses any other root an administrator set up (non-zero handle), htb or not', () => {
    const f = readFixture(join(dir, 'routes', 'qdisc-pfifo-admin.yaml'));
    const queues = parseTcQdisc(f.stdout, 'veth0');
    // the kernel numbers added qdiscs 8001:, 8002:, ... (which one depends on the recording run)
    expect(queues[0]).toMatchObject({ qtype: 'pfifo', owner: 'root' });
    expect(queues[0]!.handler).toBeGreaterThanOrEqual(0x8001);
    const handle = queues[0]!.handler.toString(16);
    const reason = `device veth0 has a pfifo root qdisc (handle ${handle}:) that an administrator set up, not the kernel's default; refusing to replace it (remove it by hand if it is not needed)`;
    expect(rootState('veth0', queues)).toEqual({ kind: 'foreign', reason });
    expect(planEnsureRoot('veth0', queues)).toEqual({ ok: false, reason });
    // the same kinds the kernel uses as defaults count as foreign once someone added them
    const [noqueue] = queuesOf('qdisc-noqueue-veth');
    expect(rootState('veth0', [{ ...noqueue!, qtype: 'fq_codel', handler: 0x8001 }]).kind).toBe('foreign');
    expect(rootState('veth0', [{ ...noqueue!, qtype: 'fq_codel', handler: 0 }])).toEqual({
      kind: 'replaceable',
      qtype: 'fq_codel',
    });
  });

  it('refuses when tc listed no root for the device', () => {
    const p = planEnsureRoot('eth9', queuesOf('qdisc-all-devices'));
    expect(p).toEqual({ ok: false, reason: 'no root qdisc was listed for device eth9' });
  });

  it('removing our root', () => {
    expect(planRemoveRoot('veth0')).toEqual([[TC, 'qdisc', 'del', 'dev', 'veth0', 'root']]);
  });
});

describe('rules', () => {
  it('add: class then u32 filter on the destination address', () => {
    expect(planAddRule(rule())).toEqual([
      [
        TC,
        'class',
        'add',
        'dev',
        'eth1',
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
        'filter',
        'add',
        'dev',
        'eth1',
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
        '192.0.2.10/32',
        'flowid',
        '1:1',
      ],
    ]);
  });

  it('replace mode (reconcile) differs only in the verb', () => {
    const [c, f] = planAddRule(rule({ id: 10, rate: 2.5 }), 'replace');
    expect(c).toEqual([
      TC,
      'class',
      'replace',
      'dev',
      'eth1',
      'parent',
      '1:',
      'classid',
      '1:a',
      'htb',
      'rate',
      '20mbit',
      'ceil',
      '20mbit',
      'burst',
      '25000b',
      'cburst',
      '25000b',
    ]);
    expect(f).toEqual([
      TC,
      'filter',
      'replace',
      'dev',
      'eth1',
      'parent',
      '1:',
      'protocol',
      'ip',
      'prio',
      '1',
      'handle',
      '800::a',
      'u32',
      'match',
      'ip',
      'dst',
      '192.0.2.10/32',
      'flowid',
      '1:a',
    ]);
  });

  it('remove: filter first (a class in use cannot be deleted), then class', () => {
    expect(planRemoveRule({ device: 'eth1', id: 4095 })).toEqual([
      [TC, 'filter', 'del', 'dev', 'eth1', 'parent', '1:', 'protocol', 'ip', 'prio', '1', 'handle', '800::fff', 'u32'],
      [TC, 'class', 'del', 'dev', 'eth1', 'parent', '1:', 'classid', '1:fff'],
    ]);
  });

  it('create on a fresh device: root, class, filter; exactly what was recorded on a real kernel', () => {
    const recorded = { name: 'backup-target', device: 'veth0', ip: '10.213.77.2', rate: 1, id: 1 };
    const p = planCreateRule(recorded, queuesOf('qdisc-noqueue-veth'));
    expect(p).toEqual({
      ok: true,
      argv: [fx('cmd-root-replace').argv, fx('cmd-class-add-1').argv, fx('cmd-filter-add-1').argv],
    });
    expect(planAddRule({ device: 'veth0', ip: '10.213.77.3', rate: 2.5, id: 2 })).toEqual([
      fx('cmd-class-add-2').argv,
      fx('cmd-filter-add-2').argv,
    ]);
    expect(planRemoveRule({ device: 'veth0', id: 2 })).toEqual([
      fx('cmd-filter-del-2').argv,
      fx('cmd-class-del-2').argv,
    ]);
    for (const name of [
      'cmd-root-replace',
      'cmd-class-add-1',
      'cmd-filter-add-1',
      'cmd-filter-del-2',
      'cmd-class-del-2',
    ]) {
      expect(fx(name).code, name).toBe(0);
    }
  });

  it('create on a foreign htb is refused before any command', () => {
    const p = planCreateRule(rule({ device: 'veth2' }), queuesOf('qdisc-htb-foreign'));
    expect(p.ok).toBe(false);
  });

  it('rates: megabytes per second, 1 MB/s = 8 mbit, largest exact unit', () => {
    expect(rateArg(1)).toBe('8mbit');
    expect(rateArg(0.5)).toBe('4mbit');
    expect(rateArg(100)).toBe('800mbit');
    expect(rateArg(12500)).toBe('100000mbit');
    expect(rateArg(0.0015)).toBe('12kbit');
    expect(rateArg(0.001)).toBe('8kbit');
    expect(rateArg(1.2345678)).toBe('9876544bit'); // rounded to whole bytes/s: 1234568 B/s
  });

  it('burst: 10 ms of the rate, at least 16 KiB', () => {
    expect(burstBytes(1)).toBe(16384);
    expect(burstBytes(2.5)).toBe(25000);
    expect(burstBytes(100)).toBe(1_000_000);
    expect(burstBytes(0.001)).toBe(16384);
  });

  it('ids map to hex class ids and u32 items', () => {
    expect(classIdFor(1)).toBe('1:1');
    expect(classIdFor(16)).toBe('1:10');
    expect(filterHandleFor(255)).toBe('800::ff');
  });

  describe('refuses operands tc could misread (no `--` in tc)', () => {
    it.each([
      ['device', { device: '-j' }],
      ['device', { device: '' }],
      ['device', { device: 'eth0 root' }],
      ['device', { device: 'a/b' }],
      ['device', { device: 'eth:0' }],
      ['device', { device: '.' }],
      ['device', { device: 'averyveryverylong' }],
      ['ip', { ip: '10.0.0' }],
      ['ip', { ip: '010.0.0.1' }],
      ['ip', { ip: '10.0.0.256' }],
      ['ip', { ip: '10.0.0.1/32' }],
      ['ip', { ip: '::1' }],
      ['ip', { ip: '0.0.0.0' }],
      ['ip', { ip: ' 10.0.0.1' }],
      ['rate', { rate: 0 }],
      ['rate', { rate: -1 }],
      ['rate', { rate: 0.0009 }],
      ['rate', { rate: Number.NaN }],
      ['rate', { rate: Number.POSITIVE_INFINITY }],
      ['rate', { rate: 100_001 }],
      ['rule id', { id: 0 }],
      ['rule id', { id: 4096 }],
      ['rule id', { id: 1.5 }],
    ] as [string, Partial<StoredRule>][])('%s %j', (what, over) => {
      expect(() => planAddRule(rule(over))).toThrow(TrafficPlanError);
      expect(() => planAddRule(rule(over))).toThrow(new RegExp(`^${what}: `));
    });

    it('in every plan function', () => {
      expect(() => planRemoveRule({ device: '-x', id: 1 })).toThrow(TrafficPlanError);
      expect(() => planEnsureRoot('-x', [])).toThrow(TrafficPlanError);
      expect(() => showQdiscArgv('--help')).toThrow(TrafficPlanError);
      expect(() => planRemoveRoot('')).toThrow(TrafficPlanError);
    });
  });
});

describe('ids', () => {
  const rules = [rule({ name: 'a', id: 1 }), rule({ name: 'b', id: 2 }), rule({ name: 'c', id: 3 })];

  it('sentinel first, then one id per rule, parallel to the rules', () => {
    expect(idsFromRules(rules)).toEqual(['0', '1', '2', '3']);
    expect(idList.parse(idsFromRules(rules))).toEqual(['0', '1', '2', '3']);
    expect(idsFromRules([])).toEqual(['0']);
  });

  it('removing a rule leaves the others ids alone', () => {
    expect(removeId(['0', '1', '2', '3'], 2)).toEqual(['0', '1', '3']);
    expect(idsFromRules(rules.filter((r) => r.name !== 'b'))).toEqual(['0', '1', '3']);
  });

  it('the sentinel cannot be removed; unknown ids are an error', () => {
    expect(() => removeId(['0', '1'], 0)).toThrow(/reserved id cannot be removed/);
    expect(() => removeId(['0', '1'], 5)).toThrow(/id 5 is not in use/);
  });

  it('next free id: smallest gap, never 0, also avoiding what tc already has', () => {
    expect(nextFreeId(['0'])).toBe(1);
    expect(nextFreeId(['0', '1', '3'])).toBe(2);
    expect(nextFreeId(['0', '1', '2'])).toBe(3);
    expect(nextFreeId(['0', '1', '3'], [2, 4])).toBe(5);
    const onDevice = idsInUseOnDevice(
      parseTcClass(fx('class-two-rules').stdout),
      parseTcFilter(fx('filter-two-rules').stdout),
    );
    expect(onDevice.sort()).toEqual([1, 2]);
    expect(nextFreeId(['0'], onDevice)).toBe(3);
    // foreign-looking objects (other majors, other tables) do not reserve ids
    expect(
      idsInUseOnDevice(
        [{ kind: 'htb', classid: '2:5', parent: null }],
        [{ parent: '1:', protocol: 'ip', pref: 2, kind: 'u32', handle: '801::7', matches: [] }],
      ),
    ).toEqual([]);
  });

  it('all 4095 taken is an error', () => {
    const full = ['0', ...Array.from({ length: 4095 }, (_, i) => String(i + 1))];
    expect(() => nextFreeId(full)).toThrow(/all 4095 traffic control ids are in use/);
  });

  it('the listing refuses an ids list without the sentinel, or with duplicates', () => {
    expect(idList.safeParse(['1', '2']).success).toBe(false);
    expect(idList.safeParse([]).success).toBe(false);
    expect(idList.safeParse(['0', '1', '1']).success).toBe(false);
    expect(idList.safeParse(['0', '4096']).success).toBe(false);
    expect(idList.safeParse(['0', '01']).success).toBe(false);
  });
});

describe('schemas', () => {
  it('create body: the spec fields, validated like the plan', () => {
    expect(createRuleBody.parse({ name: 'backup', device: 'eth1', ip: '10.0.0.5', rate: 12.5 })).toEqual({
      name: 'backup',
      device: 'eth1',
      ip: '10.0.0.5',
      rate: 12.5,
    });
    // a numeric string is the same rate (issue 12 item 15); other text and lo are refused
    expect(createRuleBody.parse({ name: 'backup', device: 'eth1', ip: '10.0.0.5', rate: '12' }).rate).toBe(12);
    expect(createRuleBody.safeParse({ name: 'backup', device: 'eth1', ip: '10.0.0.5', rate: '12 MB' }).success).toBe(
      false,
    );
    expect(createRuleBody.safeParse({ name: 'backup', device: 'lo', ip: '10.0.0.5', rate: 1 }).success).toBe(false);
    expect(createRuleBody.safeParse({ name: '../x', device: 'eth1', ip: '10.0.0.5', rate: 1 }).success).toBe(false);
    expect(createRuleBody.safeParse({ name: 'a', device: 'eth1', ip: '10.0.0.5', rate: 1, extra: 1 }).success).toBe(
      false,
    );
  });

  it('a listing built from the recorded state validates', () => {
    const queue = queuesOf('qdisc-htb-ours');
    const listing = {
      devices: {
        veth0: {
          queue,
          class: parseTcClass(fx('class-two-rules').stdout),
          filter: parseTcFilter(fx('filter-two-rules').stdout),
        },
      },
      rules: [
        {
          name: 'backup-target',
          ip: '10.213.77.2',
          rate: 1,
          qtype: 'htb',
          handler: 1,
          device: 'veth0',
          owner: 'root',
          refcnt: '3',
          queue_details: queue[0]!.details!,
        },
      ],
      ids: ['0', '1'],
    };
    expect(trafficListing.parse(listing)).toEqual(listing);
  });
});
