/**
 * The traffic-control routes with the replay back end and a real SQLite DB: the exact argv each
 * route runs (replayed from captures recorded with real tc in a namespace, fixtures/tc and
 * fixtures/tc/routes), the answers, the DB rows and the events.
 *
 * A fixture's `once` makes a before/after sequence: the "before" read answers once, then the
 * sticky "after" read takes over, as tc's state changed in between.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { join } from 'node:path';
import { readFixture, type Fixture } from '../../runtime/system/fixture-file';
import { fixture, makeTestHost, repo, type TestHost } from '../helpers/host';
import list from '../../handlers/traffic/routes/control-list';
import create from '../../handlers/traffic/routes/control-create';
import destroy from '../../handlers/traffic/routes/control-destroy';
import { reserveRule } from '../../handlers/traffic/store';
import { tcArgv } from '../../handlers/traffic/state';
import { buildListing } from '../../handlers/traffic/listing';
import type { Vars } from '../../handlers/core/vars';
import type { D1Database, D1PreparedStatement } from '../../handlers/core/bindings';
import type { TrafficListing } from '../../handlers/traffic/responses';
import { errorOf } from '../helpers/answers';

const TC = '/usr/sbin/tc';
const BASE = '/api/v2/network/traffic/control';

/** A recorded fixture, as a plain (sticky) one or a `once` one; scenario marks dropped. */
function fx(name: string, once = false): Fixture {
  const f = readFixture(join(repo, 'fixtures', 'tc', `${name}.yaml`));
  return { ...f, scenario: undefined, once };
}
const reads = (qdisc: string, cls: string, filter: string, once = false) => [
  fx(qdisc, once),
  fx(cls, once),
  fx(filter, once),
];
const fresh = (once = false) => reads('qdisc-noqueue-veth', 'class-empty', 'filter-empty', once);
const oneRule = (once = false) => reads('qdisc-htb-ours', 'class-one-rule', 'filter-one-rule', once);
const twoRules = (once = false) => reads('qdisc-htb-ours', 'class-two-rules', 'filter-two-rules', once);
const neverUp = () => reads('routes/qdisc-never-up', 'routes/class-never-up', 'routes/filter-never-up');
const links = () => fx('routes/ip-link-show');

// The rules the captures were recorded with (test/tools/traffic/record-*.ts).
const rule1 = { name: 'backup-target', device: 'veth0', ip: '10.213.77.2', rate: 1 };
const rule2 = { name: 'replica', device: 'veth0', ip: '10.213.77.3', rate: 2.5 };

const readArgv = (dev: string) => [
  [TC, '-j', 'qdisc', 'show', 'dev', dev],
  [TC, 'class', 'show', 'dev', dev],
  [TC, '-j', 'filter', 'show', 'dev', dev],
];
const ROOT = [TC, 'qdisc', 'replace', 'dev', 'veth0', 'root', 'handle', '1:', 'htb', 'default', 'ba11'];
const CLASS1 = [
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
];
const FILTER1 = [
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
];
const CLASS2 = [
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
];
const FILTER2 = [
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
];
const FILTER_DEL1 = [
  TC,
  'filter',
  'del',
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
];
const CLASS_DEL1 = [TC, 'class', 'del', 'dev', 'veth0', 'parent', '1:', 'classid', '1:1'];
const ROOT_DEL = [TC, 'qdisc', 'del', 'dev', 'veth0', 'root'];

let t: TestHost;
afterEach(async () => {
  await t?.close();
});

async function host(fixtures: Fixture[]): Promise<TestHost> {
  t = await makeTestHost({ routes: [list, create, destroy], fixtures });
  return t;
}
const calls = () => t.replay!.calls.map((c) => c.argv);
const rows = () => t.host.db.prepare('SELECT name, id, device, ip, rate FROM traffic_rules ORDER BY id').all();
const events = () =>
  (t.host.db.prepare('SELECT kind, data FROM events ORDER BY seq').all() as { kind: string; data: string }[]).map(
    (e) => ({ kind: e.kind, data: JSON.parse(e.data) as unknown }),
  );
function store(rule: typeof rule1, id: number, createdAt = id): void {
  t.host.db
    .prepare('INSERT INTO traffic_rules (name, id, device, ip, rate, created_at) VALUES (?, ?, ?, ?, ?, ?)')
    .run(rule.name, id, rule.device, rule.ip, rule.rate, createdAt);
}

