/**
 * Issue 30: changes that cannot strand the box. A live host (dist/host/cli.mjs, its commands run
 * inside a private network namespace, the "appliance") and a "management" peer namespace that
 * reaches the appliance over a veth. Each change cuts the peer off (new address, port enslaved
 * to a bond, a traffic rule throttling the peer to ~1 kB/s), nobody confirms, and the host puts
 * the checkpoint back on its own: the peer reaches the appliance again, the interfaces file is
 * byte-identical, the routes and tc are as before, the event says why. Also with kill -9 inside
 * the window (restart before the deadline: rolled back at the deadline; after it: at start), and
 * a confirmed change that survives its deadline and a restart.
 *
 * Bonds: this kernel has no bonding module; the host's `ip` is the bridge stand-in the kill test
 * uses (helpers/network-bond-as-bridge.ts).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { DEFAULT_PATHS } from '../../runtime/config';
import { privateDir } from '../helpers/tmp';
import { HostProcess } from './helpers/host-process';
import { createNetns, IP, requireTool, type Netns } from './helpers/netns';
import { bondAsBridge } from './helpers/network-bond-as-bridge';

const APPLIANCE = '10.9.8.5';
const PEER = '10.9.8.1';
const SEED =
  'source /etc/network/interfaces.d/*\n\nauto lo\niface lo inet loopback\n\n' +
  `auto eth1\niface eth1 inet static\n    address ${APPLIANCE}\n    netmask 255.255.255.0\n`;

let ns: Netns;
let host: HostProcess;
let paths: Record<string, string>;
let url = '';

const mainFile = () => readFileSync(paths.networkInterfaces, 'utf8');

async function post(path: string, body: unknown): Promise<{ status: number; json: Record<string, unknown> }> {
  const r = await fetch(`${url}/api/v2${path}`, {
    method: 'POST',
    headers: { token: host.token, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: r.status, json: (await r.json()) as Record<string, unknown> };
}

/**
 * The appliance's side of the reachability probe: a TCP server in the appliance namespace that
 * sends as many bytes as the client asks for (this machine has no ping; TCP also measures the
 * bandwidth a traffic rule leaves).
 */
const SERVER = `require('node:net').createServer((s) => {
  s.once('data', (d) => { const n = Number(String(d).trim()); s.end(Buffer.alloc(n, 120)); });
  s.on('error', () => {});
}).listen(7070, '0.0.0.0');`;
/** Bytes the peer receives of `bytes` asked for within `ms` (0: no connection). */
const CLIENT = `const [host, bytes, ms] = process.argv.slice(1);
let got = 0;
const s = require('node:net').connect(7070, host, () => s.write(bytes + '\\n'));
s.on('data', (d) => (got += d.length));
const done = () => { process.stdout.write(String(got)); process.exit(0); };
s.on('close', done); s.on('error', done); setTimeout(done, Number(ms));`;
let server: ChildProcess | undefined;

async function peerGets(bytes: number, ms: number): Promise<number> {
  const r = await ns.execPeer([process.execPath, '-e', CLIENT, APPLIANCE, String(bytes), String(ms)]);
  return Number(r.stdout.trim() || '0');
}
/** The peer reaches the appliance: 1 kB within 2 s. */
const reachable = async () => (await peerGets(1000, 2000)) === 1000;

interface ChangeEvent {
  kind: string;
  data: { id: number; reason?: string; unrestored?: string[]; change: string };
}
const changeEvents = (): ChangeEvent[] =>
  host
    .query<{ kind: string; data: string }>(
      "SELECT kind, data FROM events WHERE kind LIKE 'network.change.%' ORDER BY seq",
    )
    .map((e) => ({ kind: e.kind, data: JSON.parse(e.data) as ChangeEvent['data'] }));

