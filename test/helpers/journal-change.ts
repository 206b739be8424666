/**
 * A two-intent change for the intent-journal recovery test (test/host/journal-recovery.test.ts),
 * shared by the host the test kills (journal-host.ts, a child process) and the one it restarts:
 * the route, the live back end that runs it, and where its files and directories go.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import * as z from 'zod';
import { route, type RouteModule } from '../../handlers/core/route';
import { LiveBackend } from '../../runtime/system/exec-live';

const bin = (name: string): string => (existsSync(`/usr/bin/${name}`) ? `/usr/bin/${name}` : `/bin/${name}`);
export const SLEEP = bin('sleep');
export const MKDIR = bin('mkdir');
export const RMDIR = bin('rmdir');

/** What the change touches, all under the test's private root. */
export function changePaths(root: string): Record<'conf' | 'added' | 'd1' | 'd2' | 'd3' | 'd4' | 'late', string> {
  const d1 = join(root, 'd1');
  const d2 = join(d1, 'd2');
  const d3 = join(d2, 'd3');
  return {
    conf: join(root, 'service.conf'),
    added: join(root, 'added.conf'),
    d1,
    d2,
    d3,
    d4: join(d3, 'd4'),
    late: join(d1, 'late'),
  };
}

/**
 * Intent 1 keeps `conf` (old, 0640), writes it `mid` (0600) and makes d1 (undo: rmdir d1).
 * Intent 2 keeps `conf` (mid) and `added` (absent), writes `conf` new (0604) and creates
 * `added`, makes d2 (undo: rmdir d2), then d3/d4 (undo: rmdir d4, then d3), then records the
 * undo of a step that never runs (rmdir d1/late) and sleeps `seconds`: the host is killed in that
 * sleep. Only the order of recovery undoes it all (intents and steps newest first, a step's
 * commands in their order): an rmdir of a directory not yet emptied fails.
 */
export function twoIntentChange(root: string): RouteModule {
  const p = changePaths(root);
  return route({
    method: 'POST',
    path: '/fs/test_journal_change',
    permission: 'fs:manage',
    long: { budgetS: 120, phases: ['change'] },
    summary: 'test: a journaled change in two intents, stopped in its last step',
    body: z.strictObject({ seconds: z.number() }),
    response: z.strictObject({ changed: z.boolean() }),
    async handler({ body, system }) {
      const one = await system.beginIntent('fs', [p.conf]);
      await system.writeFile(p.conf, 'mid\n', { mode: 0o600 });
      await system.recordUndo(one, [[RMDIR, '--', p.d1]]);
      await system.run([MKDIR, '--', p.d1]);
      const two = await system.beginIntent('fs', [p.conf, p.added]);
      await system.writeFile(p.conf, 'new\n', { mode: 0o604 });
      await system.writeFile(p.added, 'added\n');
      await system.recordUndo(two, [[RMDIR, '--', p.d2]]);
      await system.run([MKDIR, '--', p.d2]);
      await system.recordUndo(two, [
        [RMDIR, '--', p.d4],
        [RMDIR, '--', p.d3],
      ]);
      await system.run([MKDIR, '-p', '--', p.d4]);
      await system.recordUndo(two, [[RMDIR, '--', p.late]]);
      await system.run([SLEEP, String(body.seconds)]);
      await system.run([MKDIR, '--', p.late]);
      await system.endIntent(two);
      await system.endIntent(one);
      return { changed: true };
    },
  });
}

export function liveBackend(): LiveBackend {
  return new LiveBackend({
    allowedBinaries: new Set([SLEEP, MKDIR, RMDIR]),
    allowedEnv: new Set(),
    baseEnv: {},
    wrapper: [],
    limits: { timeoutMs: 300_000, maxOutputBytes: 1 << 20 },
  });
}