const htbOurs = {
  qtype: 'htb',
  handler: 1,
  device: 'veth0',
  owner: 'root',
  refcnt: '3',
  queue_details: { r2q: 10, default: '0xba11', direct_packets_stat: 3, direct_qlen: 1000 },
};

describe('GET /network/traffic/control', () => {
  it('a fresh box: every non-loopback device with its tc state, no rules, only the sentinel id', async () => {
    await host([links(), ...fresh(), ...neverUp()]);
    const r = await t.call<TrafficListing>('GET', BASE);
    expect(r.status).toBe(200);
    expect(r.json).toEqual({
      devices: {
        veth0: {
          queue: [{ qtype: 'noqueue', handler: 0, device: 'veth0', owner: 'root', refcnt: '2' }],
          class: [],
          filter: [],
        },
        // never up: tc lists not even the builtin noop root, and the listing does not invent one
        veth4: { queue: [], class: [], filter: [] },
      },
      rules: [],
      ids: ['0'],
    });
    expect(calls()).toEqual([['/usr/sbin/ip', '-j', 'link', 'show'], ...readArgv('veth0'), ...readArgv('veth4')]);
  });

  it('rules under control: one entry per rule (its htb root), ids parallel after the sentinel', async () => {
    await host([links(), ...twoRules(), ...neverUp()]);
    store(rule2, 2, 100);
    store(rule1, 1, 200); // created later: listed later, whatever its id
    const r = await t.call<TrafficListing>('GET', BASE);
    expect(r.status).toBe(200);
    expect(r.json.rules).toEqual([
      // ip and rate (MB/s, as created): what each rule limits (issue 12 item 13)
      { name: 'replica', ip: rule2.ip, rate: 2.5, ...htbOurs },
      { name: 'backup-target', ip: rule1.ip, rate: 1, ...htbOurs },
    ]);
    expect(r.json.ids).toEqual(['0', '2', '1']);
    expect(r.json.devices.veth0.class.map((c) => [c.classid, c.rate])).toEqual([
      ['1:1', 8_000_000],
      ['1:2', 20_000_000],
    ]);
    expect(r.json.devices.veth0.filter.map((f) => [f.handle, f.flowid, f.matches[0]!.address])).toEqual([
      ['800::1', '1:1', '10.213.77.2'],
      ['800::2', '1:2', '10.213.77.3'],
    ]);
    // nothing drifted: reads only
    expect(calls()).toHaveLength(7);
  });

  it('re-applies a rule removed by hand, then shows the repaired state', async () => {
    // before: rule 2's class and filter are gone; after the repair tc shows both rules
    await host([
      links(),
      ...oneRule(true),
      ...twoRules(),
      ...neverUp(),
      fx('routes/cmd-class-replace-2'),
      fx('routes/cmd-filter-replace-2'),
    ]);
    store(rule1, 1);
    store(rule2, 2);
    const r = await t.call<TrafficListing>('GET', BASE);
    expect(r.status).toBe(200);
    expect(calls()).toEqual([
      ['/usr/sbin/ip', '-j', 'link', 'show'],
      ...readArgv('veth0'),
      ...readArgv('veth4'),
      CLASS2,
      FILTER2,
      ...readArgv('veth0'),
    ]);
    expect(r.json.devices.veth0.class.map((c: { classid: string }) => c.classid)).toEqual(['1:1', '1:2']);
    expect(r.json.ids).toEqual(['0', '1', '2']);
  });

  it('a read-only caller sees the drift as it is and never causes a tc write', async () => {
    await host([links(), ...oneRule(), ...neverUp()]);
    store(rule1, 1);
    store(rule2, 2);
    const r = await t.call<TrafficListing>('GET', BASE, { token: await t.token(['network:read']) });
    expect(r.status).toBe(200);
    expect(calls()).toEqual([['/usr/sbin/ip', '-j', 'link', 'show'], ...readArgv('veth0'), ...readArgv('veth4')]);
    expect(r.json.devices.veth0.class.map((c: { classid: string }) => c.classid)).toEqual(['1:1']);
    expect(r.json.ids).toEqual(['0', '1', '2']);
  });

  it('a rule whose device is gone is listed (qtype none) and not touched', async () => {
    await host([links(), ...fresh(), ...neverUp()]);
    store({ ...rule1, device: 'eth9' }, 1);
    const r = await t.call<TrafficListing>('GET', BASE);
    expect(r.status).toBe(200);
    expect(r.json.rules).toEqual([
      {
        name: 'backup-target',
        ip: rule1.ip,
        rate: 1,
        qtype: 'none',
        handler: 0,
        device: 'eth9',
        owner: 'root',
        refcnt: '0',
        queue_details: {},
      },
    ]);
    expect(Object.keys(r.json.devices)).toEqual(['veth0', 'veth4']);
    expect(calls()).toHaveLength(7);
  });

  it('a failed repair does not fail the listing: it shows the root that is there', async () => {
    const failing = fixture(ROOT, '', { code: 2, stderr: 'RTNETLINK answers: Operation not permitted\n' });
    await host([links(), ...fresh(), ...neverUp(), failing]);
    store(rule1, 1);
    const r = await t.call<TrafficListing>('GET', BASE);
    expect(r.status).toBe(200);
    expect(r.json.rules[0]).toMatchObject({ name: 'backup-target', qtype: 'noqueue', handler: 0 });
    // stopped at the failing root (no class/filter tried), then read the device again to show it
    expect(calls().slice(7)).toEqual([ROOT, ...readArgv('veth0')]);
  });

  it('needs network:read', async () => {
    await host([links(), ...fresh(), ...neverUp()]);
    expect((await t.call<TrafficListing>('GET', BASE, { token: await t.token(['kerberos:read']) })).status).toBe(403);
    expect((await t.call<TrafficListing>('GET', BASE, { token: await t.token(['network:read']) })).status).toBe(200);
  });
});

