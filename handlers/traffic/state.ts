import { commandFailed, commandTimeout, type ExecResult, type SystemClient } from '../core/system';
import { bin, type Vars } from '../core/vars';
import { linkNames, parseIpLink, type LinkName } from '../tools/ip-link';
import { parseTcClass } from './parse/tc-class';
import { parseTcFilter } from './parse/tc-filter';
import { parseTcQdisc, type QueueEntry } from './parse/tc-qdisc';
import { TC, showClassArgv, showFilterArgv, showQdiscArgv, type Argv } from './plan';
import { reconcile, type DeviceTcState, type ReconcileResult } from './reconcile';
import { deviceName } from './names';
import type { StoredRule } from './store';

/**
 * Running tc for the traffic routes and the start-up task: reading a device's state, applying
 * what reconcile() plans, and telling "already gone" apart from a real failure.
 *
 * plan.ts speaks `/usr/sbin/tc` (the argv the fixtures were recorded with); here the first
 * element is swapped for the configured binary (vars.bin.tc), which is the same path unless a
 * box installs tc elsewhere.
 */

export interface TcContext {
  system: SystemClient;
  vars: Vars;
}

/** Devices read at once by readDevices: 3 commands each, kept well under the host's queue. */
const DEVICE_CONCURRENCY = 4;

export function tcArgv(vars: Vars, argv: Argv): string[] {
  return argv[0] === TC ? [bin(vars, 'tc'), ...argv.slice(1)] : [...argv];
}

/** exec; a timeout is always an error, a non-zero exit is for the caller to judge. */
export async function execTc(t: TcContext, argv: Argv): Promise<ExecResult> {
  const full = tcArgv(t.vars, argv);
  const r = await t.system.exec(full);
  if (r.timedOut) throw commandTimeout(full, r);
  return r;
}

/** exec, and a non-zero exit becomes the 502 naming the command (SystemClient.run's contract). */
export async function runTc(t: TcContext, argv: Argv): Promise<ExecResult> {
  const r = await execTc(t, argv);
  if (r.code !== 0) throw commandFailed(tcArgv(t.vars, argv), r);
  return r;
}

const NO_DEVICE = /Cannot find device/;

/**
 * tc's answers when the object a `del` names is not there (recorded on iproute2 6.1 / Linux 6.x,
 * fixtures/tc/cmd-*-missing.yaml): the class or its qdisc is gone (ENOENT), the u32 item or the
 * whole u32 instance is gone, the htb root is gone, or the device itself is.
 */
const GONE = [
  /RTNETLINK answers: No such file or directory/,
  /Specified filter handle not found/,
  /Cannot find specified filter chain/,
  /Parent Qdisc doesn't exists/,
  NO_DEVICE,
];

export function isGone(stderr: string): boolean {
  return GONE.some((re) => re.test(stderr));
}

/**
 * The device's qdiscs, classes and filters; null when the device does not exist. The three reads
 * run concurrently: each is a snapshot anyway, and a listing of many devices should not wait
 * for 3N commands in a row.
 */
export async function readDevice(t: TcContext, dev: string): Promise<DeviceTcState | null> {
  const argvs = [showQdiscArgv(dev), showClassArgv(dev), showFilterArgv(dev)];
  const [q, c, f] = await Promise.all(argvs.map((a) => execTc(t, a)));
  const results = [q!, c!, f!];
  if (results.some((r) => r.code !== 0 && NO_DEVICE.test(r.stderr))) return null;
  results.forEach((r, i) => {
    if (r.code !== 0) throw commandFailed(tcArgv(t.vars, argvs[i]!), r);
  });
  return { queues: parseTcQdisc(q!.stdout, dev), classes: parseTcClass(c!.stdout), filters: parseTcFilter(f!.stdout) };
}

/** readDevice for several devices, DEVICE_CONCURRENCY at a time; a missing device maps to undefined. */
export async function readDevices(
  t: TcContext,
  devs: readonly string[],
): Promise<Record<string, DeviceTcState | undefined>> {
  const out: Record<string, DeviceTcState | undefined> = {};
  await mapLimit(devs, DEVICE_CONCURRENCY, async (d) => {
    out[d] = (await readDevice(t, d)) ?? undefined;
  });
  return out;
}

