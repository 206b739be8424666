/**
 * The traffic-control routes end to end against the real kernel: the real host
 * (`node dist/host/cli.mjs serve`, live back end, every command wrapped into a private network
 * namespace with `system.wrapper`), real tc, and real TCP transfers timed through the limit.
 *
 * Namespace A ("this box", where the host runs its commands) has veth0 10.213.79.1; namespace B
 * ("the peer") has veth1 with 10.213.79.2 (the rule's address) and 10.213.79.3 (no rule).
 * Shaping is on A's egress, so what A sends to .2 is limited and what it sends to .3 is not.
 *
 * The story: create a 1 MB/s rule over HTTP -> the limited transfer takes ~3 s for 3 MB while
 * the other address runs free -> stop the host, delete the root qdisc by hand (what a reboot
 * does to tc), start the host again -> its start-up reconcile puts the class and filter back and
 * the transfer is limited again -> destroy over HTTP -> full speed, kernel default root back.
 * Four 3 MB transfers in all.
 *
 * Requires root, ip, tc and node, and a built dist/ (npm test builds first); a missing tool
 * fails the file, never skips it. The namespaces are removed in afterAll, whatever happened.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { DEFAULT_PATHS } from '../../runtime/config';
import { repo } from '../helpers/host';
import { freePort } from '../bench/lib';
import {
  IP,
  TC,
  createVethPair,
  inNetns,
  must,
  requireNetnsTools,
  run,
  startReceiver,
  timedSend,
  type TransferResult,
  type VethPair,
} from './helpers/tc-netns';
import { parseTcQdisc } from '../../handlers/traffic/parse/tc-qdisc';
import { parseTcClass } from '../../handlers/traffic/parse/tc-class';
import { parseTcFilter } from '../../handlers/traffic/parse/tc-filter';
import type { TrafficListing } from '../../handlers/traffic/responses';

const cli = join(repo, 'dist/host/cli.mjs');
const BYTES = 3_000_000;
const PORT_DATA = 5203;

let pair: VethPair;
let dir: string;
let cfg: string;
let port: number;
let token: string;
let child: ChildProcess | undefined;
let stderr = '';
const measured: Record<string, TransferResult> = {};

function tcState() {
  const dev = pair.devA;
  return {
    queues: parseTcQdisc(must(inNetns(pair.nsA, [TC, '-j', 'qdisc', 'show', 'dev', dev])).stdout, dev),
    classes: parseTcClass(must(inNetns(pair.nsA, [TC, 'class', 'show', 'dev', dev])).stdout),
    filters: parseTcFilter(must(inNetns(pair.nsA, [TC, '-j', 'filter', 'show', 'dev', dev])).stdout),
  };
}

/** Start the host; resolves once it listens and its start-up reconcile has logged its end. */
async function startHost(): Promise<void> {
  stderr = '';
  const c = spawn(process.execPath, [cli, 'serve', '--config', cfg], { stdio: ['ignore', 'pipe', 'pipe'] });
  child = c;
  let out = '';
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`host did not start: ${out}\n${stderr}`)), 20_000);
    const check = () => {
      if (
        /listening on/.test(out) &&
        /traffic: start-up reconcile( done|: no stored rules| failed| not run)/.test(stderr)
      ) {
        clearTimeout(timer);
        resolve();
      }
    };
    c.stdout!.on('data', (d: Buffer) => ((out += d.toString()), check()));
    c.stderr!.on('data', (d: Buffer) => ((stderr += d.toString()), check()));
    c.once('exit', (code) => reject(new Error(`host exited ${code}: ${stderr}`)));
  });
}

async function stopHost(): Promise<void> {
  const c = child;
  child = undefined;
  if (!c || c.exitCode !== null) return;
  const exited = new Promise((r) => c.once('exit', r));
  c.kill('SIGTERM');
  await exited;
  expect(c.exitCode).toBe(0);
}

