/**
 * kill -9 in the middle of a network change: the host process (dist/host/cli.mjs, live back end
 * inside a private network namespace) is killed at random moments while configuring and
 * unconfiguring a veth, and while binding and unbinding a bond, then started again. Every time,
 * the interfaces files and the kernel's state are the old or the new configuration, never a
 * mix, and the intent journal is empty once the host is up (it rolled back what the killed host
 * left half done).
 *
 * Bonds: this kernel has no bonding module, so the bind loop does the nearest real thing. The
 * host's `ip` (config system.binaries.ip) is a small wrapper script that creates a BRIDGE where
 * bind asks for `type bond …bond options…` (a real kernel master device that takes `master`,
 * `nomaster`, addresses, up/down and `link del`) and, in `ip -j` output only, shows bridges
 * and their ports as a bond and bond ports, so that the routes treat it as the bond it stands
 * for; every other argv goes to /usr/sbin/ip unchanged. The journaled bind/unbind commit, the
 * file writes and the undo at start therefore run for real against the kernel, and the test
 * checks the kernel with the real ip (bridge present or not, ports enslaved or not).
 */
import { chmodSync, mkdirSync, readdirSync, readFileSync, rmSync, watch, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { DEFAULT_PATHS } from '../../runtime/config';
import { privateDir } from '../helpers/tmp';
import { HostProcess } from './helpers/host-process';
import { createNetns, IP, requireTool, type Netns } from './helpers/netns';
import { bondAsBridge } from './helpers/network-bond-as-bridge';

const ROUNDS = 8;
/** kills land at random: go on past ROUNDS until one landed inside a change (bounded) */
const MAX_ROUNDS = 24;
const ADDRESS = '10.9.6.5';

let ns: Netns;
let host: HostProcess;
let paths: Record<string, string>;

async function kernelHas(address: string): Promise<boolean> {
  const r = JSON.parse((await ns.run([IP, '-j', 'addr', 'show', 'dev', 'eth1'])).stdout) as {
    addr_info: { local: string }[];
  }[];
  return (r[0]?.addr_info ?? []).some((a) => a.local === address);
}

/** The interfaces configuration as ifupdown reads it: the main file and interfaces.d/*. */
const configText = () =>
  [
    paths.networkInterfaces,
    ...readdirSync(paths.networkInterfacesD)
      .filter((n) => !n.startsWith('.'))
      .map((n) => join(paths.networkInterfacesD, n)),
  ]
    .map((f) => readFileSync(f, 'utf8'))
    .join('\n');
const fileHas = () => /iface eth1 inet static/.test(configText()) && configText().includes(ADDRESS);

function eventKinds(): string {
  return host
    .query<{ kind: string; data: string }>('SELECT kind, data FROM events ORDER BY seq')
    .map((e) => `${e.kind} ${e.data}`)
    .join(' | ');
}

beforeAll(async () => {
  requireTool(IP, 'iproute2');
  ns = await createNetns({
    name: 'net-kill',
    veths: [{ name: 'eth1', peer: 'peer1', peerAddress: '10.9.6.1/24' }],
  });
  const dir = privateDir('net-kill');
  const root = join(dir, 'root');
  paths = Object.fromEntries(Object.entries(DEFAULT_PATHS).map(([k, p]) => [k, join(root, p)]));
  mkdirSync(paths.networkInterfacesD, { recursive: true });
  writeFileSync(paths.networkInterfaces, 'source /etc/network/interfaces.d/*\n\nauto lo\niface lo inet loopback\n');
  const configFile = join(dir, 'config.yaml');
  writeFileSync(
    configFile,
    stringify({
      stateDir: join(dir, 'state'),
      listen: { host: '127.0.0.1', port: 0 },
      paths,
      // every command waits a little before it runs, so a change spans a second and the random
      // kills land inside it (between its file writes and its ip steps) as often as around it
      system: { mode: 'live', wrapper: ['/bin/sh', '-c', 'sleep 0.15; exec "$@"', 'sh', IP, 'netns', 'exec', ns.name] },
      settings: { network: { list: { kinds: ['veth'] } }, traffic: { reconcileOnStart: false } },
    }),
  );
  host = new HostProcess(configFile, join(dir, 'state'));
});

afterAll(async () => {
  await host?.kill9();
  await ns?.cleanup();
});

describe('kill -9 during network changes', () => {
  it(`${ROUNDS}+ kills at random points: files and ip state are old or new, never a mix; the journal is empty after start`, async () => {
    const outcomes: string[] = [];
    let recoveries = 0;
    for (let round = 0; round < MAX_ROUNDS && (round < ROUNDS || recoveries === 0); round++) {
      const url = await host.start();
      if (/network: rolled back a change interrupted/.test(host.output)) recoveries++;
      expect(host.token).toMatch(/^blt_/);
      // the previous round's kill has been settled by this start
      expect(host.openIntents()).toBe(0);
      expect(
        fileHas(),
        `round ${round} after ${outcomes.join(', ')}; host: ${host.output}; events: ${eventKinds()}; files: ${configText()}`,
      ).toBe(await kernelHas(ADDRESS));
      expect(readdirSync(paths.networkInterfacesD).filter((n) => n.includes('.tmp-'))).toEqual([]);

      const configured = fileHas();
      const request = configured
        ? fetch(`${url}/api/v2/network/interface/eth1/unconfigure`, {
            method: 'POST',
            headers: { token: host.token, 'content-type': 'application/json' },
            body: '{}',
          })
        : fetch(`${url}/api/v2/network/interface/configure`, {
            method: 'POST',
            headers: { token: host.token, 'content-type': 'application/json' },
            body: JSON.stringify({ device: 'eth1', isdhcp: false, address: ADDRESS, netmask: '255.255.255.0' }),
          });
      const answered = request.then((r) => r.status).catch(() => 'killed');
      // a random moment: before, during or after the change's steps
      await new Promise((r) => setTimeout(r, Math.floor(Math.random() * 1500)));
      await host.kill9();
      outcomes.push(`${configured ? 'unconfigure' : 'configure'}: ${String(await answered)}`);
    }
    // one more start settles the last kill
    await host.start();
    if (/network: rolled back a change interrupted/.test(host.output)) recoveries++;
    expect(host.openIntents()).toBe(0);
    expect(fileHas()).toBe(await kernelHas(ADDRESS));
    // the kills landed before, during and after changes; print them for the record
    console.log(`network kill loop: ${outcomes.join(', ')}; ${recoveries} start(s) rolled back an interrupted change`);
    // the loop is only a test when some kills landed inside a change
    expect(recoveries).toBeGreaterThan(0);
  }, 300_000);
});

describe('kill -9 during bond bind and unbind (a bridge standing in for the bond: no bonding module here)', () => {
  const BOND_ROUNDS = 6;
  const BOND_MAX_ROUNDS = 16;
  const BOND_ADDRESS = '10.9.7.5';
  let bns: Netns;
  let bhost: HostProcess;
  let bpaths: Record<string, string>;
  let hold: string;
  const SEED = 'source /etc/network/interfaces.d/*\n\nauto lo\niface lo inet loopback\n';
  const NEW =
    `${SEED}\nauto bond0\niface bond0 inet static\n    address ${BOND_ADDRESS}\n    netmask 255.255.255.0\n    slaves eth1 eth2\n` +
    '    bond_mode 4\n    bond_lacp_rate 1\n    bond_miimon 100\n    bond_xmit_hash_policy layer3+4\n    bond-downdelay 200\n    bond-updelay 200\n' +
    '\nauto eth1\niface eth1 inet manual\n    bond-master bond0\n\nauto eth2\niface eth2 inet manual\n    bond-master bond0\n';

  /** main file + interfaces.d/*, each with its name (a whole version is one of two exact sets) */
  const files = () => ({
    main: readFileSync(bpaths.networkInterfaces, 'utf8'),
    d: readdirSync(bpaths.networkInterfacesD),
  });

  /** The kernel, read with the real ip: the stand-in master, its address, who is enslaved to it. */
  async function kernel(): Promise<{ bond: boolean; address: boolean; enslaved: string[] }> {
    const recs = JSON.parse((await bns.run([IP, '-j', 'addr', 'show'])).stdout) as {
      ifname: string;
      master?: string;
      addr_info: { local: string }[];
    }[];
    const bond = recs.find((r) => r.ifname === 'bond0');
    return {
      bond: bond !== undefined,
      address: (bond?.addr_info ?? []).some((a) => a.local === BOND_ADDRESS),
      enslaved: recs.filter((r) => r.master === 'bond0').map((r) => r.ifname),
    };
  }
  const OLD_KERNEL = { bond: false, address: false, enslaved: [] };
  const NEW_KERNEL = { bond: true, address: true, enslaved: ['eth1', 'eth2'] };

  const post = (url: string, path: string, body: unknown) =>
    fetch(`${url}/api/v2/network/interface/${path}`, {
      method: 'POST',
      headers: { token: bhost.token, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
  const BIND = { isdhcp: false, address: `${BOND_ADDRESS}/24`, slaves: 'eth1,eth2' };
  /** how long an uninterrupted bind and unbind take here (ms): the kills are spread over 1.5 times that */
  const took = { bind: 2000, unbind: 2000 };

  beforeAll(async () => {
    requireTool(IP, 'iproute2');
    bns = await createNetns({
      name: 'net-kbond',
      veths: [
        { name: 'eth1', peer: 'peer1' },
        { name: 'eth2', peer: 'peer2' },
      ],
    });
    const dir = privateDir('net-kbond');
    const root = join(dir, 'root');
    bpaths = Object.fromEntries(Object.entries(DEFAULT_PATHS).map(([k, p]) => [k, join(root, p)]));
    mkdirSync(bpaths.networkInterfacesD, { recursive: true });
    writeFileSync(bpaths.networkInterfaces, SEED);
    const ipWrapper = join(dir, 'ip-bond-as-bridge');
    hold = join(dir, 'hold-after-del');
    writeFileSync(ipWrapper, bondAsBridge(hold));
    chmodSync(ipWrapper, 0o755);
    const configFile = join(dir, 'config.yaml');
    writeFileSync(
      configFile,
      stringify({
        stateDir: join(dir, 'state'),
        listen: { host: '127.0.0.1', port: 0 },
        paths: bpaths,
        system: {
          mode: 'live',
          binaries: { ip: ipWrapper },
          // a short wait before each command stretches the change so kills land inside it
          wrapper: ['/bin/sh', '-c', 'sleep 0.05; exec "$@"', 'sh', IP, 'netns', 'exec', bns.name],
        },
        settings: { network: { list: { kinds: ['veth', 'bond'] } }, traffic: { reconcileOnStart: false } },
      }),
    );
    // its own process group, killed whole: the commands in flight die with the host
    bhost = new HostProcess(configFile, join(dir, 'state'), { group: true });
  });

  afterAll(async () => {
    await bhost?.kill9();
    await bns?.cleanup();
  });

  it('bind then unbind without kills: the two versions the loop compares against', async () => {
    const url = await bhost.start();
    let t0 = Date.now();
    const b = await post(url, 'bind', BIND);
    took.bind = Date.now() - t0;
    expect(b.status, await b.clone().text()).toBe(200);
    expect(((await b.json()) as { link: string; state: string }).link).toBe('bond0');
    expect(files()).toEqual({ main: NEW, d: [] });
    expect(await kernel()).toEqual(NEW_KERNEL);
    t0 = Date.now();
    const u = await post(url, 'bond0/unconfigure', {});
    took.unbind = Date.now() - t0;
    expect([u.status, await u.json()]).toEqual([
      200,
      { message: 'bond0 unconfigured and deleted; ports eth1, eth2 released' },
    ]);
    expect(files()).toEqual({ main: SEED, d: [] });
    expect(await kernel()).toEqual(OLD_KERNEL);
    await bhost.kill9();
  }, 60_000);

  it('a kill right after unbind deleted the bond: the start recreates it (parameters, address, ports) as the files say', async () => {
    const url = await bhost.start();
    const b = await post(url, 'bind', BIND);
    expect(b.status, await b.clone().text()).toBe(200);
    writeFileSync(`${hold}.on`, '');
    const deleted = new Promise<void>((resolve) => {
      const w = watch(dirname(hold), (_e, name) => {
        if (name === `${basename(hold)}.done`) {
          w.close();
          resolve();
        }
      });
    });
    const answered = post(url, 'bond0/unconfigure', {})
      .then((r) => r.status)
      .catch(() => 'killed');
    await deleted;
    // the delete ran: the kernel has no bond0, the ports are free, the change is not ended
    expect(await kernel()).toEqual(OLD_KERNEL);
    expect(bhost.openIntents()).toBe(1);
    await bhost.kill9();
    expect(await answered).toBe('killed');
    rmSync(`${hold}.on`);
    rmSync(`${hold}.done`);
    await bhost.start();
    expect(bhost.output).toMatch(/network: rolled back a change interrupted/);
    expect(bhost.openIntents()).toBe(0);
    expect(files()).toEqual({ main: NEW, d: [] });
    expect(await kernel()).toEqual(NEW_KERNEL);
    await bhost.kill9();
  }, 60_000);

  it(`${BOND_ROUNDS}+ kills during bind/unbind: files whole old or new, ip state agrees, journal empty after start`, async () => {
    const outcomes: string[] = [];
    let recoveries = 0;
    // go on past BOND_ROUNDS (bounded) until kills have landed in a bind and in an unbind
    const enough = () => outcomes.includes('bind: killed') && outcomes.includes('unbind: killed') && recoveries > 0;
    for (let round = 0; round < BOND_MAX_ROUNDS && (round < BOND_ROUNDS || !enough()); round++) {
      const url = await bhost.start();
      if (/network: rolled back a change interrupted/.test(bhost.output)) recoveries++;
      expect(bhost.openIntents()).toBe(0);
      const f = files();
      const k = await kernel();
      const why = `round ${round} after ${outcomes.join(', ')}; host: ${bhost.output}`;
      expect(
        [
          { main: SEED, d: [] },
          { main: NEW, d: [] },
        ],
        why,
      ).toContainEqual(f);
      const bound = f.main === NEW;
      expect(k, why).toEqual(bound ? NEW_KERNEL : OLD_KERNEL);
      expect(readdirSync(bpaths.networkInterfacesD).filter((n) => n.includes('.tmp-'))).toEqual([]);

      const answered = (bound ? post(url, 'bond0/unconfigure', {}) : post(url, 'bind', BIND))
        .then((r) => r.status)
        .catch(() => 'killed');
      // a random moment within the first, uninterrupted run's time (bind runs 9 commands; a
      // later run is faster, so most kills land before or during its steps). A killed change is
      // rolled back, so the next round is the same kind again: the kill waits for the answer
      // (the state flips) once this kind has been killed and the other has not, and after three
      // kills of one kind in a row, so the loop reaches both kinds early and kills after an end
      const kind = bound ? 'unbind' : 'bind';
      const other = bound ? 'bind' : 'unbind';
      const streak = outcomes.slice(-3).filter((o) => o.startsWith(`${kind}:`)).length;
      const onlyThisKilled = outcomes.includes(`${kind}: killed`) && !outcomes.includes(`${other}: killed`);
      if (streak === 3 || onlyThisKilled) await answered;
      // (the first run is a cold one: its bundle loaded, seconds on a busy machine; a warm one takes a
      // fraction of it, so the window is at most 1.5 s, where a warm change still runs)
      else
        await new Promise((r) =>
          setTimeout(r, Math.floor(Math.random() * Math.min(1500, bound ? took.unbind : took.bind))),
        );
      await bhost.kill9();
      outcomes.push(`${bound ? 'unbind' : 'bind'}: ${String(await answered)}`);
    }
    await bhost.start();
    if (/network: rolled back a change interrupted/.test(bhost.output)) recoveries++;
    expect(bhost.openIntents()).toBe(0);
    const f = files();
    expect([
      { main: SEED, d: [] },
      { main: NEW, d: [] },
    ]).toContainEqual(f);
    expect(await kernel()).toEqual(f.main === NEW ? NEW_KERNEL : OLD_KERNEL);
    console.log(
      `network bond kill loop (uninterrupted: bind ${took.bind} ms, unbind ${took.unbind} ms): ${outcomes.join(', ')}; ${recoveries} start(s) rolled back an interrupted change`,
    );
    // the loop is only a test when kills landed inside both kinds of change
    expect(enough(), outcomes.join(', ')).toBe(true);
  }, 120_000);
});
