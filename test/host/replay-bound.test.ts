/**
 * The replay back end keeps a bounded record of its calls: a long-running replay host (the
 * demo, the bench) holds at most maxCalls of them, the newest, while tests still read `calls`.
 */
import { describe, expect, it } from 'vitest';
import { ReplayBackend, REPLAY_CALLS_KEPT } from '../../runtime/system/replay';
import { fixture } from '../helpers/host';
import { backendFor } from '../../runtime/host';
import { defaultConfig, mergeConfig } from '../../runtime/config';
import { AREAS } from '../../runtime/areas';

describe('ReplayBackend.calls', () => {
  it('keeps the newest calls, dropping the oldest half past the bound', async () => {
    const r = new ReplayBackend([fixture(['/usr/bin/klist'], 'x\n')], {}, { maxCalls: 10 });
    for (let i = 0; i < 25; i++) await r.exec(['/usr/bin/klist'], { env: { N: String(i) } });
    // 10 reached at call 10 → 5 kept; again at 15 and 20 → 5 left, then 21..24 added
    expect(r.calls.map((c) => c.env?.N)).toEqual(['15', '16', '17', '18', '19', '20', '21', '22', '23', '24']);
    expect(r.calls.length).toBeLessThanOrEqual(10);
  });

  it('maxCalls 0 records nothing; the default keeps REPLAY_CALLS_KEPT', async () => {
    const none = new ReplayBackend([fixture(['/usr/bin/klist'], 'x\n')], {}, { maxCalls: 0 });
    await none.exec(['/usr/bin/klist'], {});
    expect(none.calls).toEqual([]);
    const dflt = new ReplayBackend([fixture(['/usr/bin/klist'], 'x\n')]);
    for (let i = 0; i < REPLAY_CALLS_KEPT + 1; i++) await dflt.exec(['/usr/bin/klist'], {});
    expect(dflt.calls.length).toBe(REPLAY_CALLS_KEPT / 2 + 1);
    expect(REPLAY_CALLS_KEPT).toBe(10_000);
  });

  it('a configured replay host records no calls unless a test asks (replayCallsKept)', async () => {
    const config = mergeConfig(defaultConfig(), { system: { ...defaultConfig().system, mode: 'replay' } });
    const run = async (b: ReturnType<typeof backendFor>) => {
      await b.exec(['/usr/bin/klist'], {}).catch(() => undefined); // no fixture: refused, still a call
      return (b as ReplayBackend).calls.map((c) => c.argv);
    };
    expect(await run(backendFor(config))).toEqual([]);
    expect(await run(backendFor(config, AREAS, 5))).toEqual([['/usr/bin/klist']]);
  });

  it('once fixtures are still used in order, then the sticky one answers', async () => {
    const r = new ReplayBackend([
      fixture(['/usr/bin/klist'], 'sticky\n'),
      fixture(['/usr/bin/klist'], 'first\n', { once: true }),
      fixture(['/usr/bin/klist'], 'second\n', { once: true }),
    ]);
    const out = [];
    for (let i = 0; i < 3; i++) out.push((await r.exec(['/usr/bin/klist'], {})).stdout);
    expect(out).toEqual(['first\n', 'second\n', 'sticky\n']);
  });
});
