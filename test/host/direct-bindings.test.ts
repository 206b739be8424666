/**
 * In-process handlers reach SYSTEM with a method call (env.SYSTEM_DIRECT); anything that only has
 * a Fetcher (an isolate's env, a Workers service-binding stub answering every property) goes
 * through the fetch protocol, and both give the same answers and the same errors.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import * as z from 'zod';
import { route } from '../../handlers/core/route';
import { SystemClient, system } from '../../handlers/core/system';
import { ApiError } from '../../handlers/core/errors';
import type { Env, Fetcher } from '../../handlers/core/bindings';
import { SystemRefusal } from '../../runtime/system/types';
import { copyPlain, freshResult } from '../../runtime/system/service';
import { makeTestHost, fixture, type TestHost } from '../helpers/host';

const echo = route({
  method: 'POST',
  path: '/speedtest/echo',
  permission: 'speedtest:read',
  summary: 'echo through a host op',
  body: z.strictObject({ word: z.string() }),
  response: z.object({ echoed: z.string(), argv: z.array(z.string()) }),
  async handler({ body, system }) {
    const r = await system.op<{ echoed: string }>('test/echo', { word: body.word });
    const argv = ['/usr/bin/klist', '-A'];
    const ran = await system.exec(argv);
    // a route changing its own argv afterwards must not change what the host recorded
    argv.push('--changed-after');
    return { echoed: r.echoed, argv: ran.stdout.trim().split(' ') };
  },
});

/** A Workers service-binding stub: every property exists (JS RPC), only fetch really works. */
function rpcStub(target: Fetcher, counter: { n: number }): Fetcher {
  return new Proxy({} as Fetcher, {
    get(_t, prop) {
      if (prop === 'fetch')
        return (input: Request | string, init?: RequestInit) => {
          counter.n++;
          return target.fetch(input, init);
        };
      return () => Promise.resolve(undefined);
    },
    has: () => true,
  });
}

let t: TestHost;
let opPayloads: unknown[];
const kept = { list: [1, 2] };
beforeAll(async () => {
  opPayloads = [];
  t = await makeTestHost({
    routes: [echo],
    fixtures: [fixture(['/usr/bin/klist', '-A'], 'ticket one\n')],
    extraOps: {
      'test/echo': async (p) => {
        opPayloads.push(p);
        return { echoed: String(p.word) };
      },
      'test/refuse': async () => {
        throw new SystemRefusal('conflict', 'busy with something else');
      },
      'test/kept': async () => kept,
      'test/fresh': freshResult(async () => kept),
      'test/crash': async () => {
        throw new Error('secret internals');
      },
    },
  });
});
afterAll(() => t.close());

describe('SYSTEM binding in-process', () => {
  it('the host env carries SYSTEM_DIRECT, and routes use it instead of SYSTEM.fetch', async () => {
    expect(typeof t.host.env.SYSTEM_DIRECT?.call).toBe('function');
    const counter = { n: 0 };
    const realFetch = t.host.env.SYSTEM.fetch;
    const env: Env = { ...t.host.env, SYSTEM: rpcStub({ fetch: realFetch }, counter) };
    const res = await t.host.app.fetch(
      new Request('http://ballast.local/api/v2/speedtest/echo', {
        method: 'POST',
        headers: { token: t.adminToken, 'content-type': 'application/json' },
        body: JSON.stringify({ word: 'direct' }),
      }),
      env,
    );
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ echoed: 'direct', argv: ['ticket', 'one'] });
    expect(counter.n).toBe(0);
    expect(t.replay?.calls.at(-1)?.argv).toEqual(['/usr/bin/klist', '-A']);
  });

  it('an env without SYSTEM_DIRECT (an isolate) goes through the fetch protocol, even when SYSTEM answers any property', async () => {
    const counter = { n: 0 };
    const env: Env = { ...t.host.env, SYSTEM: rpcStub({ fetch: t.host.env.SYSTEM.fetch }, counter) };
    delete env.SYSTEM_DIRECT;
    const res = await t.host.app.fetch(
      new Request('http://ballast.local/api/v2/speedtest/echo', {
        method: 'POST',
        headers: { token: t.adminToken, 'content-type': 'application/json' },
        body: JSON.stringify({ word: 'fetched' }),
      }),
      env,
    );
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ echoed: 'fetched', argv: ['ticket', 'one'] });
    // one op call and one exec, each one fetch
    expect(counter.n).toBe(2);
  });

  it('the payload is copied: what the host keeps does not change when the caller changes its object', async () => {
    const client = system(t.host.env, 'req-copy-1');
    const argv = ['/usr/bin/klist', '-A'];
    const before = t.replay!.calls.length;
    const r = await client.exec(argv);
    argv[1] = '-X';
    expect(t.replay!.calls[before].argv).toEqual(['/usr/bin/klist', '-A']);
    expect(r.stdout).toBe('ticket one\n');
    const payload = { word: 'kept' };
    await client.op('test/echo', payload);
    payload.word = 'changed';
    expect(opPayloads.at(-1)).toEqual({ word: 'kept' });
    expect(opPayloads.at(-1)).not.toBe(payload);
  });

  it('results are copied, except from an op marked freshResult', async () => {
    const client = system(t.host.env, 'req-copy-2');
    const copied = await client.op<typeof kept>('test/kept', {});
    expect(copied).toEqual(kept);
    expect(copied).not.toBe(kept);
    expect(await client.op('test/fresh', {})).toBe(kept);
  });

  it('refusals and crashes become the same errors on both paths', async () => {
    const direct = system(t.host.env, 'req-err-1');
    const fetched = new SystemClient(t.host.env.SYSTEM, 'req-err-2');
    for (const client of [direct, fetched]) {
      const refused = await client.op('test/refuse', {}).catch((e: unknown) => e);
      expect(refused).toBeInstanceOf(ApiError);
      expect((refused as ApiError).code).toBe('conflict');
      expect((refused as ApiError).message).toBe('busy with something else');
      const crashed = await client.op('test/crash', {}).catch((e: unknown) => e);
      expect((crashed as ApiError).code).toBe('internal');
      expect((crashed as ApiError).message).toBe('system operation test/crash failed');
      const unknown = await client.op('test/none', {}).catch((e: unknown) => e);
      expect((unknown as ApiError).code).toBe('not_found');
    }
  });
});

