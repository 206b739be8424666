/**
 * The runtime half of a network checkpoint: what the kernel had for the devices a change names
 * (links, IPv4 addresses, routes, tc), read with the tools' own JSON before the change, and the
 * commands that bring the kernel back to it afterwards.
 *
 * Why a snapshot and not only the change's undo steps: the undo steps are written by the code
 * that made the change, so they share its blind spots (an `up`/`down` has none; a flush drops a
 * default route nobody recorded; a step that half ran). Comparing what `ip -j` shows after the
 * undo with what it showed before finds those, and the same comparison run once more after the
 * corrections is the truthful answer to "is everything back" (`unrestored`).
 *
 * Pure except `captureRuntime`, which only reads.
 */
import * as z from 'zod';

export interface LinkState {
  ifname: string;
  up: boolean;
  mtu: number;
  master: string | null;
  kind: string | null;
}
export interface AddressState {
  local: string;
  prefixlen: number;
  broadcast?: string;
  label?: string;
  dynamic: boolean;
}
export interface RouteState {
  dst: string;
  gateway?: string;
  dev: string;
  protocol?: string;
  scope?: string;
  prefsrc?: string;
  metric?: number;
}
export interface TcState {
  dev: string;
  /** one line per qdisc, class and filter (kind, handle, parent, rate): what a rule changes */
  entries: string[];
}
export interface RuntimeSnapshot {
  /** the devices the checkpoint covers (those named, their masters, their ports) */
  scope: string[];
  links: LinkState[];
  /** IPv4 addresses per device in scope */
  addrs: Record<string, AddressState[]>;
  /** IPv4 routes of the main table through a device in scope */
  routes: RouteState[];
  tc: TcState[];
}

const linkRec = z.looseObject({
  ifname: z.string(),
  flags: z.array(z.string()).default([]),
  mtu: z.number().default(1500),
  master: z.string().optional(),
  linkinfo: z.looseObject({ info_kind: z.string().optional() }).optional(),
});
const addrRec = z.looseObject({
  ifname: z.string(),
  addr_info: z
    .array(
      z.looseObject({
        family: z.string(),
        local: z.string(),
        prefixlen: z.number(),
        broadcast: z.string().optional(),
        label: z.string().optional(),
        dynamic: z.boolean().optional(),
      }),
    )
    .default([]),
});
const routeRec = z.looseObject({
  dst: z.string(),
  gateway: z.string().optional(),
  dev: z.string().optional(),
  protocol: z.string().optional(),
  scope: z.string().optional(),
  prefsrc: z.string().optional(),
  metric: z.number().optional(),
  type: z.string().optional(),
});

const jsonList = (text: string): unknown[] => {
  const t = text.trim();
  if (t === '') return [];
  const v: unknown = JSON.parse(t);
  return Array.isArray(v) ? v : [];
};

export function parseLinks(text: string): LinkState[] {
  return jsonList(text).map((r) => {
    const l = linkRec.parse(r);
    return {
      ifname: l.ifname,
      up: l.flags.includes('UP'),
      mtu: l.mtu,
      master: l.master ?? null,
      kind: l.linkinfo?.info_kind ?? null,
    };
  });
}

export function parseAddrs(text: string): Record<string, AddressState[]> {
  const out: Record<string, AddressState[]> = {};
  for (const r of jsonList(text)) {
    const a = addrRec.parse(r);
    out[a.ifname] = a.addr_info
      .filter((i) => i.family === 'inet')
      .map((i) => ({
        local: i.local,
        prefixlen: i.prefixlen,
        ...(i.broadcast ? { broadcast: i.broadcast } : {}),
        ...(i.label && i.label !== a.ifname ? { label: i.label } : {}),
        dynamic: i.dynamic === true,
      }));
  }
  return out;
}

export function parseRoutes(text: string): RouteState[] {
  const out: RouteState[] = [];
  for (const r of jsonList(text)) {
    const x = routeRec.parse(r);
    // unicast routes through a device; blackhole/unreachable/local ones are no device's
    if (!x.dev || (x.type !== undefined && x.type !== 'unicast')) continue;
    out.push({
      dst: x.dst,
      dev: x.dev,
      ...(x.gateway ? { gateway: x.gateway } : {}),
      ...(x.protocol ? { protocol: x.protocol } : {}),
      ...(x.scope ? { scope: x.scope } : {}),
      ...(x.prefsrc ? { prefsrc: x.prefsrc } : {}),
      ...(x.metric !== undefined ? { metric: x.metric } : {}),
    });
  }
  return out;
}