describe('POST /network/traffic/control/create', () => {
  it('on a fresh device: our htb root, the class, the filter; stores the rule and sends the event', async () => {
    await host([
      ...fresh(),
      fx('cmd-root-replace'),
      fx('routes/cmd-class-replace-1'),
      fx('routes/cmd-filter-replace-1'),
    ]);
    const r = await t.call('POST', `${BASE}/create`, { body: rule1 });
    expect(r.status).toBe(200);
    expect(r.json).toEqual({ error: null, ...rule1 });
    expect(calls()).toEqual([...readArgv('veth0'), ROOT, CLASS1, FILTER1]);
    expect(rows()).toEqual([{ ...rule1, id: 1 }]);
    expect(events()).toEqual([{ kind: 'traffic.rule.created', data: { ...rule1, id: 1 } }]);
  });

  it('a second rule on a device already under control: no root command, the next id', async () => {
    await host([...oneRule(), fx('routes/cmd-class-replace-2'), fx('routes/cmd-filter-replace-2')]);
    store(rule1, 1);
    const r = await t.call('POST', `${BASE}/create`, { body: rule2 });
    expect(r.status).toBe(200);
    expect(calls()).toEqual([...readArgv('veth0'), CLASS2, FILTER2]);
    expect(rows()).toEqual([
      { ...rule1, id: 1 },
      { ...rule2, id: 2 },
    ]);
  });

  it('an id still used in tc (a leftover class) is skipped', async () => {
    // tc shows class/filter 1 (e.g. left by hand) but the DB has no rule: the new rule gets 2
    await host([...oneRule(), fx('routes/cmd-class-replace-2'), fx('routes/cmd-filter-replace-2')]);
    const r = await t.call('POST', `${BASE}/create`, { body: rule2 });
    expect(r.status).toBe(200);
    expect(rows()).toEqual([{ ...rule2, id: 2 }]);
  });

  it('rate as a numeric string is the same rate (MB/s) (issue 12 item 15)', async () => {
    await host([...oneRule(), fx('routes/cmd-class-replace-2'), fx('routes/cmd-filter-replace-2')]);
    const r = await t.call('POST', `${BASE}/create`, { body: { ...rule2, rate: '2.5' } });
    expect(r.status, r.text).toBe(200);
    expect((r.json as { rate: number }).rate).toBe(2.5);
    expect(rows()).toEqual([{ ...rule2, id: 2 }]);
  });

  it('the 400s say the unit, and that lo cannot carry a rule (issue 12 items 14, 15)', async () => {
    await host([]);
    const issuesOf = (r: { json: unknown }) =>
      (r.json as { error: { issues: { path: string; message: string }[] } }).error.issues;
    const text = await t.call('POST', `${BASE}/create`, { body: { ...rule1, rate: 'fast' } });
    expect(issuesOf(text)).toEqual([
      {
        path: 'body.rate',
        message:
          'rate is in megabytes per second (MB/s, 1 MB = 10^6 bytes): a number or a numeric string, e.g. 12.5 or "12.5"',
      },
    ]);
    const zero = await t.call('POST', `${BASE}/create`, { body: { ...rule1, rate: 0 } });
    expect(issuesOf(zero)).toEqual([
      { path: 'body.rate', message: 'rate must be at least 0.001 MB/s (megabytes per second; 1 kB/s)' },
    ]);
    const lo = await t.call('POST', `${BASE}/create`, { body: { ...rule1, device: 'lo' } });
    expect([lo.status, issuesOf(lo)]).toEqual([
      400,
      [{ path: 'body.device', message: 'lo (the loopback) cannot carry a traffic rule: name a network interface' }],
    ]);
    expect(calls()).toEqual([]);
    expect(rows()).toEqual([]);
  });

  it.each([
    ['ip', { ip: '10.213.77.256' }, 'body.ip'],
    ['ip (IPv6)', { ip: 'fe80::1' }, 'body.ip'],
    ['rate 0', { rate: 0 }, 'body.rate'],
    ['rate negative', { rate: -1 }, 'body.rate'],
    ['rate as non-numeric text', { rate: 'fast' }, 'body.rate'],
    ['rate as text with a unit', { rate: '1MB' }, 'body.rate'],
    ['rate "0"', { rate: '0' }, 'body.rate'],
    ['device lo', { device: 'lo' }, 'body.device'],
    ['device', { device: '-j' }, 'body.device'],
    ['name', { name: '../x' }, 'body.name'],
    ['missing name', { name: undefined }, 'body.name'],
  ])('400 on a bad %s, before any command', async (_what, over, path) => {
    await host([]);
    const r = await t.call('POST', `${BASE}/create`, { body: { ...rule1, ...over } });
    expect(r.status).toBe(400);
    expect(errorOf(r).code).toBe('validation_failed');
    expect(errorOf(r).issues!.map((i: { path: string }) => i.path)).toContain(path);
    expect(calls()).toEqual([]);
    expect(rows()).toEqual([]);
  });

  it('409 on a duplicate name, and on a second rule for the same ip on the device', async () => {
    await host([]);
    store(rule1, 1);
    let r = await t.call('POST', `${BASE}/create`, { body: { ...rule2, name: rule1.name } });
    expect(r.status).toBe(409);
    expect(errorOf(r).message).toBe('a traffic rule named backup-target already exists');
    r = await t.call('POST', `${BASE}/create`, { body: { ...rule1, name: 'other' } });
    expect(r.status).toBe(409);
    expect(errorOf(r).message).toBe('traffic to 10.213.77.2 on veth0 is already limited by rule backup-target');
    expect(calls()).toEqual([]);
  });

  it('400 on body.device when the device does not exist', async () => {
    await host([fx('qdisc-missing-device'), fx('routes/class-missing-device'), fx('routes/filter-missing-device')]);
    const r = await t.call('POST', `${BASE}/create`, { body: { ...rule1, device: 'nosuch0' } });
    expect(r.status).toBe(400);
    expect(errorOf(r).issues).toEqual([{ path: 'body.device', message: 'device nosuch0 does not exist' }]);
    expect(rows()).toEqual([]);
  });

  it('409 on a root qdisc someone else set up: a foreign htb, or any non-default root', async () => {
    await host([...reads('qdisc-htb-foreign', 'class-foreign', 'filter-foreign-two-matches')]);
    let r = await t.call('POST', `${BASE}/create`, { body: { ...rule1, device: 'veth2' } });
    expect(r.status).toBe(409);
    expect(errorOf(r).message).toBe(
      'device veth2 already has an htb root qdisc (handle 1:, default 0x30) that Ballast did not create; refusing to replace it (remove it by hand if it is not needed)',
    );
    await t.close();
    await host([fx('routes/qdisc-pfifo-admin'), fx('class-empty'), fx('filter-empty')]);
    r = await t.call('POST', `${BASE}/create`, { body: rule1 });
    expect(r.status).toBe(409);
    expect(errorOf(r).message).toMatch(
      /^device veth0 has a pfifo root qdisc \(handle 800[0-9a-f]:\) that an administrator set up/,
    );
    expect(calls().filter((a) => !a.includes('show'))).toEqual([]);
    expect(rows()).toEqual([]);
  });

  it('all or nothing: the filter fails after the class was added -> class and our root removed, no row, no event', async () => {
    const failing = fixture(FILTER1, '', {
      code: 2,
      stderr: 'RTNETLINK answers: Invalid argument\nWe have an error talking to the kernel\n',
    });
    await host([
      ...fresh(),
      fx('cmd-root-replace'),
      fx('routes/cmd-class-replace-1'),
      failing,
      fx('routes/cmd-filter-del-1-no-chain'),
      fx('routes/cmd-class-del-1'),
      fx('routes/cmd-root-del'),
    ]);
    const r = await t.call('POST', `${BASE}/create`, { body: rule1 });
    expect(r.status).toBe(502);
    expect(errorOf(r).code).toBe('command_failed');
    expect(errorOf(r).message).toBe('tc failed (exit 2): RTNETLINK answers: Invalid argument');
    expect(errorOf(r).details?.command).toEqual(FILTER1);
    expect(calls()).toEqual([...readArgv('veth0'), ROOT, CLASS1, FILTER1, FILTER_DEL1, CLASS_DEL1, ROOT_DEL]);
    expect(rows()).toEqual([]);
    expect(events()).toEqual([]);
  });

  it('all or nothing: the class fails on a device already ours -> the root stays (other rules use it)', async () => {
    const failing = fixture(CLASS2, '', { code: 2, stderr: 'Error: failed to create class\n' });
    const filterDel2 = fx('cmd-filter-del-2-missing'); // "Specified filter handle not found"
    const classDel2 = fixture([...CLASS_DEL1.slice(0, 8), '1:2'], '', {
      code: 2,
      stderr: 'RTNETLINK answers: No such file or directory\n',
    });
    await host([...oneRule(), failing, filterDel2, classDel2]);
    store(rule1, 1);
    const r = await t.call('POST', `${BASE}/create`, { body: rule2 });
    expect(r.status).toBe(502);
    expect(errorOf(r).details?.command).toEqual(CLASS2);
    expect(calls().slice(3)).toEqual([CLASS2, filterDel2.argv, classDel2.argv]);
    expect(rows()).toEqual([{ ...rule1, id: 1 }]);
  });

  it('a DB failure while reserving the id runs no tc command that changes anything', async () => {
    await host([...fresh()]);
    const real = t.host.env.DB!;
    t.host.env.DB = {
      ...real,
      prepare: (sql: string) => (sql.startsWith('INSERT INTO traffic_rules') ? failingStatement() : real.prepare(sql)),
      batch: (s: D1PreparedStatement[]) => real.batch(s),
      exec: (s: string) => real.exec(s),
    };
    const r = await t.call('POST', `${BASE}/create`, { body: rule1 });
    expect(r.status).toBe(500);
    expect(calls()).toEqual(readArgv('veth0'));
    t.host.env.DB = real;
    expect(rows()).toEqual([]);
  });

  it('concurrent creates on one fresh device: distinct ids, one root, the loser of the root race carries on', async () => {
    await host([
      // both creates read the fresh device, then whoever looks again sees our root
      ...fresh(true),
      ...fresh(true),
      ...oneRule(),
      { ...fx('cmd-root-replace'), once: true },
      fx('routes/cmd-root-replace-ours'), // the second `replace` of our htb: "Change operation not supported"
      fx('routes/cmd-class-replace-1'),
      fx('routes/cmd-filter-replace-1'),
      fx('routes/cmd-class-replace-2'),
      fx('routes/cmd-filter-replace-2'),
    ]);
    // Warm the token check first (a 400 runs no command): its digest resolves on the thread pool,
    // and two cold checks racing would make which create reserves id 1 a matter of chance.
    expect((await t.call('POST', `${BASE}/create`, { body: {} })).status).toBe(400);
    const [a, b] = await Promise.all([
      t.call('POST', `${BASE}/create`, { body: rule1 }),
      t.call('POST', `${BASE}/create`, { body: rule2 }),
    ]);
    expect([a.status, b.status]).toEqual([200, 200]);
    const stored = rows() as { name: string; id: number }[];
    expect(stored.map((s) => s.id).sort()).toEqual([1, 2]);
    expect(new Set(stored.map((s) => s.name))).toEqual(new Set(['backup-target', 'replica']));
    expect(calls().filter((c) => c[2] === 'replace' && c[1] === 'qdisc')).toHaveLength(2);
    // the loser read the root again after htb refused its `replace`, found it ours, and went on
    expect(calls().filter((c) => c.join(' ') === readArgv('veth0')[0]!.join(' '))).toHaveLength(3);
    expect(events().map((e) => e.kind)).toEqual(['traffic.rule.created', 'traffic.rule.created']);
  });

  it('needs network:manage', async () => {
    await host([]);
    const r = await t.call('POST', `${BASE}/create`, { body: rule1, token: await t.token(['network:read']) });
    expect(r.status).toBe(403);
  });
});

