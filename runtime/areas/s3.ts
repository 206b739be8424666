import { join } from 'node:path';
import { database } from '../../handlers/core/bindings';
import { SystemClient } from '../../handlers/core/system';
import { pendingIntents, s3Settings, settleIntent, type S3Settings } from '../../handlers/s3/contract';
import { s3Ops } from './s3/ops';
import { defineArea, type AreaHost } from './types';

export const STARTUP_REQUEST_ID = 'startup-s3';

/**
 * Start-up task: settle the share changes a kill -9 interrupted (handlers/s3/journal.ts): an
 * unfinished create or update is rolled back, an unfinished delete completed. Each is logged and
 * emits `s3.share.recovered` (shareName, op, outcome, complete). A row whose steps failed stays
 * for the next start. Runs through the SYSTEM service like a route (allow-list, audit under
 * request id `startup-s3`); never throws.
 */
export async function settleS3Intents(
  host: Pick<AreaHost<S3Settings>, 'env' | 'vars' | 'events'>,
  log: (line: string) => void,
): Promise<number> {
  const db = database(host.env);
  let intents;
  try {
    intents = await pendingIntents(db);
  } catch (e) {
    log(`s3: cannot read the intent journal: ${String(e)}`);
    return 0;
  }
  const sys = new SystemClient(host.env.SYSTEM, STARTUP_REQUEST_ID);
  for (const intent of intents) {
    try {
      const r = await settleIntent(sys, host.vars, db, intent);
      // recorded before the log line, so a line seen means the event is stored too
      await host.events.send({
        kind: 's3.share.recovered',
        data: { shareName: intent.shareName, op: intent.op, outcome: r.outcome, complete: r.complete },
      });
      const failed = r.steps.filter((s) => !s.ok).map((s) => `${s.step}: ${s.error ?? 'failed'}`);
      log(
        `s3: unfinished ${intent.op} of share ${intent.shareName} (request ${intent.requestId ?? '-'}) ${r.complete ? r.outcome : `not fully ${r.outcome}; retried at next start`}` +
          `: ${r.steps.map((s) => s.step).join('; ')}${failed.length ? ` — failed: ${failed.join('; ')}` : ''}`,
      );
    } catch (e) {
      log(`s3: settling the unfinished ${intent.op} of share ${intent.shareName} failed: ${String(e)}`);
    }
  }
  return intents.length;
}

/** S3 shares: one systemd service per share; the host resolves share paths and settles unfinished changes. */
export default defineArea<S3Settings>({
  name: 's3',
  settings: s3Settings,
  paths: {
    s3UnitDir: { default: '/etc/systemd/system', kind: 'dir' },
    s3EnvDir: { default: '/etc/ballast/s3', kind: 'dir' },
  },
  binaries: { ss: '/usr/bin/ss', systemctl: '/usr/bin/systemctl' },
  setup: (host) => ({
    ops: s3Ops({
      settings: host.settings,
      db: host.db,
      checkOwner: (real, o) => host.checkOwner(real, 's3.share', o),
    }),
    // no command takes these: the kind makes the host check share paths for other owners' files
    // and report share roots that reach them at start
    confine: { roots: { 's3.share': host.settings.shareRoots.map((r) => join(host.settings.pathRoot, r)) } },
    onStart: async () => {
      await settleS3Intents(host, host.log);
    },
  }),
});
