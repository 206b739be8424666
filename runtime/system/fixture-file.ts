import { readFileSync, readdirSync, statSync, writeFileSync, mkdirSync } from 'node:fs';
import { join, dirname, relative, sep } from 'node:path';
import { parse, stringify } from 'yaml';

/**
 * One recorded command invocation. Stored as YAML, one file per invocation, under
 * `fixtures/<tool>/<name>.yaml`. `source` says where and when it was recorded (or which
 * upstream sample it was built from) so a reader can judge how real it is.
 */
export interface Fixture {
  source: string;
  argv: string[];
  code: number;
  stdout: string;
  stderr: string;
  /** consumed by the first matching call in replay (for before/after sequences) */
  once?: boolean;
  /** replay only: the scenario this fixture belongs to; absent = always loaded */
  scenario?: string;
  /**
   * replay only: the `name` of another fixture (or several); this one answers only once that one
   * (each of them) has answered a call (the state after a change: `ip -j addr show` after
   * `ip addr add`). When several are ready, the one whose change answered last wins over the
   * others and over a fixture without `after`; on a tie, the one naming more changes.
   */
  after?: string | string[];
  /** Its path below the fixture directory it was loaded from, without `.yaml` (`network/ip/addr-add-eno5`). */
  name?: string;
  file?: string;
}

export function readFixture(file: string): Fixture {
  const doc = parse(readFileSync(file, 'utf8')) as Partial<Fixture> | null;
  if (!doc || !Array.isArray(doc.argv) || doc.argv.some((a) => typeof a !== 'string')) {
    throw new Error(`fixture ${file}: argv must be an array of strings`);
  }
  if (typeof doc.source !== 'string' || doc.source.trim() === '') {
    throw new Error(`fixture ${file}: source is required (where/when/which version)`);
  }
  return {
    source: doc.source,
    argv: doc.argv,
    code: typeof doc.code === 'number' ? doc.code : 0,
    stdout: typeof doc.stdout === 'string' ? doc.stdout : '',
    stderr: typeof doc.stderr === 'string' ? doc.stderr : '',
    once: doc.once === true,
    scenario: typeof doc.scenario === 'string' ? doc.scenario : undefined,
    after: afterOf(file, doc.after),
    file,
  };
}

function afterOf(file: string, v: unknown): string | string[] | undefined {
  if (v === undefined) return undefined;
  if (typeof v === 'string') return v;
  if (Array.isArray(v) && v.length > 0 && v.every((x) => typeof x === 'string')) return v as string[];
  throw new Error(`fixture ${file}: after must be a fixture name or a list of them`);
}

export function writeFixture(file: string, f: Fixture): void {
  mkdirSync(dirname(file), { recursive: true });
  const { file: _ignored, name: _name, ...rest } = f;
  writeFileSync(file, stringify(rest, { lineWidth: 0, blockQuote: 'literal' }));
}

/** Every `*.yaml` fixture below `dir` (recursively), in a stable order. */
export function loadFixtureDir(dir: string): Fixture[] {
  const out: Fixture[] = [];
  const walk = (d: string) => {
    for (const name of readdirSync(d).sort()) {
      const p = join(d, name);
      if (statSync(p).isDirectory()) walk(p);
      else if (name.endsWith('.yaml') && !name.endsWith('.expected.yaml'))
        out.push({ ...readFixture(p), name: relative(dir, p).slice(0, -'.yaml'.length).split(sep).join('/') });
    }
  };
  walk(dir);
  return out;
}
