/**
 * The host never names an area (DESIGN.md "Areas plug in"): outside runtime/areas/ nothing under
 * runtime/ imports from handlers/<area>/, and inside it only handlers/<area>/contract.ts is used.
 * Every area folder under handlers/ has its module in the list. Under handlers/, an area imports
 * only handlers/core, handlers/tools (parsers of commands several areas run) and itself.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { describe, expect, it } from 'vitest';
import { AREAS } from '../../runtime/areas/index';
import { repo } from '../helpers/host';

function tsFiles(dir: string, out: string[] = []): string[] {
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) tsFiles(p, out);
    else if (p.endsWith('.ts')) out.push(p);
  }
  return out;
}

const areaDirs = readdirSync(join(repo, 'handlers')).filter(
  (d) => d !== 'core' && d !== 'tools' && statSync(join(repo, 'handlers', d)).isDirectory(),
);
const importOf = /(?:from|import)\s*\(?\s*['"]([^'"]+)['"]/g;

function areaImports(file: string): { area: string; target: string }[] {
  const out: { area: string; target: string }[] = [];
  for (const m of readFileSync(file, 'utf8').matchAll(importOf)) {
    const hit = /handlers\/([a-z0-9-]+)\/(.+)$/.exec(m[1]);
    if (hit && hit[1] !== 'core' && hit[1] !== 'tools') out.push({ area: hit[1], target: hit[2] });
  }
  return out;
}

describe('area boundaries', () => {
  const files = tsFiles(join(repo, 'runtime'));

  it('nothing under runtime/ outside runtime/areas/ imports an area', () => {
    const offenders = files
      .filter((f) => !relative(repo, f).startsWith('runtime/areas/'))
      .flatMap((f) => areaImports(f).map((i) => `${relative(repo, f)} → handlers/${i.area}/${i.target}`));
    expect(offenders).toEqual([]);
  });

  it("runtime/areas/ uses only each area's contract.ts", () => {
    const offenders = files
      .filter((f) => relative(repo, f).startsWith('runtime/areas/'))
      .flatMap((f) =>
        areaImports(f)
          .filter((i) => !/^contract(\.ts)?$/.test(i.target))
          .map((i) => `${relative(repo, f)} → handlers/${i.area}/${i.target}`),
      );
    expect(offenders).toEqual([]);
  });

  it('every handlers/<area>/ has its module in runtime/areas and the names are unique', () => {
    const names = AREAS.map((a) => a.name);
    expect(new Set(names).size).toBe(names.length);
    expect(areaDirs.filter((d) => !names.includes(d))).toEqual([]);
  });

  it('an area under handlers/ imports only handlers/core, handlers/tools and itself; tools import no area', () => {
    const offenders: string[] = [];
    for (const dir of [...areaDirs, 'tools']) {
      for (const f of tsFiles(join(repo, 'handlers', dir))) {
        for (const m of readFileSync(f, 'utf8').matchAll(importOf)) {
          if (!m[1].startsWith('.')) continue;
          const target = relative(join(repo, 'handlers'), resolve(dirname(f), m[1])).split(sep)[0];
          const allowed = target === 'core' || target === 'tools' || (dir !== 'tools' && target === dir);
          if (!allowed) offenders.push(`${relative(repo, f)} → ${m[1]}`);
        }
      }
    }
    expect(offenders).toEqual([]);
  });

  it('the check itself catches an offending import', () => {
    expect(areaImports(join(repo, 'runtime/areas/fs.ts')).map((i) => i.target)).toEqual(['contract']);
  });
});
