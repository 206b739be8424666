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
import { filesUnder } from '../helpers/files';
import { repo } from '../helpers/host';

const tsFiles = (dir: string) => filesUnder(dir, (n) => n.endsWith('.ts'));

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

/**
 * docs/area-conventions.md: the file roles and names every area follows. Each rule is a pure
 * function over (path, text) so the self-checks below can show it refusing a misplaced file.
 */
const REFUSED_FILES = new Set([
  'schemas.ts',
  'inputs.ts',
  'bodies.ts',
  'settings.ts',
  'types.ts',
  'utils.ts',
  'helpers.ts',
  'common.ts',
]);
const FOLDERS = new Set(['parse', 'render', 'routes', 'recipes']);
const ZOD_EXPORT = /^export const (\w+)\s*(?::[^=]+)?=\s*z\b/gm;

/** `rel` is a path under handlers/<area>/ (`contract.ts`, `parse/lsblk.ts`). */
export function fileRoleOffence(rel: string): string | undefined {
  const parts = rel.split('/');
  if (parts.length === 1) {
    if (REFUSED_FILES.has(parts[0])) return `${rel}: say its role (requests.ts, responses.ts, contract.ts…)`;
    return undefined;
  }
  if (!FOLDERS.has(parts[0])) return `${rel}: an area's folders are ${[...FOLDERS].join(', ')}`;
  return undefined;
}

/** Names of zod schemas: camelCase values, no `Schema` suffix; requests.ts only Params/Query/Body. */
export function zodNameOffences(rel: string, text: string): string[] {
  const out: string[] = [];
  for (const m of text.matchAll(ZOD_EXPORT)) {
    const name = m[1];
    if (!/^[a-z][A-Za-z0-9]*$/.test(name)) out.push(`${rel}: ${name} is not a camelCase schema name`);
    else if (name.endsWith('Schema')) out.push(`${rel}: ${name} ends in Schema`);
    else if (rel.endsWith('/requests.ts') && !/(Params|Query|Body)$/.test(name))
      out.push(`${rel}: ${name} is in requests.ts but is not a Params, Query or Body`);
  }
  return out;
}

/** Event kinds `<area>.<object>.<verb>`, the first segment the emitting area. */
export function eventKindOffences(rel: string, text: string, area: string): string[] {
  const out: string[] = [];
  for (const m of text.matchAll(/\b(?:send|record)\(\{\s*kind:\s*['`]([^'`]+)['`]/g)) {
    const kind = m[1];
    const first = kind.split('.')[0];
    if (!/^[a-z0-9]+\.[a-z]+(?:_[a-z]+)*\.[a-z]+(?:_[a-z]+)*$/.test(kind.replace('${r.area}', 'area')))
      out.push(`${rel}: event kind ${kind} is not <area>.<object>.<verb>`);
    else if (first !== area && first !== '${r') out.push(`${rel}: event kind ${kind} is not of its area ${area}`);
  }
  return out;
}

describe('area conventions (docs/area-conventions.md)', () => {
  const areaFiles = areaDirs.flatMap((area) =>
    tsFiles(join(repo, 'handlers', area)).map((f) => ({ area, f, rel: relative(join(repo, 'handlers', area), f) })),
  );

  it('every file of handlers/<area>/ has a known role', () => {
    expect(
      areaFiles.map(({ area, rel }) => fileRoleOffence(rel) && `${area}/${fileRoleOffence(rel)}`).filter(Boolean),
    ).toEqual([]);
  });

  it('zod schemas are camelCase values without a Schema suffix; requests.ts holds only Params, Query and Body', () => {
    const files = [
      ...areaFiles.map((a) => a.f),
      ...tsFiles(join(repo, 'handlers/core')),
      ...tsFiles(join(repo, 'handlers/tools')),
    ];
    expect(files.flatMap((f) => zodNameOffences(relative(repo, f), readFileSync(f, 'utf8')))).toEqual([]);
  });

  it("each area's settings schema is <area>Settings from its contract.ts", () => {
    const offenders: string[] = [];
    for (const area of areaDirs) {
      const mod = readFileSync(join(repo, 'runtime/areas', `${area}.ts`), 'utf8');
      const used = /^\s*settings: (\w+),/m.exec(mod)?.[1];
      if (used === undefined) continue;
      if (used !== `${area}Settings`) offenders.push(`runtime/areas/${area}.ts: settings: ${used}`);
      const contract = readFileSync(join(repo, 'handlers', area, 'contract.ts'), 'utf8');
      if (!new RegExp(`export (const ${used}\\b|\\{[^}]*\\b${used}\\b)`).test(contract))
        offenders.push(`handlers/${area}/contract.ts does not export ${used}`);
    }
    expect(offenders).toEqual([]);
  });

  it('event kinds are <area>.<object>.<verb> of the emitting area', () => {
    const offenders = areaFiles.flatMap(({ area, f, rel }) =>
      eventKindOffences(`${area}/${rel}`, readFileSync(f, 'utf8'), area),
    );
    for (const f of tsFiles(join(repo, 'runtime/areas'))) {
      const area = relative(join(repo, 'runtime/areas'), f).split(/[/.]/)[0];
      offenders.push(...eventKindOffences(relative(repo, f), readFileSync(f, 'utf8'), area));
    }
    expect(offenders).toEqual([]);
  });

  it('the checks refuse what the convention refuses', () => {
    expect(fileRoleOffence('schemas.ts')).toMatch(/say its role/);
    expect(fileRoleOffence('settings.ts')).toMatch(/say its role/);
    expect(fileRoleOffence('lib/lsblk.ts')).toMatch(/folders are/);
    expect(fileRoleOffence('parse/lsblk.ts')).toBeUndefined();
    expect(fileRoleOffence('responses.ts')).toBeUndefined();
    expect(zodNameOffences('x/requests.ts', 'export const shareBody = z.strictObject({});')).toEqual([]);
    expect(zodNameOffences('x/requests.ts', 'export const shareName = z.string();')).toEqual([
      'x/requests.ts: shareName is in requests.ts but is not a Params, Query or Body',
    ]);
    expect(zodNameOffences('x/responses.ts', 'export const ShareAnswer = z.object({});')).toHaveLength(1);
    expect(zodNameOffences('x/responses.ts', 'export const shareAnswerSchema = z.object({});')).toEqual([
      'x/responses.ts: shareAnswerSchema ends in Schema',
    ]);
    expect(eventKindOffences('x', "events.send({ kind: 'pod.created', data })", 'pod')).toHaveLength(1);
    expect(eventKindOffences('x', "events.send({ kind: 's3.share.created', data })", 'pod')).toEqual([
      'x: event kind s3.share.created is not of its area pod',
    ]);
    expect(eventKindOffences('x', "events.send({ kind: 'pod.pod.created', data })", 'pod')).toEqual([]);
  });
});