function failingStatement(): D1PreparedStatement {
  const fail = () => Promise.reject(new Error('disk I/O error'));
  const s: D1PreparedStatement = { bind: () => s, first: fail, all: fail, run: fail, raw: fail };
  return s;
}

describe('reserveRule (id allocation)', () => {
  it('picks again when another create takes the id between its SELECT and its INSERT', async () => {
    await host([]);
    const real = t.host.env.DB!;
    let raced = false;
    const db: D1Database = {
      ...real,
      prepare(sql: string) {
        if (sql.startsWith('INSERT INTO traffic_rules') && !raced) {
          raced = true;
          store({ ...rule2, name: 'sneaky' }, 1); // a concurrent create wins id 1
        }
        return real.prepare(sql);
      },
      batch: (s) => real.batch(s),
      exec: (s) => real.exec(s),
    };
    expect(await reserveRule(db, rule1, [])).toBe(2);
    expect(rows()).toEqual([
      { ...rule2, name: 'sneaky', id: 1 },
      { ...rule1, id: 2 },
    ]);
  });

  it('avoids ids tc still shows; a duplicate name is a 409; all ids taken is a 409', async () => {
    await host([]);
    const db = t.host.env.DB!;
    expect(await reserveRule(db, rule1, [1, 2])).toBe(3);
    await expect(reserveRule(db, rule1, [])).rejects.toMatchObject({
      status: 409,
      message: 'a traffic rule named backup-target already exists',
    });
    await expect(
      reserveRule(
        db,
        rule2,
        Array.from({ length: 4095 }, (_, i) => i + 1),
      ),
    ).rejects.toMatchObject({ status: 409, message: 'all 4095 traffic control ids are in use' });
  });
});