/** The parts of tc's answers a rule changes: qdisc kind/handle/parent, class ids and rates, filter handles. */
export function tcEntries(qdisc: string, classes: string, filters: string): string[] {
  const out: string[] = [];
  for (const q of jsonList(qdisc) as Record<string, unknown>[])
    out.push(`qdisc ${String(q.kind)} ${String(q.handle)} ${q.root ? 'root' : String(q.parent ?? '')}`);
  for (const line of classes.split('\n')) {
    const m = /^class (\S+) (\S+) (?:root|parent \S+).*?(?: rate (\S+))?(?: |$)/.exec(line.trim());
    if (m) out.push(`class ${m[1]} ${m[2]} ${m[3] ?? ''}`.trim());
  }
  for (const f of jsonList(filters) as Record<string, unknown>[]) {
    const o = (f.options ?? {}) as Record<string, unknown>;
    if (o.fh !== undefined) out.push(`filter ${String(f.kind)} ${String(o.fh)} ${String(o.flowid ?? '')}`.trim());
  }
  return out.sort();
}

/** The devices a checkpoint covers: those named, plus their masters and every port of one of them. */
export function widenScope(named: string[], links: LinkState[]): string[] {
  const scope = new Set(named);
  for (const l of links) if (scope.has(l.ifname) && l.master) scope.add(l.master);
  for (const l of links) if (l.master && scope.has(l.master)) scope.add(l.ifname);
  return [...scope].sort();
}

export interface Reader {
  ip: string;
  tc: string;
  run(argv: string[]): Promise<{ code: number; stdout: string; stderr: string }>;
}

async function out(r: Reader, argv: string[]): Promise<string> {
  const x = await r.run(argv);
  if (x.code !== 0) throw new Error(`${argv.join(' ')} exited ${x.code}: ${x.stderr.trim().split('\n')[0] ?? ''}`);
  return x.stdout;
}

/** Reads the kernel's state for `named` (widened), and tc for `tcDevices`. */
export async function captureRuntime(r: Reader, named: string[], tcDevices: string[]): Promise<RuntimeSnapshot> {
  const allLinks = parseLinks(await out(r, [r.ip, '-j', '-d', 'link', 'show']));
  const scope = widenScope(named, allLinks);
  const allAddrs = parseAddrs(await out(r, [r.ip, '-j', 'addr', 'show']));
  const routes = parseRoutes(await out(r, [r.ip, '-j', 'route', 'show'])).filter((x) => scope.includes(x.dev));
  const tc: TcState[] = [];
  for (const dev of tcDevices) {
    if (!allLinks.some((l) => l.ifname === dev)) continue;
    tc.push({
      dev,
      entries: tcEntries(
        await out(r, [r.tc, '-j', 'qdisc', 'show', 'dev', dev]),
        await out(r, [r.tc, 'class', 'show', 'dev', dev]),
        await out(r, [r.tc, '-j', 'filter', 'show', 'dev', dev]),
      ),
    });
  }
  return {
    scope,
    links: allLinks.filter((l) => scope.includes(l.ifname)),
    addrs: Object.fromEntries(scope.map((d) => [d, allAddrs[d] ?? []])),
    routes,
    tc,
  };
}

export interface RestoreStep {
  argv: string[];
  /** what differs, in words (the `unrestored` line when it is still planned after the rollback) */
  what: string;
}

const addrKey = (a: AddressState) => `${a.local}/${a.prefixlen}`;
const routeKey = (x: RouteState) => `${x.dst} via ${x.gateway ?? '-'} dev ${x.dev} metric ${x.metric ?? '-'}`;
/** routes the kernel makes for an address: they come and go with it */
const own = (x: RouteState) => x.protocol !== 'kernel';

function routeArgv(ip: string, verb: 'replace' | 'del', x: RouteState): string[] {
  return [
    ip,
    'route',
    verb,
    x.dst,
    ...(x.gateway ? ['via', x.gateway] : []),
    'dev',
    x.dev,
    ...(verb === 'replace' && x.protocol && x.protocol !== 'boot' ? ['proto', x.protocol] : []),
    ...(x.metric !== undefined ? ['metric', String(x.metric)] : []),
    ...(verb === 'replace' && x.prefsrc ? ['src', x.prefsrc] : []),
    ...(verb === 'replace' && x.scope && x.scope !== 'global' ? ['scope', x.scope] : []),
  ];
}

