/**
 * The start-up reconcile (runtime/areas/traffic.ts) on a test host with the replay back end:
 * when it runs, the argv it runs, what it logs, and that it never throws. The live version (a
 * real host restart in a namespace) is in test/system/traffic-routes.test.ts.
 *
 * Also: the demo appliance's fixtures (fixtures/demo/traffic) answer GET /network/traffic/control.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { join } from 'node:path';
import { loadFixtureDir, readFixture, type Fixture } from '../../runtime/system/fixture-file';
import { fixture, makeTestHost, repo, type TestHost } from '../helpers/host';
import type { TrafficSettings } from '../../handlers/traffic/contract';
import { reconcileTrafficOnStart } from '../../runtime/areas/traffic';
import list from '../../handlers/traffic/routes/control-list';
import type { HostConfig } from '../../runtime/config';
import { defaultConfig } from '../../runtime/config';
import type { TrafficListing } from '../../handlers/traffic/responses';

const TC = '/usr/sbin/tc';
const fx = (name: string): Fixture => ({
  ...readFixture(join(repo, 'fixtures', 'tc', `${name}.yaml`)),
  scenario: undefined,
  once: false,
});
const fresh = () => [fx('qdisc-noqueue-veth'), fx('class-empty'), fx('filter-empty')];

let t: TestHost;
afterEach(async () => {
  await t?.close();
});

async function host(
  fixtures: Fixture[],
  settings: Record<string, unknown>,
): Promise<{ lines: string[]; run: () => ReturnType<typeof reconcileTrafficOnStart> }> {
  t = await makeTestHost({ routes: [list], fixtures, config: { settings } as Partial<HostConfig> });
  const lines: string[] = [];
  return {
    lines,
    run: () =>
      reconcileTrafficOnStart({ ...t.host, settings: t.host.vars.settings.traffic as TrafficSettings }, (l) =>
        lines.push(l),
      ),
  };
}
function store(name: string, id: number, ip: string, rate: number, device = 'veth0'): void {
  t.host.db
    .prepare('INSERT INTO traffic_rules (name, id, device, ip, rate, created_at) VALUES (?, ?, ?, ?, ?, ?)')
    .run(name, id, device, ip, rate, id);
}
const calls = () => t.replay!.calls.map((c) => c.argv);

describe('start-up reconcile', () => {
  it('does not run in replay mode unless the config opts in', async () => {
    const h = await host([], {});
    store('backup-target', 1, '10.213.77.2', 1);
    expect(await h.run()).toEqual({
      ran: false,
      reason: 'replay mode (set settings.traffic.reconcileOnStart: true when the fixtures cover it)',
    });
    expect(calls()).toEqual([]);
    expect(h.lines).toEqual([
      'traffic: start-up reconcile not run: replay mode (set settings.traffic.reconcileOnStart: true when the fixtures cover it)',
    ]);
  });

  it('after a reboot: re-applies root, classes, filters for the stored rules and logs each', async () => {
    const h = await host(
      [
        ...fresh(),
        fx('cmd-root-replace'),
        fx('routes/cmd-class-replace-1'),
        fx('routes/cmd-class-replace-2'),
        fx('routes/cmd-filter-replace-1'),
        fx('routes/cmd-filter-replace-2'),
      ],
      { traffic: { reconcileOnStart: true } },
    );
    store('backup-target', 1, '10.213.77.2', 1);
    store('replica', 2, '10.213.77.3', 2.5);
    const r = await h.run();
    expect(r).toMatchObject({
      ran: true,
      rules: 2,
      report: { failed: [], skipped: [], stale: [], touched: ['veth0'] },
    });
    const mutating = [
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
    ];
    // only the devices with rules are read
    expect(calls()).toEqual([
      [TC, '-j', 'qdisc', 'show', 'dev', 'veth0'],
      [TC, 'class', 'show', 'dev', 'veth0'],
      [TC, '-j', 'filter', 'show', 'dev', 'veth0'],
      ...mutating,
    ]);
    expect(h.lines).toEqual([
      ...mutating.map((a) => `traffic: re-applied: ${a.join(' ')}`),
      'traffic: start-up reconcile done: 2 stored rule(s), 5 command(s) re-applied, 0 failed, 0 rule(s) skipped',
    ]);
    // the audit log names the start-up task as the requester
    const audited = t.host.db
      .prepare("SELECT COUNT(*) AS n FROM audit_log WHERE request_id = 'startup-traffic'")
      .get() as { n: number };
    expect(audited.n).toBe(8);
  });

  it('a device that is gone and a foreign root: those rules are skipped with the reason', async () => {
    const h = await host(
      [
        fx('qdisc-missing-device'),
        fx('routes/class-missing-device'),
        fx('routes/filter-missing-device'),
        fx('qdisc-htb-foreign'),
        fx('class-foreign'),
        fx('filter-foreign-two-matches'),
      ],
      { traffic: { reconcileOnStart: true } },
    );
    store('gone', 1, '10.0.0.1', 1, 'nosuch0');
    store('blocked', 2, '10.0.0.2', 1, 'veth2');
    const r = await h.run();
    expect(r).toMatchObject({ ran: true, rules: 2, report: { applied: [], failed: [] } });
    expect(h.lines).toEqual([
      'traffic: skipped rule gone on nosuch0: device nosuch0 not found',
      'traffic: skipped rule blocked on veth2: device veth2 already has an htb root qdisc (handle 1:, default 0x30) that Ballast did not create; refusing to replace it (remove it by hand if it is not needed)',
      'traffic: start-up reconcile done: 2 stored rule(s), 0 command(s) re-applied, 0 failed, 2 rule(s) skipped',
    ]);
  });

  it('never throws: a failing tc command and an unreadable device are logged', async () => {
    const denied = fixture(
      [TC, 'qdisc', 'replace', 'dev', 'veth0', 'root', 'handle', '1:', 'htb', 'default', 'ba11'],
      '',
      { code: 2, stderr: 'RTNETLINK answers: Operation not permitted\n' },
    );
    let h = await host([...fresh(), denied], { traffic: { reconcileOnStart: true } });
    store('backup-target', 1, '10.213.77.2', 1);
    const r = await h.run();
    expect(r).toMatchObject({
      ran: true,
      report: {
        applied: [],
        failed: [{ device: 'veth0', error: 'tc failed (exit 2): RTNETLINK answers: Operation not permitted' }],
      },
    });
    expect(h.lines.at(-1)).toBe(
      'traffic: start-up reconcile done: 1 stored rule(s), 0 command(s) re-applied, 1 failed, 0 rule(s) skipped',
    );
    await t.close();

    // no fixtures at all: the first read is refused by the back end
    h = await host([], { traffic: { reconcileOnStart: true } });
    store('backup-target', 1, '10.213.77.2', 1);
    const r2 = await h.run();
    expect(r2).toMatchObject({ ran: true, error: expect.stringMatching(/no recorded fixture/) });
    expect(h.lines).toEqual([
      expect.stringMatching(/^traffic: start-up reconcile failed: replay: no recorded fixture for argv/),
    ]);
  });

  it('no stored rules: no command at all', async () => {
    const h = await host([], { traffic: { reconcileOnStart: true } });
    expect(await h.run()).toMatchObject({ ran: true, rules: 0 });
    expect(calls()).toEqual([]);
  });

  it('settings.traffic.reconcileOnStart: false turns it off even in live mode', async () => {
    const config = defaultConfig();
    const lines: string[] = [];
    const r = await reconcileTrafficOnStart(
      {
        config,
        settings: { reconcileOnStart: false },
        env: { SYSTEM: { fetch: () => Promise.reject(new Error('must not be called')) }, VARS: null as never },
        vars: null as never,
      },
      (l) => lines.push(l),
    );
    expect(r).toEqual({ ran: false, reason: 'settings.traffic.reconcileOnStart is false' });
  });
});

describe('the demo appliance', () => {
  it('GET /network/traffic/control answers from fixtures/demo/traffic: eno1 (mq) and eno2, nothing shaped', async () => {
    t = await makeTestHost({ routes: [list], fixtures: loadFixtureDir(join(repo, 'fixtures', 'demo', 'traffic')) });
    const r = await t.call<TrafficListing>('GET', '/api/v2/network/traffic/control');
    expect(r.status).toBe(200);
    expect(Object.keys(r.json.devices)).toEqual(['eno1', 'eno2']);
    const eno1 = r.json.devices.eno1;
    expect(eno1.queue[0]).toEqual({ qtype: 'mq', handler: 0, device: 'eno1', owner: 'root' });
    expect(eno1.queue.slice(1).map((q: { qtype: string; owner: string }) => [q.qtype, q.owner])).toEqual(
      Array(4).fill(['pfifo_fast', 'parent']),
    );
    expect(eno1.class.map((c: { kind: string; classid: string }) => `${c.kind} ${c.classid}`)).toEqual([
      'mq :1',
      'mq :2',
      'mq :3',
      'mq :4',
    ]);
    expect(r.json.devices.eno2).toEqual({
      queue: [
        {
          qtype: 'pfifo_fast',
          handler: 0,
          device: 'eno2',
          owner: 'root',
          refcnt: '2',
          details: { bands: 3, priomap: [1, 2, 2, 2, 1, 2, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1] },
        },
      ],
      class: [],
      filter: [],
    });
    expect(r.json.rules).toEqual([]);
    expect(r.json.ids).toEqual(['0']);
  });
});