describe('POST /network/traffic/control/:rule_name/destroy', () => {
  it('removes filter then class, frees the id; the other rule keeps its id; event sent', async () => {
    await host([
      fx('routes/cmd-filter-del-1'),
      fx('routes/cmd-class-del-1'),
      links(),
      ...reads('qdisc-htb-ours', 'class-one-rule', 'filter-one-rule'),
      ...neverUp(),
    ]);
    store(rule1, 1);
    store(rule2, 2);
    const r = await t.call('POST', `${BASE}/backup-target/destroy`, { body: { name: 'backup-target' } });
    expect(r.status).toBe(200);
    expect(r.json).toEqual({ id: 1 });
    expect(calls()).toEqual([FILTER_DEL1, CLASS_DEL1]);
    expect(rows()).toEqual([{ ...rule2, id: 2 }]);
    expect(events()).toEqual([{ kind: 'traffic.rule.destroyed', data: { ...rule1, id: 1 } }]);
  });

  it('the last rule of a device: our root goes too (the kernel default comes back)', async () => {
    await host([
      fx('routes/cmd-filter-del-1'),
      fx('routes/cmd-class-del-1'),
      fx('qdisc-htb-ours'),
      fx('routes/cmd-root-del'),
    ]);
    store(rule1, 1);
    const r = await t.call('POST', `${BASE}/backup-target/destroy`, { body: {} });
    expect(r.json).toEqual({ id: 1 });
    expect(calls()).toEqual([FILTER_DEL1, CLASS_DEL1, readArgv('veth0')[0], ROOT_DEL]);
  });

  it.each([
    ['removed by hand (root still ours)', 'routes/cmd-filter-del-1-no-chain', 'routes/cmd-class-del-1-missing'],
    ['lost with the root qdisc', 'routes/cmd-filter-del-1-no-root', 'routes/cmd-class-del-1-no-root'],
  ])('already gone (%s) counts as removed', async (_what, filterFx, classFx) => {
    await host([fx(filterFx), fx(classFx), fx('qdisc-noqueue-veth')]);
    store(rule1, 1);
    const r = await t.call('POST', `${BASE}/backup-target/destroy`);
    expect(r.status).toBe(200);
    expect(r.json).toEqual({ id: 1 });
    expect(rows()).toEqual([]);
    // the root is not ours any more: nothing deleted
    expect(calls()).toEqual([FILTER_DEL1, CLASS_DEL1, readArgv('veth0')[0]]);
  });

  it('a real tc failure is a 502 and the rule stays', async () => {
    await host([fx('routes/cmd-filter-del-1'), fx('cmd-class-del-1-in-use')]);
    store(rule1, 1);
    const r = await t.call('POST', `${BASE}/backup-target/destroy`);
    expect(r.status).toBe(502);
    expect(errorOf(r).message).toBe('tc failed (exit 2): Error: HTB class in use.');
    expect(errorOf(r).details?.command).toEqual(CLASS_DEL1);
    expect(rows()).toEqual([{ ...rule1, id: 1 }]);
    expect(events()).toEqual([]);
  });

  it('404 on an unknown rule; 400 when the body names another rule or has other keys', async () => {
    await host([]);
    store(rule1, 1);
    let r = await t.call('POST', `${BASE}/nope/destroy`);
    expect(r.status).toBe(404);
    expect(errorOf(r)).toMatchObject({ code: 'not_found', message: 'no traffic rule named nope' });
    r = await t.call('POST', `${BASE}/backup-target/destroy`, { body: { name: 'replica' } });
    expect(r.status).toBe(400);
    expect(errorOf(r).issues).toEqual([
      { path: 'body.name', message: 'body.name replica does not match the rule name backup-target in the URL' },
    ]);
    r = await t.call('POST', `${BASE}/backup-target/destroy`, { body: { name: 'backup-target', id: 1 } });
    expect(r.status).toBe(400);
    expect(calls()).toEqual([]);
    expect(rows()).toHaveLength(1);
  });

  it('needs network:manage', async () => {
    await host([]);
    store(rule1, 1);
    expect(
      (await t.call('POST', `${BASE}/backup-target/destroy`, { token: await t.token(['network:read']) })).status,
    ).toBe(403);
  });
});