describe('built route bundles over the direct binding', () => {
  it('a host refusal reaches a bundled route as its status (the bundle has its own error classes)', async () => {
    const h = await makeTestHost({ config: { settings: { fs: { readRoots: ['/srv'] } } } as never });
    try {
      const r = await h.call('POST', '/api/v2/fs/explore', { body: { fs_path: '/etc' } });
      expect(r.status).toBe(403);
      expect(r.text).toContain('outside the directories explore may read');
    } finally {
      await h.close();
    }
  });
});

describe('copyPlain, the copy of the direct binding', () => {
  it('copies plain data deeply, keeps undefined, keeps an own __proto__ key as data', () => {
    const src = { a: [1, { b: 'x' }], u: undefined, n: null, nested: { deep: [true] } };
    const copy = copyPlain(src);
    expect(copy).toEqual(src);
    expect(copy).not.toBe(src);
    expect(copy.a[1]).not.toBe(src.a[1]);
    expect('u' in copy).toBe(true);
    const hostile = JSON.parse('{"__proto__": {"polluted": 1}, "ok": 2}') as Record<string, unknown>;
    const c2 = copyPlain(hostile);
    expect(Object.getPrototypeOf(c2)).toBe(Object.prototype);
    expect(Object.keys(c2)).toEqual(['__proto__', 'ok']);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('plain data never goes through structuredClone (on Node 20 each call left native memory behind)', () => {
    const spy = vi.spyOn(globalThis, 'structuredClone');
    try {
      const nullProto = Object.assign(Object.create(null) as Record<string, unknown>, { k: [1] });
      const src = { list: [{ a: 1 }, [2, [3]]], nullProto, s: 'x' };
      const copy = copyPlain(src);
      expect(copy).toEqual({ list: [{ a: 1 }, [2, [3]]], nullProto: { k: [1] }, s: 'x' });
      expect(copy.nullProto.k).not.toBe(nullProto.k);
      expect(spy).not.toHaveBeenCalled();
      copyPlain([new Map([[1, 2]])]);
      expect(spy).toHaveBeenCalledTimes(1);
    } finally {
      spy.mockRestore();
    }
  });

  it('an own __proto__ key is copied as an ordinary data property', () => {
    const c = copyPlain(JSON.parse('{"__proto__": {"x": 1}}') as Record<string, unknown>);
    expect(Object.getOwnPropertyDescriptor(c, '__proto__')).toEqual({
      value: { x: 1 },
      enumerable: true,
      writable: true,
      configurable: true,
    });
  });

  it('anything not plain is structured-cloned', () => {
    const d = new Date(5);
    const c = copyPlain({ d });
    expect(c.d).toBeInstanceOf(Date);
    expect(c.d).not.toBe(d);
    expect(c.d.getTime()).toBe(5);
  });
});
