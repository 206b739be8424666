import { SystemClient } from '../../handlers/core/system';
import { database, type Env } from '../../handlers/core/bindings';
import type { Vars } from '../../handlers/core/vars';
import {
  applyReconcile,
  describeReport,
  listRules,
  readDevices,
  trafficSettings,
  type ApplyReport,
  type TrafficSettings,
} from '../../handlers/traffic/contract';
import type { HostConfig } from '../config-types';
import { defineArea } from './types';

/**
 * Start-up task: put the stored traffic rules back into tc. tc state does not survive a reboot
 * (nor a `tc qdisc del ... root` by hand), while the rules in the DB do; this re-applies what is
 * missing, with the same reconcile the listing uses (handlers/traffic/state.ts), and logs what
 * it did, skipped (device gone, a root qdisc someone else set up) and left alone.
 *
 * It never blocks or breaks start-up: the host starts it after the server listens and does not
 * wait; every failure becomes a log line. It goes through the host's SYSTEM service like a route
 * does (allow-list, wrapper, audit log under request id `startup-traffic`).
 *
 * When it runs: live and record mode. Not in replay mode (the demo, route tests), whose
 * fixtures describe one fixed moment and would answer the reads with whatever was recorded,
 * unless the config opts in with `settings.traffic.reconcileOnStart: true` (a replay set that has
 * the fixtures for it). `settings.traffic.reconcileOnStart: false` turns it off in any mode.
 */

export const STARTUP_REQUEST_ID = 'startup-traffic';

export type TrafficStartupResult =
  { ran: false; reason: string } | { ran: true; rules: number; report: ApplyReport } | { ran: true; error: string };

export interface TrafficStartupHost {
  config: Pick<HostConfig, 'system'>;
  settings: TrafficSettings;
  env: Env;
  vars: Vars;
}

export function shouldReconcileOnStart(host: Pick<TrafficStartupHost, 'config' | 'settings'>): {
  run: boolean;
  reason: string;
} {
  const setting = host.settings.reconcileOnStart;
  if (setting === false) return { run: false, reason: 'settings.traffic.reconcileOnStart is false' };
  if (host.config.system.mode === 'replay' && setting !== true) {
    return {
      run: false,
      reason: 'replay mode (set settings.traffic.reconcileOnStart: true when the fixtures cover it)',
    };
  }
  return { run: true, reason: `${host.config.system.mode} mode` };
}

export async function reconcileTrafficOnStart(
  host: TrafficStartupHost,
  log: (line: string) => void,
): Promise<TrafficStartupResult> {
  const gate = shouldReconcileOnStart(host);
  if (!gate.run) {
    log(`traffic: start-up reconcile not run: ${gate.reason}`);
    return { ran: false, reason: gate.reason };
  }
  try {
    const t = { system: new SystemClient(host.env.SYSTEM, STARTUP_REQUEST_ID), vars: host.vars };
    const rules = await listRules(database(host.env));
    if (rules.length === 0) {
      log('traffic: start-up reconcile: no stored rules');
      return { ran: true, rules: 0, report: { applied: [], failed: [], skipped: [], stale: [], touched: [] } };
    }
    // Only the devices that have rules: devices are read concurrently; one that is gone maps to
    // undefined and its rules are reported as skipped.
    const states = await readDevices(t, [...new Set(rules.map((r) => r.device))]);
    const report = await applyReconcile(t, rules, states);
    for (const line of describeReport(report)) log(`traffic: ${line}`);
    log(
      `traffic: start-up reconcile done: ${rules.length} stored rule(s), ${report.applied.length} command(s) re-applied, ` +
        `${report.failed.length} failed, ${report.skipped.length} rule(s) skipped`,
    );
    return { ran: true, rules: rules.length, report };
  } catch (e) {
    const error = e instanceof Error ? e.message : String(e);
    log(`traffic: start-up reconcile failed: ${error}`);
    return { ran: true, error };
  }
}

export default defineArea<TrafficSettings>({
  name: 'traffic',
  settings: trafficSettings,
  binaries: { tc: '/usr/sbin/tc', ip: '/usr/sbin/ip' },
  setup: (host) => ({ onStart: () => void reconcileTrafficOnStart(host, host.log) }),
});