describe('the tc binary', () => {
  it('plans speak /usr/sbin/tc (the recorded argv); commands run the configured vars.bin.tc', () => {
    const vars = (tc?: string): Vars => ({
      productName: 'B',
      hostId: 'h',
      paths: {},
      bin: tc ? { tc } : {},
      settings: {},
    });
    expect(tcArgv(vars('/sbin/tc'), FILTER_DEL1)).toEqual(['/sbin/tc', ...FILTER_DEL1.slice(1)]);
    // a tool the host does not configure is not on the allow-list: nothing guesses its path
    expect(() => tcArgv(vars(), FILTER_DEL1)).toThrow('no binary configured for tc');
    expect(tcArgv(vars('/sbin/tc'), ['/usr/sbin/ip', '-j', 'link', 'show'])).toEqual([
      '/usr/sbin/ip',
      '-j',
      'link',
      'show',
    ]);
  });
});

describe('buildListing', () => {
  it('a rule on a never-up device shows the hidden noop root; devices keep the given order and drop unreadable ones', () => {
    const rule = { ...rule1, device: 'veth4', id: 7 };
    const listing = buildListing(
      ['veth4', 'gone0'],
      { veth4: { queues: [], classes: [], filters: [] }, gone0: undefined },
      [rule],
    );
    expect(listing).toEqual({
      devices: { veth4: { queue: [], class: [], filter: [] } },
      rules: [
        {
          name: 'backup-target',
          ip: rule1.ip,
          rate: 1,
          qtype: 'noop',
          handler: 0,
          device: 'veth4',
          owner: 'root',
          refcnt: '1',
          queue_details: {},
        },
      ],
      ids: ['0', '7'],
    });
  });
});
