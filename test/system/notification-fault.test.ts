import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawn, type ChildProcess } from 'node:child_process';
import { writeFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import * as z from 'zod';
import { stringify } from 'yaml';
import { dbFile, type HostConfig } from '../../runtime/config';
import { openDatabase } from '../../runtime/db/database';
import { createToken } from '../../runtime/tokens';
import { event } from '../../handlers/notification/responses';
import { distDir, makeTestConfig } from '../helpers/host';
import { freePort, waitFor, WebhookReceiver, type WebhookRequest } from '../helpers/notification-peers';

/**
 * The fault test, with real `node dist/host/cli.mjs serve` processes on one state dir and a real
 * HTTP receiver that verifies signatures: the receiver fails the first sends, answers slowly, is
 * taken down; the host is killed with SIGKILL twice while its queues are half drained, and
 * started again; the receiver comes back. Every notification must arrive, in event order per
 * agent (the arrival order itself, never sorted), with duplicates only where the README allows
 * them: the same webhook-id, straight after a kill. Then a graceful restart sends nothing again.
 *
 * Each host generation runs with its own productName, so its user-agent (`<productName>-notifier`)
 * says which process sent each request: that is how "right after a kill" is checked, without
 * relying on timing.
 */

const SECRETS = {
  '/a': `whsec_${Buffer.from('fault-test-secret-a-0123456789ab').toString('base64')}`,
  '/b': `whsec_${Buffer.from('fault-test-secret-b-0123456789ab').toString('base64')}`,
} as const;
type Path = keyof typeof SECRETS;
/** The receiver answers the first sends on each path with these, then 204 (the first is held until the events are in). */
const FIRST_REPLIES: Record<Path, number[]> = { '/a': [503, 503, 503], '/b': [503, 429] };
/** How long the receiver takes to answer: slower than nothing, so that queues build up. */
const ANSWER_MS = 30;

let config: HostConfig;
let state: string;
let configFile: string;
let token: string;
const running = new Set<ChildProcess>();

beforeAll(async () => {
  ({ config, state } = makeTestConfig({
    // Small backoff so the test is quick; many attempts so nothing gives up while the peer is down.
    settings: {
      notification: {
        backoffBaseMs: 50,
        backoffMaxMs: 250,
        maxAttempts: 100,
        pollIntervalMs: 100,
        timeoutMs: 3000,
        allowLocalTargets: true,
      },
    },
  }));
  configFile = join(state, 'config.yaml');
  const db = openDatabase(dbFile(config));
  token = (await createToken(db, 'fault-test', ['*'])).token;
  db.close();
});

afterAll(async () => {
  for (const c of running) c.kill('SIGKILL');
  rmSync(state, { recursive: true, force: true });
});

interface HostProcess {
  child: ChildProcess;
  base: string;
  generation: number;
  output: () => string;
}

let generations = 0;

/** Starts host generation n+1: the same config and state dir, productName `Gen<n+1>`. */
async function startHost(): Promise<HostProcess> {
  const generation = ++generations;
  writeFileSync(configFile, stringify({ ...config, productName: `Gen${generation}` }));
  const child = spawn(process.execPath, [join(distDir, 'host/cli.mjs'), 'serve', '--config', configFile], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
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
  return { child, base, generation, output: () => out };
}

async function stopHost(h: HostProcess, signal: 'SIGKILL' | 'SIGTERM'): Promise<number | null> {
  const exited = new Promise<number | null>((r) => h.child.once('exit', (code) => r(code)));
  h.child.kill(signal);
  return exited;
}

async function api(h: HostProcess, method: string, path: string, body?: unknown): Promise<unknown> {
  const r = await fetch(`${h.base}${path}`, {
    method,
    headers: { token, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const json: unknown = await r.json();
  if (!r.ok) throw new Error(`${method} ${path}: ${r.status} ${JSON.stringify(json)}`);
  return json;
}

const created = z.array(z.object({ id: z.number().int() })).length(1);
const listed = z.array(event);

async function createAgent(h: HostProcess, json: Record<string, unknown>, enabled = true): Promise<number> {
  return created.parse(await api(h, 'POST', '/notification/agent/create', { type: 'webhook', enabled, json }))[0].id;
}

/** Emits `n` events through the routes: updates of a disabled agent, now and then a create + destroy. */
async function emit(h: HostProcess, other: number, n: number, url: string): Promise<void> {
  for (let i = 0; i < n; i++) {
    if (i % 5 === 4) {
      const tmp = await createAgent(h, { url }, false);
      await api(h, 'POST', `/notification/agent/${tmp}/destroy`, {});
      i++;
    } else
      await api(h, 'POST', `/notification/agent/${other}/update`, { json: { url: `${url}?n=${h.generation}-${i}` } });
  }
}

const eventsOf = async (h: HostProcess) => listed.parse(await api(h, 'GET', '/notification/events?limit=500'));
const deliveriesOf = async (h: HostProcess, agent: number) =>
  (await eventsOf(h)).flatMap((e) =>
    e.deliveries.filter((d) => d.agentId === agent).map((d) => ({ ...d, eventId: e.id, seq: e.seq })),
  );

/** Which host generation sent a request (its user-agent is `Gen<n>-notifier`). */
function generationOf(r: WebhookRequest): number {
  const m = /^Gen(\d+)-notifier$/.exec(String(r.headers['user-agent']));
  if (!m) throw new Error(`unexpected user-agent ${String(r.headers['user-agent'])}`);
  return Number(m[1]);
}

/**
 * The arrivals on one path (requests answered 2xx), in the order they came, with the repeats
 * the README allows removed: a repeat must have the same webhook-id as the arrival just before
 * it, come from a later host generation than that one (a kill in between: every restart in this
 * test is a kill), and be the first arrival of its generation. Anything else fails the test.
 */
function arrivalsOf(requests: WebhookRequest[]): { ids: string[]; repeats: number } {
  const ok = requests.filter((r) => r.answered !== undefined && r.answered >= 200 && r.answered < 300);
  const ids: string[] = [];
  let repeats = 0;
  for (let i = 0; i < ok.length; i++) {
    const id = String(ok[i].headers['webhook-id']);
    if (i > 0 && id === ids.at(-1)) {
      const firstOfItsGeneration = ok.findIndex((r) => generationOf(r) === generationOf(ok[i])) === i;
      expect({ repeat: id, afterKill: generationOf(ok[i]) > generationOf(ok[i - 1]) && firstOfItsGeneration }).toEqual({
        repeat: id,
        afterKill: true,
      });
      repeats++;
      continue;
    }
    ids.push(id);
  }
  return { ids, repeats };
}

describe('fault: failing, slow, then absent receiver; host killed twice mid-queue', () => {
  it('every event reaches every agent, in event order, duplicates only right after a kill', async () => {
    const port = await freePort();
    const receiver = new WebhookReceiver(SECRETS, ANSWER_MS);
    for (const [path, replies] of Object.entries(FIRST_REPLIES))
      receiver.replies.set(path, ['hold', ...replies.slice(1), 204]);
    const url = (p: string) => `http://127.0.0.1:${port}${p}`;
    await receiver.start(port);
    try {
      // 1. The receiver holds the first send of each agent while the events pile up behind it,
      //    fails it and the next ones, then answers slowly.
      const first = await startHost();
      const a = await createAgent(first, { url: url('/a'), secret: SECRETS['/a'] });
      const b = await createAgent(first, { url: url('/b'), secret: SECRETS['/b'] });
      const other = await createAgent(first, { url: url('/nobody') }, false);
      await waitFor('the first send of each agent to be held', () => receiver.holding === 2);
      await emit(first, other, 25, url('/nobody'));
      receiver.release(503);
      await waitFor('a few arrivals on both paths after the failures', () =>
        (['/a', '/b'] as const).every((p) => receiver.on(p).filter((r) => r.answered === 204).length >= 4),
      );
      // Killed mid-queue, while sends are flowing.
      for (const agent of [a, b])
        expect((await deliveriesOf(first, agent)).filter((d) => d.state === 'pending').length).toBeGreaterThan(10);
      await stopHost(first, 'SIGKILL');
      await receiver.stop();

      // 2. The receiver is down. Only each agent's oldest pending notification is tried; the
      //    rest waits behind it, and the events route says so.
      const second = await startHost();
      await emit(second, other, 10, url('/nobody'));
      for (const agent of [a, b]) {
        await waitFor(
          `agent ${agent}'s head to be refused`,
          async () =>
            (await deliveriesOf(second, agent)).some(
              (d) => d.state === 'pending' && d.attempts >= 1 && d.lastError?.includes('ECONNREFUSED') === true,
            ),
          10_000,
        );
        const pending = (await deliveriesOf(second, agent))
          .filter((d) => d.state === 'pending')
          .sort((x, y) => x.seq - y.seq);
        expect(pending.length).toBeGreaterThan(10);
        const head = pending[0];
        expect(head.heldBy).toBeNull();
        expect(pending.slice(1).every((d) => d.heldBy === head.eventId)).toBe(true);
        // Only the head has been tried (a send the kill cut short was never recorded).
        expect(pending.slice(1).filter((d) => d.attempts > 0)).toEqual([]);
      }
      // Killed again, mid-queue.
      await stopHost(second, 'SIGKILL');

      // 3. Started again, more events, and the receiver comes back: the queues drain.
      const third = await startHost();
      await emit(third, other, 5, url('/nobody'));
      await receiver.start(port);
      await waitFor(
        'everything delivered',
        async () => (await eventsOf(third)).every((e) => e.deliveries.every((d) => d.state === 'delivered')),
        30_000,
      );
      // A graceful stop (the receiver has answered every send by now) and one more start: nothing is sent again.
      expect(await stopHost(third, 'SIGTERM')).toBe(0);
      const sentBefore = receiver.requests.length;
      const fourth = await startHost();
      // One more event, for both agents: it arrives, and nothing before it (a send of anything
      // left over would come first: one queue per agent, in event order), so its arrival bounds
      // the wait for a wrong send.
      await emit(fourth, other, 1, url('/nobody'));
      const last = (await eventsOf(fourth)).reduce((x, y) => (y.seq > x.seq ? y : x)).id;
      await waitFor('the new event delivered to both agents', async () => {
        const d = (await eventsOf(fourth)).find((e) => e.id === last)?.deliveries ?? [];
        return d.length === 2 && d.every((x) => x.state === 'delivered');
      });
      expect(
        receiver.requests
          .slice(sentBefore)
          .map((r) => `${r.path} ${String(r.headers['webhook-id'])}`)
          .sort(),
      ).toEqual([`/a ${last}`, `/b ${last}`]);

      const events = (await eventsOf(fourth)).sort((x, y) => x.seq - y.seq);
      for (const [agent, path] of [
        [a, '/a'],
        [b, '/b'],
      ] as const) {
        const expected = events
          .filter((e) => e.deliveries.some((d) => d.agentId === agent && d.state === 'delivered'))
          .map((e) => e.id);
        expect(expected.length).toBeGreaterThan(35);
        const got = receiver.on(path);
        const { ids } = arrivalsOf(got);
        // The arrival order itself: no sort.
        expect(ids).toEqual(expected);
        // Each body carries its event's sequence, increasing along the arrivals.
        const seqById = new Map(events.map((e) => [e.id, e.seq]));
        const answered = got.filter((r) => r.answered === 204);
        expect(answered.every((r) => r.json.sequence === seqById.get(String(r.headers['webhook-id'])))).toBe(true);
        // The first sends were refused as told, and they were all the first event's.
        const refused = got.filter((r) => r.answered !== undefined && r.answered >= 300);
        expect(refused.slice(0, FIRST_REPLIES[path].length).map((r) => [r.answered, r.headers['webhook-id']])).toEqual(
          FIRST_REPLIES[path].map((s) => [s, expected[0]]),
        );
        expect(got.every((r) => r.verified === true)).toBe(true);
      }
      expect(await stopHost(fourth, 'SIGTERM')).toBe(0);
      for (const h of [first, second, third, fourth])
        for (const secret of Object.values(SECRETS)) expect(h.output()).not.toContain(secret.slice(6));
    } finally {
      await receiver.stop();
    }
  }, 90_000);
});