/** Waits (bounded) for the rollback event of change `id`. */
async function rolledBack(id: number, withinMs = 20_000): Promise<ChangeEvent> {
  const until = Date.now() + withinMs;
  for (;;) {
    const e = changeEvents().find((x) => x.kind === 'network.change.rolled_back' && x.data.id === id);
    if (e) return e;
    if (Date.now() > until) throw new Error(`no rollback of change ${id}; events: ${JSON.stringify(changeEvents())}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** IPv4 addresses per interface, routes and tc of the appliance, read with the real tools. */
async function kernel(): Promise<{
  addrs: Record<string, string[]>;
  routes: string[];
  masters: Record<string, string>;
}> {
  const a = JSON.parse((await ns.run([IP, '-j', 'addr', 'show'])).stdout) as {
    ifname: string;
    master?: string;
    addr_info: { family: string; local: string; prefixlen: number }[];
  }[];
  const r = JSON.parse((await ns.run([IP, '-j', 'route', 'show'])).stdout) as {
    dst: string;
    gateway?: string;
    dev: string;
  }[];
  return {
    addrs: Object.fromEntries(
      a.map((x) => [x.ifname, x.addr_info.filter((i) => i.family === 'inet').map((i) => `${i.local}/${i.prefixlen}`)]),
    ),
    routes: r.map((x) => `${x.dst}${x.gateway ? ` via ${x.gateway}` : ''} dev ${x.dev}`).sort(),
    masters: Object.fromEntries(a.filter((x) => x.master).map((x) => [x.ifname, x.master ?? ''])),
  };
}

const tcOf = async (dev: string) =>
  (await ns.run(['/usr/sbin/tc', 'qdisc', 'show', 'dev', dev])).stdout +
  (await ns.run(['/usr/sbin/tc', 'class', 'show', 'dev', dev])).stdout +
  (await ns.run(['/usr/sbin/tc', 'filter', 'show', 'dev', dev])).stdout;

const MOVE = { device: 'eth1', isdhcp: false, address: '10.9.99.5', netmask: '255.255.255.0' };

beforeAll(async () => {
  requireTool(IP, 'iproute2');
  ns = await createNetns({
    name: 'net-confirm',
    veths: [
      { name: 'eth1', peer: 'peer1', address: `${APPLIANCE}/24`, peerAddress: `${PEER}/24` },
      { name: 'eth2', peer: 'peer2' },
    ],
  });
  // a default route through the management peer: a flush drops it, the rollback must bring it back
  await ns.run([IP, 'route', 'add', 'default', 'via', PEER, 'dev', 'eth1']);
  server = spawn(IP, ['netns', 'exec', ns.name, process.execPath, '-e', SERVER], { stdio: 'ignore' });
  const dir = privateDir('net-confirm');
  const root = join(dir, 'root');
  paths = Object.fromEntries(Object.entries(DEFAULT_PATHS).map(([k, p]) => [k, join(root, p)]));
  mkdirSync(paths.networkInterfacesD, { recursive: true });
  writeFileSync(paths.networkInterfaces, SEED);
  const ipWrapper = join(dir, 'ip-bond-as-bridge');
  writeFileSync(ipWrapper, bondAsBridge(join(dir, 'hold-unused')));
  chmodSync(ipWrapper, 0o755);
  const configFile = join(dir, 'config.yaml');
  writeFileSync(
    configFile,
    stringify({
      stateDir: join(dir, 'state'),
      listen: { host: '127.0.0.1', port: 0 },
      paths,
      system: {
        mode: 'live',
        binaries: { ip: ipWrapper },
        wrapper: [IP, 'netns', 'exec', ns.name],
      },
      settings: { network: { list: { kinds: ['veth', 'bond'] } }, traffic: { reconcileOnStart: false } },
    }),
  );
  host = new HostProcess(configFile, join(dir, 'state'), { group: true });
  url = await host.start();
});

afterAll(async () => {
  server?.kill('SIGKILL');
  await host?.kill9();
  await ns?.cleanup();
});

describe('a change nobody confirms comes back on its own (issue 30)', () => {
  let before: Awaited<ReturnType<typeof kernel>>;

  it('starts reachable', async () => {
    // the probe's server starts in the background: wait (bounded) for its first answer
    for (let i = 0; i < 50 && !(await reachable()); i++) await new Promise((r) => setTimeout(r, 100));
    expect(await reachable()).toBe(true);
    before = await kernel();
    expect(before.addrs.eth1).toEqual([`${APPLIANCE}/24`]);
    expect(before.routes).toContain(`default via ${PEER} dev eth1`);
  });

  it('confirmWithin 5: the address moves, the peer is cut off; ~5 s later it is back, file byte-identical, reason timeout', async () => {
    const t0 = Date.now();
    const r = await post('/network/interface/configure', { ...MOVE, confirmWithin: 5 });
    expect(r.status, JSON.stringify(r.json)).toBe(200);
    expect(mainFile()).toContain('address 10.9.99.5');
    expect(await peerGets(1000, 1000)).toBe(0);
    const pending = await fetch(`${url}/api/v2/network/pending`, { headers: { token: host.token } });
    const p = (await pending.json()) as { pending: { id: number; window: number; devices: string[] } };
    expect(p.pending).toMatchObject({ window: 5, devices: ['eth1'] });
    const e = await rolledBack(p.pending.id);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(4_900);
    expect(e.data.reason).toBe('timeout');
    expect(e.data.unrestored).toEqual([]);
    expect(await reachable()).toBe(true);
    expect(mainFile()).toBe(SEED);
    expect(await kernel()).toEqual(before);
    expect(
      changeEvents()
        .filter((x) => x.data.id === p.pending.id)
        .map((x) => x.kind),
    ).toEqual(['network.change.pending', 'network.change.rolled_back']);
  }, 60_000);

  it('one change at a time: another change while one waits is a 409 naming it; POST /network/rollback restores at once', async () => {
    const r = await post('/network/interface/configure', { ...MOVE, confirmWithin: 60 });
    expect(r.status).toBe(200);
    const other = await post('/network/interface/configure', {
      device: 'eth2',
      isdhcp: false,
      address: '10.9.5.5',
      netmask: '255.255.255.0',
    });
    expect(other.status).toBe(409);
    expect(JSON.stringify(other.json)).toMatch(/network change \d+ \(configure eth1\) is waiting for its confirmation/);
    const rb = await post('/network/rollback', {});
    expect(rb.status, JSON.stringify(rb.json)).toBe(200);
    const id = (rb.json.change as { id: number }).id;
    expect((await rolledBack(id)).data.reason).toBe('explicit');
    expect(await reachable()).toBe(true);
    expect(mainFile()).toBe(SEED);
    expect(await kernel()).toEqual(before);
  }, 60_000);

  it('kill -9 inside the window, restart before the deadline: rolled back at the deadline (timeout)', async () => {
    const r = await post('/network/interface/configure', { ...MOVE, confirmWithin: 8 });
    expect(r.status).toBe(200);
    await host.kill9();
    expect(await peerGets(1000, 1000)).toBe(0);
    const [{ id, deadline }] = host.query<{ id: number; deadline: number }>(
      "SELECT id, deadline FROM network_checkpoints WHERE state = 'pending'",
    );
    url = await host.start();
    expect(Date.now()).toBeLessThan(deadline);
    expect(host.output).toMatch(new RegExp(`change ${id} \\(configure eth1\\) waits for its confirmation`));
    const e = await rolledBack(id);
    expect(Date.now()).toBeGreaterThanOrEqual(deadline);
    expect(e.data.reason).toBe('timeout');
    expect(await reachable()).toBe(true);
    expect(mainFile()).toBe(SEED);
    expect(await kernel()).toEqual(before);
    expect(host.openIntents()).toBe(0);
  }, 60_000);

  it('kill -9 inside the window, restart after the deadline: rolled back at start (restart)', async () => {
    const r = await post('/network/interface/configure', { ...MOVE, confirmWithin: 5 });
    expect(r.status).toBe(200);
    await host.kill9();
    const [{ id, deadline }] = host.query<{ id: number; deadline: number }>(
      "SELECT id, deadline FROM network_checkpoints WHERE state = 'pending'",
    );
    // the host is down past the deadline: nothing can roll back before it starts
    while (Date.now() <= deadline) await new Promise((res) => setTimeout(res, deadline - Date.now() + 50));
    expect(await peerGets(1000, 1000)).toBe(0);
    expect(mainFile()).toContain('10.9.99.5');
    url = await host.start();
    const e = await rolledBack(id);
    expect(e.data.reason).toBe('restart');
    expect(await reachable()).toBe(true);
    expect(mainFile()).toBe(SEED);
    expect(await kernel()).toEqual(before);
  }, 60_000);

  it('a bond bind of the management port (bridge stand-in) comes back: port released, address and route back', async () => {
    const r = await post('/network/interface/bind', {
      isdhcp: false,
      address: '10.9.7.5/24',
      slaves: 'eth1,eth2',
      confirmWithin: 5,
    });
    expect(r.status, JSON.stringify(r.json)).toBe(200);
    expect((await kernel()).masters).toEqual({ eth1: 'bond0', eth2: 'bond0' });
    expect(await peerGets(1000, 1000)).toBe(0);
    const [{ id }] = host.query<{ id: number }>('SELECT id FROM network_checkpoints');
    const e = await rolledBack(id);
    expect(e.data.reason).toBe('timeout');
    expect(e.data.unrestored).toEqual([]);
    expect(await reachable()).toBe(true);
    expect(mainFile()).toBe(SEED);
    const k = await kernel();
    expect(k).toEqual(before);
    expect(k.addrs.bond0).toBeUndefined();
  }, 60_000);

  it('a traffic rule throttling the peer to ~1 kB/s comes back: rule, tc and the peer’s bandwidth', async () => {
    const tcBefore = await tcOf('eth1');
    const r = await post('/network/traffic/control/create', {
      name: 'choke',
      device: 'eth1',
      ip: PEER,
      rate: 0.001,
      confirmWithin: 6,
    });
    expect(r.status, JSON.stringify(r.json)).toBe(200);
    // 1 MB asked for in 3 s: past the 16 KiB burst it crawls at 1 kB/s
    const choked = await peerGets(1_000_000, 3000);
    expect(choked).toBeLessThan(100_000);
    const [{ id }] = host.query<{ id: number }>('SELECT id FROM network_checkpoints');
    const e = await rolledBack(id);
    expect(e.data.reason).toBe('timeout');
    expect(e.data.unrestored).toEqual([]);
    expect(await peerGets(1_000_000, 3000)).toBe(1_000_000);
    expect(await tcOf('eth1')).toBe(tcBefore);
    expect(host.query("SELECT name FROM traffic_rules WHERE name = 'choke'")).toEqual([]);
  }, 60_000);

  it('a confirmed change survives its deadline and a restart', async () => {
    const r = await post('/network/interface/configure', { ...MOVE, confirmWithin: 5 });
    expect(r.status).toBe(200);
    const [{ id, deadline }] = host.query<{ id: number; deadline: number }>(
      'SELECT id, deadline FROM network_checkpoints',
    );
    // confirmed from the new side (here: the test, over loopback)
    const c = await post('/network/confirm', { id });
    expect(c.status, JSON.stringify(c.json)).toBe(200);
    expect(host.query('SELECT id FROM network_checkpoints')).toEqual([]);
    const again = await post('/network/confirm', { id });
    expect(again.status).toBe(409);
    while (Date.now() <= deadline + 1000)
      await new Promise((res) => setTimeout(res, deadline + 1000 - Date.now() + 50));
    await host.kill9();
    url = await host.start();
    const k = await kernel();
    expect(k.addrs.eth1).toEqual(['10.9.99.5/24']);
    expect(mainFile()).toContain('address 10.9.99.5');
    expect(
      changeEvents()
        .filter((x) => x.data.id === id)
        .map((x) => x.kind),
    ).toEqual(['network.change.pending', 'network.change.confirmed']);
    // back to the seed for anything after (unsafe path: force without a window)
    const back = await post('/network/interface/configure', {
      device: 'eth1',
      isdhcp: false,
      address: APPLIANCE,
      netmask: '255.255.255.0',
    });
    expect(back.status).toBe(200);
  }, 60_000);
});