/**
 * The queues to plan with. tc does not list the builtin `noop` root of a device that was never
 * up (`tc -j qdisc show dev X` prints `[]`, `ip link` says qdisc noop), yet htb attaches to it
 * like to any kernel default; without this the plan would read "no root" as foreign.
 */
export function withKernelRoot(dev: string, queues: readonly QueueEntry[]): QueueEntry[] {
  if (queues.some((q) => q.owner === 'root')) return [...queues];
  return [{ qtype: 'noop', handler: 0, device: dev, owner: 'root' }, ...queues];
}

export function planningState(dev: string, s: DeviceTcState): DeviceTcState {
  return { ...s, queues: withKernelRoot(dev, s.queues) };
}

/** Interfaces of the box (or of the namespace the host's wrapper runs tc in), in ifindex order. */
export async function listLinks(t: TcContext): Promise<LinkName[]> {
  const argv = [bin(t.vars, 'ip'), '-j', 'link', 'show'];
  const r = await t.system.exec(argv);
  if (r.timedOut) throw commandTimeout(argv, r);
  if (r.code !== 0) throw commandFailed(argv, r);
  // A name tc's argv could not carry safely (plan.ts refuses it) is not a device we can shape.
  return linkNames(parseIpLink(r.stdout)).filter((l) => deviceName.safeParse(l.name).success);
}

export interface ApplyReport {
  /** commands that ran and succeeded, in order */
  applied: string[][];
  /** the first failing command of a device (later ones for that device were not tried) */
  failed: { device: string; argv: string[]; error: string }[];
  skipped: ReconcileResult['skipped'];
  stale: ReconcileResult['stale'];
  /** devices on which something ran */
  touched: string[];
}

/**
 * Put back what the stored rules say and tc lacks (see reconcile.ts; every command is a
 * `replace`, so running this twice, or alongside a create of the same rule, is harmless).
 * Devices are repaired concurrently; on one device the commands run in order (root, classes,
 * filters) and stop at the first failure, since the later ones depend on it. Never throws for a
 * tc failure: the report says what happened and the caller logs it.
 */
export async function applyReconcile(
  t: TcContext,
  rules: readonly StoredRule[],
  states: Readonly<Record<string, DeviceTcState | undefined>>,
): Promise<ApplyReport> {
  const planning: Record<string, DeviceTcState | undefined> = {};
  for (const [d, s] of Object.entries(states)) planning[d] = s && planningState(d, s);
  const plan = reconcile(rules, planning);
  const byDevice = new Map<string, Argv[]>();
  for (const argv of plan.argv) {
    const dev = argv[argv.indexOf('dev') + 1]!;
    byDevice.set(dev, [...(byDevice.get(dev) ?? []), argv]);
  }
  const report: ApplyReport = {
    applied: [],
    failed: [],
    skipped: plan.skipped,
    stale: plan.stale,
    touched: [...byDevice.keys()],
  };
  await mapLimit([...byDevice], DEVICE_CONCURRENCY, async ([device, argvs]) => {
    for (const argv of argvs) {
      try {
        await runTc(t, argv);
        report.applied.push(tcArgv(t.vars, argv));
      } catch (e) {
        report.failed.push({ device, argv: tcArgv(t.vars, argv), error: e instanceof Error ? e.message : String(e) });
        return;
      }
    }
  });
  return report;
}

/** One log line per thing that happened, for the start-up log and the listing's repairs. */
export function describeReport(r: ApplyReport): string[] {
  return [
    ...r.applied.map((a) => `re-applied: ${a.join(' ')}`),
    ...r.failed.map((f) => `failed on ${f.device}: ${f.argv.join(' ')}: ${f.error}`),
    ...r.skipped.map((s) => `skipped rule ${s.rule} on ${s.device}: ${s.reason}`),
    ...r.stale.map((s) => `left alone on ${s.device}: ${s.kind} ${s.id} under our root belongs to no stored rule`),
  ];
}

/** Run fn over items with at most `limit` in flight; rejects with the first error. */
export async function mapLimit<T>(items: readonly T[], limit: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < items.length) await fn(items[next++]!);
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
}
