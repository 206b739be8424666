/**
 * The built traffic bundles (dist/app.mjs) inside workerd through Miniflare, where DB and EVENTS
 * cross a process boundary as Fetchers: the listing answers byte for byte as in-process, and a
 * create/destroy pair works through the DB-over-fetch binding (the id reservation reads
 * `meta.changes` of an INSERT ... ON CONFLICT DO NOTHING, so that must survive the trip).
 * Needs a built dist/ (npm test builds first).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { join } from 'node:path';
import { readFixture, type Fixture } from '../../runtime/system/fixture-file';
import { startIsolated, type Isolated } from '../../runtime/isolate';
import { distDir, makeTestHost, repo, type TestHost } from '../helpers/host';
import { jsonOf } from '../helpers/answers';

const fx = (name: string, once = false): Fixture => ({
  ...readFixture(join(repo, 'fixtures', 'tc', `${name}.yaml`)),
  scenario: undefined,
  once,
});

let t: TestHost;
let iso: Isolated;

beforeAll(async () => {
  t = await makeTestHost({
    fixtures: [
      fx('routes/ip-link-show'),
      // two listings before the create see the fresh device; after it, tc shows rule 1
      ...['qdisc-noqueue-veth', 'class-empty', 'filter-empty'].flatMap((n) => [fx(n, true), fx(n, true), fx(n, true)]),
      fx('qdisc-htb-ours'),
      fx('class-one-rule'),
      fx('filter-one-rule'),
      fx('routes/qdisc-never-up'),
      fx('routes/class-never-up'),
      fx('routes/filter-never-up'),
      fx('cmd-root-replace'),
      fx('routes/cmd-class-replace-1'),
      fx('routes/cmd-filter-replace-1'),
      fx('routes/cmd-filter-del-1'),
      fx('routes/cmd-class-del-1'),
      fx('routes/cmd-root-del'),
    ],
  });
  iso = await startIsolated(t.host, distDir);
}, 60_000);
afterAll(async () => {
  await iso?.close();
  await t?.close();
});

const req = (method: string, path: string, body?: unknown) =>
  new Request(`http://ballast.local/api/v2/network/traffic/control${path}`, {
    method,
    headers: { token: t.adminToken, 'x-request-id': 'traffic-edge-0001', 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });

describe('traffic routes in workerd', () => {
  it('GET answers exactly as the in-process host', async () => {
    const a = await t.host.app.fetch(req('GET', ''), t.host.env);
    const b = await iso.fetch(req('GET', ''));
    expect(b.status).toBe(200);
    expect(await b.text()).toBe(await a.text());
  });

  it('create then destroy through the fetch bindings', async () => {
    const body = { name: 'backup-target', device: 'veth0', ip: '10.213.77.2', rate: 1 };
    const c = await iso.fetch(req('POST', '/create', body));
    expect(c.status).toBe(200);
    expect(await jsonOf(c)).toEqual({ error: null, ...body });
    expect(t.host.db.prepare('SELECT name, id FROM traffic_rules').all()).toEqual([{ name: 'backup-target', id: 1 }]);
    const dup = await iso.fetch(req('POST', '/create', body));
    expect(dup.status).toBe(409);

    const d = await iso.fetch(req('POST', '/backup-target/destroy', { name: 'backup-target' }));
    expect(d.status).toBe(200);
    expect(await jsonOf(d)).toEqual({ id: 1 });
    const kinds = t.host.db.prepare('SELECT kind FROM events ORDER BY seq').all();
    expect(kinds).toEqual([{ kind: 'traffic.rule.created' }, { kind: 'traffic.rule.destroyed' }]);
  });
});