/**
 * The commands that turn `now` into `before` for the checkpoint's scope, in the order the kernel
 * needs: a bond the change created goes; ports are released or enslaved (down first: bonding
 * refuses an up port); MTU; addresses (extra ones deleted, missing ones added); admin state;
 * then routes (their gateways need the addresses). `notes`: differences no command fixes here
 * (a device that is gone, a DHCP lease, tc), reported as they are.
 */
export function planRestore(
  ip: string,
  before: RuntimeSnapshot,
  now: RuntimeSnapshot,
): { steps: RestoreStep[]; notes: string[] } {
  const steps: RestoreStep[] = [];
  const notes: string[] = [];
  const link = (s: RuntimeSnapshot, d: string) => s.links.find((l) => l.ifname === d);
  const scope = [...new Set([...before.scope, ...now.scope])].sort();
  const adminSteps: RestoreStep[] = [];
  for (const dev of scope) {
    const b = link(before, dev);
    const n = link(now, dev);
    if (!b && n) {
      if (n.kind === 'bond') steps.push({ argv: [ip, 'link', 'del', 'dev', dev], what: `${dev} was created` });
      continue;
    }
    if (b && !n) {
      notes.push(`${dev} is gone`);
      continue;
    }
    if (!b || !n) continue;
    if (b.master !== n.master) {
      if (n.master)
        steps.push({ argv: [ip, 'link', 'set', 'dev', dev, 'nomaster'], what: `${dev} is a port of ${n.master}` });
      if (b.master) {
        steps.push({ argv: [ip, 'link', 'set', 'dev', dev, 'down'], what: `${dev} is not a port of ${b.master}` });
        steps.push({
          argv: [ip, 'link', 'set', 'dev', dev, 'master', b.master],
          what: `${dev} is not a port of ${b.master}`,
        });
      }
    }
    if (b.mtu !== n.mtu)
      steps.push({
        argv: [ip, 'link', 'set', 'dev', dev, 'mtu', String(b.mtu)],
        what: `${dev} has MTU ${n.mtu}, not ${b.mtu}`,
      });
    const ba = before.addrs[dev] ?? [];
    const na = now.addrs[dev] ?? [];
    for (const a of na.filter((x) => !ba.some((y) => addrKey(y) === addrKey(x))))
      steps.push({ argv: [ip, 'addr', 'del', addrKey(a), 'dev', dev], what: `${dev} has ${addrKey(a)}` });
    for (const a of ba.filter((x) => !na.some((y) => addrKey(y) === addrKey(x)))) {
      if (a.dynamic) {
        notes.push(`${dev} lost its DHCP lease ${addrKey(a)} (a lease is not re-acquired)`);
        continue;
      }
      steps.push({
        argv: [
          ip,
          'addr',
          'add',
          addrKey(a),
          ...(a.broadcast ? ['broadcast', a.broadcast] : []),
          'dev',
          dev,
          ...(a.label ? ['label', a.label] : []),
        ],
        what: `${dev} lacks ${addrKey(a)}`,
      });
    }
    // a port enslaved again above was taken down for it: its state is set after, like any other
    const reenslaved = b.master !== n.master && b.master !== null;
    if (b.up !== n.up || (reenslaved && b.up))
      adminSteps.push({
        argv: [ip, 'link', 'set', 'dev', dev, b.up ? 'up' : 'down'],
        what: `${dev} is ${n.up ? 'up' : 'down'}, was ${b.up ? 'up' : 'down'}`,
      });
  }
  steps.push(...adminSteps);
  const inScope = (x: RouteState) => scope.includes(x.dev);
  const nowRoutes = now.routes.filter(inScope);
  const beforeRoutes = before.routes.filter(inScope);
  for (const x of nowRoutes.filter(own).filter((x) => !beforeRoutes.some((y) => routeKey(y) === routeKey(x))))
    steps.push({ argv: routeArgv(ip, 'del', x), what: `route ${routeKey(x)} was added` });
  for (const x of beforeRoutes.filter(own).filter((x) => !nowRoutes.some((y) => routeKey(y) === routeKey(x))))
    steps.push({ argv: routeArgv(ip, 'replace', x), what: `route ${routeKey(x)} is missing` });
  for (const t of before.tc) {
    const n = now.tc.find((x) => x.dev === t.dev);
    if (!n) continue;
    const gone = t.entries.filter((e) => !n.entries.includes(e));
    const added = n.entries.filter((e) => !t.entries.includes(e));
    if (gone.length || added.length)
      notes.push(
        `tc on ${t.dev} differs:${gone.length ? ` missing ${gone.join(', ')}` : ''}${added.length ? ` extra ${added.join(', ')}` : ''}`,
      );
  }
  return { steps, notes };
}
