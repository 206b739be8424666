/**
 * Health in isolation mode (issue 29): the host answers /health itself, so it says 503
 * `isolate: dead` once the Deno isolate is killed (during serve()'s isolateDeathGraceMs, before
 * the host stops), and `unresponsive` while the isolate is stopped (SIGSTOP) and so answers nothing.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { serve, type Serving } from '../../runtime/serve';
import { distDir, makeTestConfig } from '../helpers/host';

let s: Serving | undefined;
afterEach(async () => {
  if (s?.isolate?.pid) {
    try {
      process.kill(s.isolate.pid, 'SIGCONT');
    } catch {
      // already gone
    }
  }
  await s?.stop();
  s = undefined;
});

async function health(): Promise<{ status: number; body: { isolate: string | null; status: string } }> {
  const r = await fetch(`${s?.server.url}/api/v2/health`);
  return { status: r.status, body: (await r.json()) as { isolate: string | null; status: string } };
}

/** Polls health (bounded) until it answers `status` with the isolate `isolate`. */
async function healthBecomes(status: number, isolate: string) {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const h = await health();
    if ((h.status === status && h.body.isolate === isolate) || Date.now() > deadline) return h;
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('health with the routes in a Deno isolate', () => {
  it('is 200 alive, then 503 dead once the isolate is killed', async () => {
    const { config } = makeTestConfig({ isolate: 'deno' });
    let died!: (why: string) => void;
    const death = new Promise<string>((r) => (died = r));
    s = await serve({
      config,
      distDir,
      signals: false,
      accessLog: false,
      log: () => undefined,
      onIsolateDeath: died,
      isolateDeathGraceMs: 3000,
    });
    expect(await health()).toEqual({ status: 200, body: expect.objectContaining({ isolate: 'alive', status: 'ok' }) });
    process.kill(s.isolate?.pid ?? 0, 'SIGKILL');
    // (answering `unresponsive` in the moment before the host sees the exit)
    expect(await healthBecomes(503, 'dead')).toEqual({
      status: 503,
      body: expect.objectContaining({ isolate: 'dead', status: 'down' }),
    });
    await s.stop();
    expect(await death).toBe('deno SIGKILL');
  }, 60_000);

  it('is 503 unresponsive while the isolate is stopped, 200 again when it goes on', async () => {
    const { config } = makeTestConfig({ isolate: 'deno' });
    s = await serve({
      config,
      distDir,
      signals: false,
      accessLog: false,
      log: () => undefined,
      onIsolateDeath: () => undefined,
    });
    const pid = s.isolate?.pid ?? 0;
    process.kill(pid, 'SIGSTOP');
    expect(await health()).toEqual({
      status: 503,
      body: expect.objectContaining({ isolate: 'unresponsive', status: 'down' }),
    });
    process.kill(pid, 'SIGCONT');
    expect((await healthBecomes(200, 'alive')).body.isolate).toBe('alive');
  }, 60_000);
});
