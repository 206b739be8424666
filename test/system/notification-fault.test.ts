import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawn, type ChildProcess } from 'node:child_process';
import { writeFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { dbFile, type HostConfig } from '../../runtime/config';
import { openDatabase } from '../../runtime/db/database';
import { createToken } from '../../runtime/tokens';
import { distDir, makeTestConfig } from '../helpers/host';
import { freePort, sleep, waitFor, WebhookReceiver } from '../helpers/notification-peers';
import type { Agent } from '../../handlers/notification/schemas';

/**
 * The fault test: the webhook receiver is down while events are emitted; the host process is
 * killed (SIGKILL: nothing gets flushed) and started again; the receiver comes back; every
 * (event, agent) notification arrives exactly once. Then a graceful restart (SIGTERM) sends
 * nothing again. The hosts are real `node dist/host/cli.mjs serve` processes on one state dir.
 */

const WHSEC = `whsec_${Buffer.from('fault-test-secret-0123456789abcd').toString('base64')}`;

interface HostProcess {
  child: ChildProcess;
  base: string;
  output: () => string;
}

let config: HostConfig;
let state: string;
let configFile: string;
let token: string;
const running = new Set<ChildProcess>();

beforeAll(async () => {
  ({ config, state } = makeTestConfig({
    // Small backoff so the test is quick; many attempts so nothing gives up while the peer is down.
    settings: { notification: { backoffBaseMs: 50, backoffMaxMs: 250, maxAttempts: 100, pollIntervalMs: 100, timeoutMs: 3000 } },
  }));
  configFile = join(state, 'config.yaml');
  writeFileSync(configFile, stringify(config));
  const db = openDatabase(dbFile(config));
  token = (await createToken(db, 'fault-test', ['*'])).token;
  db.close();
});

afterAll(async () => {
  for (const c of running) c.kill('SIGKILL');
  rmSync(state, { recursive: true, force: true });
});

async function startHost(): Promise<HostProcess> {
  const child = spawn(process.execPath, [join(distDir, 'host/cli.mjs'), 'serve', '--config', configFile], { stdio: ['ignore', 'pipe', 'pipe'] });
  running.add(child);
  child.on('exit', () => running.delete(child));
  let out = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  const base = await waitFor(
    'the host to listen',
    () => {
      if (child.exitCode !== null) throw new Error(`the host exited: ${out}`);
      return /listening on (http:\/\/\S+\/api\/v2)/.exec(out)?.[1];
    },
    20_000,
  );
  return { child, base, output: () => out };
}

async function stopHost(h: HostProcess, signal: 'SIGKILL' | 'SIGTERM'): Promise<number | null> {
  const exited = new Promise<number | null>((r) => h.child.once('exit', (code) => r(code)));
  h.child.kill(signal);
  return exited;
}

/** `T`: the route's answer type as the caller states it */
async function api<T = unknown>(h: HostProcess, method: string, path: string, body?: unknown): Promise<T> {
  const r = await fetch(`${h.base}${path}`, { method, headers: { token, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
  const json: unknown = await r.json();
  if (!r.ok) throw new Error(`${method} ${path}: ${r.status} ${JSON.stringify(json)}`);
  return json as T;
}

type ListedEvent = { id: string; kind: string; deliveries: { agentId: number; state: string; attempts: number; lastError: string | null }[] };
const deliveriesOf = async (h: HostProcess) => (await api<ListedEvent[]>(h, 'GET', '/notification/events?limit=100')).flatMap((e) => e.deliveries.map((d) => ({ ...d, eventId: e.id })));

describe('fault: receiver down, host killed and restarted', () => {
  it('every event reaches every enabled agent exactly once', async () => {
    const port = await freePort();
    const receiver = new WebhookReceiver({ '/a': WHSEC });
    const url = (p: string) => `http://127.0.0.1:${port}${p}`;

    // 1. Receiver down: agents are created and events emitted; every send is refused.
    const first = await startHost();
    const a = (await api<Agent[]>(first, 'POST', '/notification/agent/create', { type: 'webhook', enabled: true, json: { url: url('/a'), secret: WHSEC } }))[0].id;
    const b = (await api<Agent[]>(first, 'POST', '/notification/agent/create', { type: 'webhook', enabled: true, json: { url: url('/b') } }))[0].id;
    for (let i = 0; i < 2; i++) await api(first, 'POST', `/notification/agent/${a}/update`, { json: { url: url('/a'), secret: WHSEC } });
    await waitFor(
      'every delivery to have failed at least once',
      async () => {
        const ds = await deliveriesOf(first);
        return ds.length === 1 + 2 + 2 * 2 && ds.every((d) => d.state === 'pending' && d.attempts >= 1 && d.lastError?.includes('ECONNREFUSED'));
      },
      15_000,
    );

    // 2. Killed outright, started again on the same state dir; one more event while still down.
    await stopHost(first, 'SIGKILL');
    const second = await startHost();
    await api(second, 'POST', `/notification/agent/${b}/update`, { json: { url: url('/b') } });
    const pending = await deliveriesOf(second);
    expect(pending).toHaveLength(7 + 2);
    expect(pending.every((d) => d.state === 'pending')).toBe(true);

    // 3. The receiver comes back: everything is delivered, once.
    await receiver.start(port);
    try {
      await waitFor('all delivered', async () => (await deliveriesOf(second)).every((d) => d.state === 'delivered'), 15_000);
      await sleep(500); // several poll intervals and backoff periods: time for any duplicate to show
      const delivered = await deliveriesOf(second);
      for (const [agent, path] of [
        [a, '/a'],
        [b, '/b'],
      ] as const) {
        const expected = delivered.filter((d) => d.agentId === agent).map((d) => d.eventId).sort();
        const got = receiver.on(path).map((r) => String(r.headers['webhook-id'])).sort();
        expect(got).toEqual(expected);
        expect(new Set(got).size).toBe(got.length);
      }
      expect(receiver.on('/a').every((r) => r.verified === true)).toBe(true);
      expect(receiver.requests).toHaveLength(9);
      expect(receiver.requests.map((r) => r.json.type).sort()).toEqual([
        'notification.agent.created',
        'notification.agent.created',
        'notification.agent.created',
        'notification.agent.updated',
        'notification.agent.updated',
        'notification.agent.updated',
        'notification.agent.updated',
        'notification.agent.updated',
        'notification.agent.updated',
      ]);

      // 4. A graceful restart sends nothing again.
      expect(await stopHost(second, 'SIGTERM')).toBe(0);
      const third = await startHost();
      await sleep(500);
      expect(receiver.requests).toHaveLength(9);
      expect((await deliveriesOf(third)).every((d) => d.state === 'delivered')).toBe(true);
      expect(await stopHost(third, 'SIGTERM')).toBe(0);
      for (const h of [first, second, third]) expect(h.output()).not.toContain(WHSEC.slice(6));
    } finally {
      await receiver.stop();
    }
  }, 60_000);
});
