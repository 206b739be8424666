/**
 * Answer fields named `warnings` or `error` (issue 31 item 7): each is either in the spec's
 * shape of that route or a documented extension, and one name has one type across the API
 * (`warnings` is a string of lines, as the spec's dfs answers have it). A new such field fails
 * here until it is added to the table and documented in its area README.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import * as z from 'zod';
import type { RouteModule } from '../../handlers/core/route';
import { allRouteModules, repo } from '../helpers/host';

type Json = Record<string, unknown>;

/** route → where the field sits → its JSON type; `spec` = the spec shows it, else the README naming it. */
const EXPECTED: Record<string, { at: string; type: string; why: string }[]> = {
  'GET /api/v2/dfs/device': [{ at: 'warnings', type: 'string', why: 'spec' }],
  'GET /api/v2/dfs/fs': [{ at: '[].warnings', type: 'string', why: 'spec' }],
  'GET /api/v2/dfs/fs/:filesystem/details': [{ at: 'warnings', type: 'string', why: 'spec' }],
  'GET /api/v2/dfs/lnet/:nid/ping': [{ at: 'warnings', type: 'string', why: 'spec' }],
  'POST /api/v2/network/traffic/control/create': [{ at: 'error', type: 'string|null', why: 'spec' }],
  'POST /api/v2/s3/create': [{ at: 'warnings?', type: 'string', why: 'handlers/s3/README.md' }],
  'POST /api/v2/s3/:share_name/update': [{ at: 'warnings?', type: 'string', why: 'handlers/s3/README.md' }],
  'GET /api/v2/system/keys/auth': [{ at: '[].error?', type: 'string', why: 'handlers/keys/README.md' }],
  'GET /api/v2/jobs': [
    { at: 'jobs[].error', type: 'object|null', why: 'handlers/jobs/README.md' },
    { at: 'jobs[].undo.failed[].error', type: 'string', why: 'handlers/jobs/README.md' },
  ],
  'GET /api/v2/jobs/:id': [
    { at: 'job.error', type: 'object|null', why: 'handlers/jobs/README.md' },
    { at: 'job.undo.failed[].error', type: 'string', why: 'handlers/jobs/README.md' },
  ],
  'POST /api/v2/jobs/:id/cancel': [
    { at: 'job.error', type: 'object|null', why: 'handlers/jobs/README.md' },
    { at: 'job.undo.failed[].error', type: 'string', why: 'handlers/jobs/README.md' },
  ],
  'POST /api/v2/network/rollback': [{ at: 'report.failed[].error', type: 'string', why: 'handlers/network/README.md' }],
  'GET /api/v2/kerberos/realm': [{ at: '{}.error?', type: 'string', why: 'handlers/kerberos/README.md' }],
  'GET /api/v2/kerberos/realm/:name/details': [{ at: 'error?', type: 'string', why: 'handlers/kerberos/README.md' }],
};
const NAMES = new Set(['warnings', 'error']);

const modules: RouteModule[] = [];
beforeAll(async () => {
  modules.push(...(await allRouteModules()));
});

const typeOf = (s: Json): string => {
  if (typeof s.type === 'string') return s.type;
  if (Array.isArray(s.type)) return s.type.join('|');
  const alts = (s.anyOf ?? s.oneOf) as Json[] | undefined;
  return alts ? alts.map(typeOf).join('|') : JSON.stringify(s);
};

/** Every property named in NAMES, anywhere in the answer: its place (`[]` an array item, `?` optional). */
function find(s: Json, at: string, out: { at: string; type: string }[]): void {
  const props = s.properties as Record<string, Json> | undefined;
  const required = new Set((s.required as string[] | undefined) ?? []);
  for (const [k, v] of Object.entries(props ?? {})) {
    const here = `${at ? `${at}.` : ''}${k}${required.has(k) ? '' : '?'}`;
    if (NAMES.has(k)) out.push({ at: here, type: typeOf(v) });
    find(v, here, out);
  }
  if (s.items && typeof s.items === 'object') find(s.items as Json, `${at}[]`, out);
  for (const key of ['anyOf', 'oneOf', 'allOf'])
    for (const alt of (s[key] as Json[] | undefined) ?? []) find(alt, at, out);
  if (s.additionalProperties && typeof s.additionalProperties === 'object')
    find(s.additionalProperties as Json, `${at}{}`, out);
}

describe('answer fields named warnings or error', () => {
  it('are exactly the spec fields and the documented extensions, with one type per name', () => {
    const found: Record<string, { at: string; type: string; why: string }[]> = {};
    for (const m of modules) {
      const out: { at: string; type: string }[] = [];
      const schema = z.toJSONSchema(m.schemas.response, { io: 'output', unrepresentable: 'any' }) as Json;
      find(schema, '', out);
      const key = `${m.meta.method} ${m.meta.path}`;
      if (out.length)
        found[key] = out.map((f) => ({ ...f, why: EXPECTED[key]?.find((e) => e.at === f.at)?.why ?? '?' }));
    }
    expect(found).toEqual(EXPECTED);
  });

  it('each extension is named in its area README', () => {
    for (const [route, fields] of Object.entries(EXPECTED))
      for (const f of fields.filter((x) => x.why !== 'spec')) {
        const readme = readFileSync(join(repo, f.why), 'utf8');
        const name = f.at.replace(/^(\[\]|\{\})\./, '').replace(/\?$/, '');
        expect([route, readme.includes(`\`${name}\``) && /extension/i.test(readme)]).toEqual([route, true]);
      }
  });
});