/** `T`: the route's answer type as the caller states it */
async function api<T = unknown>(method: string, path: string, body?: unknown): Promise<{ status: number; json: T }> {
  const r = await fetch(`http://127.0.0.1:${port}/api/v2${path}`, {
    method,
    headers: { token, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: r.status, json: (await r.json()) as T };
}

async function transfer(label: string, host: string): Promise<TransferResult> {
  const receiver = await startReceiver(pair.nsB, [host], PORT_DATA);
  try {
    const r = await timedSend(pair.nsA, host, PORT_DATA, BYTES);
    expect(r.received).toBe(BYTES);
    measured[label] = r;
    console.log(
      `${label}: ${BYTES} bytes to ${host} in ${r.ms.toFixed(0)} ms = ${(BYTES / 1e6 / (r.ms / 1000)).toFixed(2)} MB/s`,
    );
    return r;
  } finally {
    await receiver.stop();
  }
}

beforeAll(async () => {
  requireNetnsTools();
  pair = createVethPair({ tag: 'tcapi', subnet: 79, peerAddresses: 2 });
  dir = mkdtempSync(join(tmpdir(), 'ballast-traffic-'));
  port = await freePort();
  cfg = join(dir, 'config.yaml');
  const paths = Object.fromEntries(Object.entries(DEFAULT_PATHS).map(([k, p]) => [k, join(dir, 'root', p)]));
  writeFileSync(
    cfg,
    stringify({
      stateDir: join(dir, 'state'),
      listen: { host: '127.0.0.1', port },
      paths,
      // every command the host runs goes into namespace A: the machine's own devices are never named
      system: { mode: 'live', wrapper: [IP, 'netns', 'exec', pair.nsA] },
    }),
  );
  const out = execFileSync(
    process.execPath,
    [cli, 'token', 'create', 'traffic-test', '--perm', 'network:manage', '--config', cfg],
    { encoding: 'utf8' },
  );
  token = out.trim().split('\n').at(-1)!;
});

afterAll(async () => {
  try {
    await stopHost();
  } finally {
    pair?.cleanup();
    if (dir) rmSync(dir, { recursive: true, force: true });
  }
  if (pair) expect(run([IP, 'netns', 'list']).stdout).not.toContain(pair.nsA);
});

describe('traffic control routes on a real kernel', () => {
  const [limitedIp, freeIp] = ['10.213.79.2', '10.213.79.3'];

  it('first start: nothing stored, nothing run; the listing shows veth0 as it came', async () => {
    await startHost();
    expect(stderr).toContain('traffic: start-up reconcile: no stored rules');
    const r = await api<TrafficListing>('GET', '/network/traffic/control');
    expect(r.status).toBe(200);
    expect(r.json).toEqual({
      devices: {
        veth0: {
          queue: [{ qtype: 'noqueue', handler: 0, device: 'veth0', owner: 'root', refcnt: '2' }],
          class: [],
          filter: [],
        },
      },
      rules: [],
      ids: ['0'],
    });
  });

  it('create: 1 MB/s for one peer address; tc shows our root, the class and the filter', async () => {
    const r = await api('POST', '/network/traffic/control/create', {
      name: 'limited-peer',
      device: 'veth0',
      ip: limitedIp,
      rate: 1,
    });
    expect(r).toEqual({
      status: 200,
      json: { error: null, name: 'limited-peer', device: 'veth0', ip: limitedIp, rate: 1 },
    });
    const s = tcState();
    expect(s.queues[0]).toMatchObject({ qtype: 'htb', handler: 1, owner: 'root', details: { default: '0xba11' } });
    expect(s.classes).toEqual([
      expect.objectContaining({ kind: 'htb', classid: '1:1', parent: null, rate: 8_000_000, ceil: 8_000_000 }),
    ]);
    expect(
      s.filters.map((f) => [f.handle, f.flowid, f.matches.map((m) => `${m.field} ${m.address}/${m.prefix_length}`)]),
    ).toEqual([['800::1', '1:1', [`dst ${limitedIp}/32`]]]);

    const l = await api<TrafficListing>('GET', '/network/traffic/control');
    expect(l.json.rules).toEqual([
      {
        name: 'limited-peer',
        ip: limitedIp,
        rate: 1,
        qtype: 'htb',
        handler: 1,
        device: 'veth0',
        owner: 'root',
        refcnt: expect.any(String),
        queue_details: expect.objectContaining({ r2q: 10, default: '0xba11' }),
      },
    ]);
    expect(l.json.ids).toEqual(['0', '1']);
    expect(l.json.devices.veth0.class).toHaveLength(1);
  });

  it('the limited address gets about 1 MB/s while the other runs free', async () => {
    const free = await transfer('unlimited before', freeIp);
    const limited = await transfer('limited', limitedIp);
    // 3 MB at 1 MB/s is ~3 s (less the first 16 KiB burst); generous bounds for a loaded box,
    // while a missing limit finishes in well under a second.
    expect(limited.ms).toBeGreaterThanOrEqual(2000);
    expect(limited.ms).toBeLessThan(15_000);
    expect(free.ms).toBeLessThan(limited.ms / 4);
  }, 60_000);

  it('survives a restart that lost tc state: the start-up reconcile re-applies the rule', async () => {
    await stopHost();
    must(inNetns(pair.nsA, [TC, 'qdisc', 'del', 'dev', pair.devA, 'root']));
    expect(tcState()).toEqual({
      queues: [expect.objectContaining({ qtype: 'noqueue', handler: 0 })],
      classes: [],
      filters: [],
    });

    await startHost();
    expect(stderr).toContain(`traffic: re-applied: ${TC} qdisc replace dev veth0 root handle 1: htb default ba11`);
    expect(stderr).toContain(
      'traffic: start-up reconcile done: 1 stored rule(s), 3 command(s) re-applied, 0 failed, 0 rule(s) skipped',
    );
    const s = tcState();
    expect(s.queues[0]).toMatchObject({ qtype: 'htb', handler: 1 });
    expect(s.classes.map((c) => [c.classid, c.rate, c.ceil])).toEqual([['1:1', 8_000_000, 8_000_000]]);
    expect(s.filters.map((f) => [f.handle, f.flowid, f.matches[0]!.address])).toEqual([['800::1', '1:1', limitedIp]]);

    const limited = await transfer('limited after restart', limitedIp);
    expect(limited.ms).toBeGreaterThanOrEqual(2000);
    expect(limited.ms).toBeLessThan(15_000);
  }, 60_000);

  it('destroy: answers the id, removes class, filter and our root; full speed again', async () => {
    const r = await api('POST', '/network/traffic/control/limited-peer/destroy', { name: 'limited-peer' });
    expect(r).toEqual({ status: 200, json: { id: 1 } });
    expect(tcState()).toEqual({
      queues: [expect.objectContaining({ qtype: 'noqueue', handler: 0 })],
      classes: [],
      filters: [],
    });
    expect((await api<TrafficListing>('GET', '/network/traffic/control')).json).toMatchObject({
      rules: [],
      ids: ['0'],
    });
    expect((await api('POST', '/network/traffic/control/limited-peer/destroy')).status).toBe(404);

    const after = await transfer('after destroy', limitedIp);
    expect(after.ms).toBeLessThan(measured['limited']!.ms / 4);
  }, 60_000);

  it('ids of the remaining rules do not move when another rule goes', async () => {
    for (const [name, ip] of [
      ['a', '10.213.79.2'],
      ['b', '10.213.79.3'],
      ['c', '10.213.79.4'],
    ] as const) {
      expect(
        (await api('POST', '/network/traffic/control/create', { name, device: 'veth0', ip, rate: 2 })).status,
      ).toBe(200);
    }
    expect((await api('POST', '/network/traffic/control/a/destroy')).json).toEqual({ id: 1 });
    const l = await api<TrafficListing>('GET', '/network/traffic/control');
    expect(l.json.rules.map((x) => x.name)).toEqual(['b', 'c']);
    expect(l.json.ids).toEqual(['0', '2', '3']);
    expect(tcState().classes.map((c) => c.classid)).toEqual(['1:2', '1:3']);
    // a new rule takes the freed id and is listed last
    expect(
      (await api('POST', '/network/traffic/control/create', { name: 'd', device: 'veth0', ip: '10.213.79.5', rate: 2 }))
        .status,
    ).toBe(200);
    expect((await api<TrafficListing>('GET', '/network/traffic/control')).json.ids).toEqual(['0', '2', '3', '1']);
  });

  it('a filter deleted by hand while the host runs is put back by the next listing', async () => {
    must(
      inNetns(pair.nsA, [
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
        '800::2',
        'u32',
      ]),
    );
    expect(tcState().filters.map((f) => f.handle)).toEqual(['800::1', '800::3']);
    const l = await api<TrafficListing>('GET', '/network/traffic/control');
    expect(l.json.devices.veth0.filter.map((f) => f.handle)).toEqual(['800::1', '800::2', '800::3']);
    expect(tcState().filters.find((f) => f.handle === '800::2')!.matches[0]!.address).toBe('10.213.79.3');
    expect(stderr).toContain(
      'traffic: re-applied: /usr/sbin/tc filter replace dev veth0 parent 1: protocol ip prio 1 handle 800::2 u32 match ip dst 10.213.79.3/32 flowid 1:2',
    );
  });

  it('concurrent creates on a device back on its default root: one htb root, distinct ids, both applied', async () => {
    for (const name of ['b', 'c', 'd'])
      expect((await api('POST', `/network/traffic/control/${name}/destroy`)).status).toBe(200);
    expect(tcState().queues[0]).toMatchObject({ qtype: 'noqueue', handler: 0 });
    const names = ['p1', 'p2', 'p3', 'p4'];
    const results = await Promise.all(
      names.map((name, i) =>
        api('POST', '/network/traffic/control/create', { name, device: 'veth0', ip: `10.213.79.${10 + i}`, rate: 1 }),
      ),
    );
    expect(results.map((r) => r.status)).toEqual([200, 200, 200, 200]);
    const l = await api<TrafficListing>('GET', '/network/traffic/control');
    expect([...l.json.ids].sort()).toEqual(['0', '1', '2', '3', '4']);
    const s = tcState();
    expect(s.queues.filter((q) => q.owner === 'root')).toEqual([expect.objectContaining({ qtype: 'htb', handler: 1 })]);
    expect(s.classes.map((c) => c.classid).sort()).toEqual(['1:1', '1:2', '1:3', '1:4']);
    expect(s.filters).toHaveLength(4);
  });
});
