/**
 * A Prometheus text exposition (0.0.4) parser, as prom2json reads a scrape: `# HELP` and `# TYPE`
 * lines, then samples `name{label="value",…} value [timestamp]` with the format's escapes
 * (`\\`, `\"`, `\n` in label values) and its special values (`+Inf`, `-Inf`, `NaN`). A line it
 * cannot read throws, so a malformed exposition fails the test that scrapes it.
 */
export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

export interface Family {
  name: string;
  type: string;
  help: string;
  samples: Sample[];
}

const NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*/;

function parseValue(text: string): number {
  if (text === '+Inf') return Infinity;
  if (text === '-Inf') return -Infinity;
  if (text === 'NaN') return NaN;
  if (!/^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/.test(text)) throw new Error(`bad sample value ${text}`);
  return Number(text);
}

function parseLabels(text: string, at: number): { labels: Record<string, string>; end: number } {
  const labels: Record<string, string> = {};
  let i = at + 1;
  for (;;) {
    while (text[i] === ' ') i++;
    if (text[i] === '}') return { labels, end: i + 1 };
    const m = NAME.exec(text.slice(i));
    if (!m) throw new Error(`bad label name at ${i}: ${text}`);
    i += m[0].length;
    if (text[i] !== '=' || text[i + 1] !== '"') throw new Error(`expected =" at ${i}: ${text}`);
    i += 2;
    let v = '';
    for (;;) {
      const c = text[i++];
      if (c === undefined) throw new Error(`unterminated label value: ${text}`);
      if (c === '"') break;
      if (c === '\\') {
        const e = text[i++];
        v += e === 'n' ? '\n' : e;
      } else v += c;
    }
    labels[m[0]] = v;
    if (text[i] === ',') i++;
  }
}

/** Families by name; a sample belongs to the family whose name it starts with (`_bucket`, `_sum`, `_count`). */
export function parsePrometheusText(text: string): Map<string, Family> {
  const families = new Map<string, Family>();
  const family = (name: string) => {
    let f = families.get(name);
    if (!f) families.set(name, (f = { name, type: 'untyped', help: '', samples: [] }));
    return f;
  };
  let current: Family | undefined;
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue;
    const meta = /^# (HELP|TYPE) (\S+) ?(.*)$/.exec(line);
    if (meta) {
      current = family(meta[2]);
      if (meta[1] === 'HELP') current.help = meta[3].replace(/\\n/g, '\n').replace(/\\\\/g, '\\');
      else current.type = meta[3];
      continue;
    }
    if (line.startsWith('#')) continue;
    const m = NAME.exec(line);
    if (!m) throw new Error(`bad sample line: ${line}`);
    let rest = line.slice(m[0].length);
    let labels: Record<string, string> = {};
    if (rest.startsWith('{')) {
      const l = parseLabels(rest, 0);
      labels = l.labels;
      rest = rest.slice(l.end);
    }
    const parts = rest.trim().split(/\s+/);
    if (parts.length < 1 || parts.length > 2) throw new Error(`bad sample line: ${line}`);
    const sample = { name: m[0], labels, value: parseValue(parts[0]) };
    const owner = current && (m[0] === current.name || m[0].startsWith(`${current.name}_`)) ? current : family(m[0]);
    owner.samples.push(sample);
  }
  return families;
}

/** The value of the one sample named `name` whose labels include `labels` (undefined: none). */
export function sampleValue(
  families: Map<string, Family>,
  name: string,
  labels: Record<string, string> = {},
): number | undefined {
  for (const f of families.values())
    for (const s of f.samples)
      if (s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v)) return s.value;
  return undefined;
}
