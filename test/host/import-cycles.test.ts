/**
 * No import cycle among the host's modules (type-only imports count: a type cycle still ties the
 * modules together, and it was how loading the config loaded every area). The graph is read from
 * the sources' relative imports; the check is Tarjan's strongly connected components.
 */
import { readFileSync } from 'node:fs';
import { dirname, join, normalize, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { filesUnder } from '../helpers/files';
import { repo } from '../helpers/host';

const IMPORT = /(?:import|export)\s[^;'"]*?from\s*['"](\.[^'"]+)['"]|import\(\s*['"](\.[^'"]+)['"]/g;

const tsFiles = (dir: string) => filesUnder(dir, (n) => n.endsWith('.ts') && !n.endsWith('.d.ts'));

/** The sets of files that import each other, directly or around a loop. */
export function importCycles(files: string[]): string[][] {
  const known = new Set(files);
  const edges = new Map<string, string[]>();
  for (const f of files) {
    const out: string[] = [];
    for (const m of readFileSync(f, 'utf8').matchAll(IMPORT)) {
      const base = normalize(join(dirname(f), m[1] ?? m[2]));
      const hit = [base, `${base}.ts`, base.replace(/\.m?js$/, '.ts'), join(base, 'index.ts')].find((c) =>
        known.has(c),
      );
      if (hit) out.push(hit);
    }
    edges.set(f, out);
  }
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const cycles: string[][] = [];
  let n = 0;
  const visit = (v: string) => {
    index.set(v, n);
    low.set(v, n++);
    stack.push(v);
    onStack.add(v);
    for (const w of edges.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) === index.get(v)) {
      const comp: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        comp.push(w);
      } while (w !== v);
      if (comp.length > 1 || (edges.get(v) ?? []).includes(v)) cycles.push(comp.sort());
    }
  };
  for (const f of files) if (!index.has(f)) visit(f);
  return cycles;
}

describe('import cycles', () => {
  it('runtime/ has none', () => {
    const cycles = importCycles(tsFiles(join(repo, 'runtime')));
    expect(cycles.map((c) => c.map((f) => relative(repo, f)))).toEqual([]);
  });

  it('handlers/ has none (the app, the route contract and the OpenAPI builder included)', () => {
    const cycles = importCycles(tsFiles(join(repo, 'handlers')));
    expect(cycles.map((c) => c.map((f) => relative(repo, f)))).toEqual([]);
  });

  it('finds one when there is one (the check can fail)', () => {
    const files = ['runtime/config.ts', 'runtime/areas/index.ts', 'runtime/areas/types.ts'].map((f) => join(repo, f));
    // config → areas/index → … never back to config now; areas/types ← index is a plain edge
    expect(importCycles(files)).toEqual([]);
    const tmp = join(repo, 'test/host/fixtures-import-cycle');
    const cyc = importCycles([join(tmp, 'a.ts'), join(tmp, 'b.ts')]);
    expect(cyc.map((c) => c.map((f) => relative(tmp, f)))).toEqual([['a.ts', 'b.ts']]);
  });
});
