/**
 * The demo appliance's network area, served the way `npm start` serves it (demoConfig: replay
 * of fixtures/demo, seed files copied into a private root): a plausible box — management port,
 * a DHCP port, an LACP bond over two 40G ports, an unused port — and nothing else (lo, docker0
 * left out). Guards the demo fixtures against drifting from the argv the routes run.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeDemoHost, type TestHost } from '../helpers/host';
import list from '../../handlers/network/routes/interface-list';
import details from '../../handlers/network/routes/interface-details';
import type { NetworkInterface } from '../../handlers/network/responses';

let d: TestHost;

async function get<T = unknown>(path: string) {
  const r = await d.call<T>('GET', path);
  return { status: r.status, json: r.json };
}

beforeAll(async () => {
  d = await makeDemoHost({ routes: [list, details] });
});
afterAll(async () => {
  await d?.close();
});

describe('demo: GET /network/interface', () => {
  it('shows the NICs and the bond with plausible values', async () => {
    const r = await get<NetworkInterface[]>('/api/v2/network/interface');
    expect(r.status).toBe(200);
    const rows = r.json.map((i) => [
      i.link,
      i.state,
      i.status,
      i.ipv4 && `${i.ipv4.type} ${i.ipv4.address}`,
      i.config?.mode ?? null,
      i.settings?.speed,
      i.settings?.driver?.name,
    ]);
    expect(rows).toEqual([
      ['eno1', 'up', 'GOOD', 'static 192.168.10.20/24', 'static', 1000, 'igb'],
      ['eno2', 'up', 'GOOD', 'dhcp 10.1.2.50/24', 'dhcp', 1000, 'igb'],
      ['eno3', 'up', 'GOOD', null, 'manual', 40000, 'i40e'],
      ['eno4', 'up', 'GOOD', null, 'manual', 40000, 'i40e'],
      ['eno5', 'down', 'GOOD', null, null, 'UNKNOWN', 'igb'],
      ['bond0', 'up', 'GOOD', 'static 10.20.0.10/24', 'static', 80000, 'bonding'],
    ]);
    expect(r.json[5].config).toEqual({
      mode: 'static',
      address: '10.20.0.10',
      netmask: '255.255.255.0',
      mtu: '9000',
      slaves: 'eno3 eno4',
      bond_mode: '4',
      bond_lacp_rate: '1',
      bond_miimon: '100',
      bond_xmit_hash_policy: 'layer3+4',
      'bond-downdelay': '200',
      'bond-updelay': '200',
    });
    expect(r.json[1].ipv4).toEqual({
      type: 'dhcp',
      address: '10.1.2.50/24',
      brd: '10.1.2.255',
      scope: 'global',
      dynamic: 'eno2',
    });
  });

  it('answers details for each listed interface and 404 for the plumbing', async () => {
    for (const dev of ['eno1', 'eno2', 'eno3', 'eno4', 'eno5', 'bond0']) {
      const r = await get<NetworkInterface[]>(`/api/v2/network/interface/${dev}/details`);
      expect(r.status, dev).toBe(200);
      expect(r.json[0].link).toBe(dev);
    }
    expect((await get('/api/v2/network/interface/docker0/details')).status).toBe(404);
    expect((await get('/api/v2/network/interface/lo/details')).status).toBe(404);
  });
});
