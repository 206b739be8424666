/**
 * The `ps` output of the three compose flavours, read into one shape:
 *   - docker compose v2 < 2.21 (`ps -a --format json`): one JSON array;
 *   - docker compose v2 ≥ 2.21: JSON Lines, one object per line;
 *   - podman-compose (`ps --format json`, i.e. `podman ps -a --format json`): a JSON array whose
 *     objects carry `Names` (array), `Labels` and `Ports` ([{host_port, container_port, …}]);
 *   - docker-compose 1.x (`ps -a`, no JSON): a table `Name  Command  State  Ports`, a dashed rule,
 *     one row per container; columns are separated by two or more spaces.
 * The format is told by the first non-blank character (`[`, `{`, or anything else: a table).
 */
import { ParseError } from '../../core/parse-error';

export interface ComposeContainer {
  name: string;
  service: string;
  /** running, paused, exited, restarting, created, dead, removing (lower case, docker's words) */
  state: string;
  /** the tool's own status text: `Up 3 minutes`, `Exit 137`, `Paused` */
  status: string;
  /** published ports as `host_ip:host_port->container_port/proto` */
  ports: string[];
}

type Obj = Record<string, unknown>;
const str = (v: unknown): string => (typeof v === 'string' ? v : typeof v === 'number' ? String(v) : '');

function portsOf(o: Obj): string[] {
  const out: string[] = [];
  if (Array.isArray(o.Publishers)) {
    for (const p of o.Publishers as Obj[]) {
      if (!p || typeof p !== 'object' || !p.PublishedPort) continue;
      out.push(`${str(p.URL) || '0.0.0.0'}:${str(p.PublishedPort)}->${str(p.TargetPort)}/${str(p.Protocol) || 'tcp'}`);
    }
    return out;
  }
  if (Array.isArray(o.Ports)) {
    // podman: [{host_ip, container_port, host_port, range, protocol}]
    for (const p of o.Ports as Obj[]) {
      if (!p || typeof p !== 'object' || !p.host_port) continue;
      out.push(
        `${str(p.host_ip) || '0.0.0.0'}:${str(p.host_port)}->${str(p.container_port)}/${str(p.protocol) || 'tcp'}`,
      );
    }
    return out;
  }
  if (typeof o.Ports === 'string' && o.Ports.trim() !== '') return o.Ports.split(',').map((s) => s.trim());
  return out;
}

function fromObject(o: unknown, line?: number): ComposeContainer {
  if (!o || typeof o !== 'object' || Array.isArray(o))
    throw new ParseError('compose ps', 'expected a JSON object per container', line);
  const r = o as Obj;
  const labels = (r.Labels && typeof r.Labels === 'object' ? r.Labels : {}) as Obj;
  const name = Array.isArray(r.Names) ? str(r.Names[0]) : str(r.Name) || str(r.Names);
  if (!name) throw new ParseError('compose ps', 'container without a name', line);
  const service =
    str(r.Service) || str(labels['com.docker.compose.service']) || str(labels['io.podman.compose.service']);
  return {
    name,
    service,
    state: str(r.State).toLowerCase(),
    status: str(r.Status),
    ports: portsOf(r),
  };
}

/** docker-compose 1.x table state words → docker's state words. */
function tableState(s: string): string {
  if (s.startsWith('Up')) return 'running';
  if (s.startsWith('Exit')) return 'exited';
  const w = s.split(' ')[0].toLowerCase();
  return w;
}

/** docker-compose 1.x names containers `<project>_<service>_<n>`. */
function serviceOfV1(name: string, project?: string): string {
  let rest = name;
  if (project && rest.startsWith(`${project}_`)) rest = rest.slice(project.length + 1);
  return rest.replace(/_\d+$/, '');
}

function parseTable(text: string, project?: string): ComposeContainer[] {
  const lines = text.split('\n');
  const header = lines.findIndex((l) => l.trim() !== '');
  const cols = lines[header].trim().split(/\s+/);
  if (cols[0] !== 'Name' || !cols.includes('State'))
    throw new ParseError('compose ps', 'expected a table with Name … State columns', header + 1);
  const rule = lines[header + 1] ?? '';
  if (!/^-+$/.test(rule.trim()))
    throw new ParseError('compose ps', 'expected a dashed rule under the header', header + 2);
  const out: ComposeContainer[] = [];
  for (let i = header + 2; i < lines.length; i++) {
    const l = lines[i];
    if (l.trim() === '') continue;
    const f = l.trim().split(/\s{2,}/);
    if (f.length < 3) throw new ParseError('compose ps', 'expected Name, Command and State cells', i + 1);
    const [name, , state, ports] = f;
    out.push({
      name,
      service: serviceOfV1(name, project),
      state: tableState(state),
      status: state,
      ports: ports
        ? ports
            .split(',')
            .map((s) => s.trim())
            .filter(Boolean)
        : [],
    });
  }
  return out;
}

export function parseComposePs(text: string, project?: string): ComposeContainer[] {
  const t = text.trim();
  if (t === '') return [];
  if (t.startsWith('[')) {
    let arr: unknown;
    try {
      arr = JSON.parse(t);
    } catch {
      throw new ParseError('compose ps', 'output starts with [ but is not a JSON array');
    }
    if (!Array.isArray(arr)) throw new ParseError('compose ps', 'expected a JSON array');
    return arr.map((o) => fromObject(o));
  }
  if (t.startsWith('{')) {
    return t
      .split('\n')
      .map((l, i) => [l.trim(), i + 1] as const)
      .filter(([l]) => l !== '')
      .map(([l, n]) => {
        let o: unknown;
        try {
          o = JSON.parse(l);
        } catch {
          throw new ParseError('compose ps', 'a line of JSON Lines output is not JSON', n);
        }
        return fromObject(o, n);
      });
  }
  return parseTable(text, project);
}

/**
 * container_status of GET /pod/{name}/inspect: the first line is the pod's overall state (one
 * word: `running`, `paused`, `partial`, `stopped` or `none`), then one line per container:
 * `<name> <service> <state> (<status>) <ports…>`.
 */
export function containerStatusText(cs: ComposeContainer[]): string {
  if (cs.length === 0) return 'none';
  const running = cs.filter((c) => c.state === 'running').length;
  const paused = cs.filter((c) => c.state === 'paused').length;
  const overall =
    running === cs.length
      ? 'running'
      : paused === cs.length
        ? 'paused'
        : running + paused === 0
          ? 'stopped'
          : 'partial';
  const lines = cs.map((c) => [c.name, c.service || '-', c.state || '-', `(${c.status})`, ...c.ports].join(' '));
  return [overall, ...lines].join('\n');
}
