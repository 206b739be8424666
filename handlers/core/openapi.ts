import * as z from 'zod';
import { job as jobSchema } from './job';
import { ANY_TOKEN, PUBLIC_PERMISSION } from './auth';
import { STATUS, type ErrorCode } from './errors';
import { API_BASE, type RouteExample, type RouteModule } from './route-module';

/**
 * OpenAPI 3.1 document generated from the same zod schemas that validate requests.
 *
 * What zod cannot know comes from build.mjs (per route: the operationId derived from the file
 * name, the area that becomes its tag, the error statuses its code can answer; per area: the tag
 * description). Reused sub-schemas (`$defs`) are hoisted into `components.schemas`, and every
 * request and response schema is a named component, so generated clients get named types.
 */

export interface OpenApiRoute {
  module: RouteModule;
  /** `<area>_<camelCasedFileName>`, e.g. `kerberos_confGet`: stable across builds. */
  operationId: string;
  /** The handlers/<area> directory: the operation's one tag. */
  area: string;
  /** Error statuses found in the route's code (beyond the ones every route can answer). */
  statuses?: number[];
  /** Response bodies recorded by running the examples on a fresh demo (index = example index). */
  answers?: ({ status: number; body: unknown } | undefined)[];
}

export interface OpenApiInfo {
  title: string;
  version: string;
  description?: string;
  /** Tag description per area. */
  areas?: Record<string, string>;
}

type Json = Record<string, unknown>;

/** Every route can answer these (bad input, no/unknown token, missing permission, unknown name, a bug). */
const ALWAYS = [400, 401, 403, 404, 500];

/** The 202 answer of every long route. */
const jobAccepted = z.strictObject({ job: jobSchema });

const STATUS_TEXT: Record<number, string> = {
  400: 'Bad request: the body, query or path parameters are invalid (the `issues` name each field)',
  401: 'Unauthorized: the `token` header is missing or unknown',
  403: 'Forbidden: the token lacks the permission, or a path lies outside the allowed roots',
  404: 'Not found: the named resource does not exist',
  405: 'Method not allowed',
  409: 'Conflict: the resource exists already, is in use, or is in the wrong state',
  413: 'Payload too large: the body exceeds the configured limit',
  415: 'Unsupported media type',
  431: 'Request headers too large',
  500: 'Internal error: a bug; the message names only the request id (the log has the rest)',
  501: 'Not implemented; on the demo appliance `not_recorded`: a command no fixture records (see the examples)',
  502: 'A system tool failed (`command_failed`, details: command, exitCode, stderr) or its output could not be read',
  503: 'Busy: too many commands are queued',
  504: 'A command or the request timed out',
};

const codesOf = (status: number) => (Object.keys(STATUS) as ErrorCode[]).filter((c) => STATUS[c] === status);

function errorSchema(): Json {
  return {
    type: 'object',
    description: 'The one error model of every route (handlers/core/errors.ts ErrorBody).',
    required: ['error'],
    additionalProperties: false,
    properties: {
      error: {
        type: 'object',
        required: ['code', 'message'],
        additionalProperties: false,
        properties: {
          code: {
            type: 'string',
            enum: Object.keys(STATUS),
            description: 'Stable error code; the HTTP status follows from it.',
          },
          message: { type: 'string', description: 'Human-readable text (not stable API).' },
          requestId: { type: 'string', description: 'The request id, also in the x-request-id header.' },
          issues: {
            type: 'array',
            description: 'Validation failures, one per field.',
            items: {
              type: 'object',
              required: ['path', 'message'],
              additionalProperties: false,
              properties: { path: { type: 'string', description: 'e.g. `body.address`' }, message: { type: 'string' } },
            },
          },
          details: {
            type: 'object',
            additionalProperties: true,
            description: 'Code-specific facts, e.g. command, exitCode, stderr for command_failed.',
          },
        },
      },
    },
  };
}

function errorResponse(status: number): Json {
  const codes = codesOf(status);
  const code = codes[0] ?? 'internal';
  const value: Json = {
    error: {
      code,
      message: STATUS_TEXT[status]?.split(':')[0] ?? code,
      requestId: '5f0c6f3e-0a8e-4c57-9b0e-2d1f0c9a7b11',
    },
  };
  if (status === 400) (value.error as Json).issues = [{ path: 'body.name', message: 'Required' }];
  return {
    description: `${STATUS_TEXT[status] ?? 'Error'}. Codes: ${codes.map((c) => `\`${c}\``).join(', ')}.`,
    content: {
      'application/json': { schema: { $ref: '#/components/schemas/Error' }, examples: { [code]: { value } } },
    },
  };
}

const clone = <T>(v: T): T => JSON.parse(JSON.stringify(v)) as T;

/** Rewrites every `#/$defs/<name>` in `node` with `rename`. */
function rewriteRefs(node: unknown, rename: Map<string, string>): void {
  if (Array.isArray(node)) {
    for (const n of node) rewriteRefs(n, rename);
    return;
  }
  if (!node || typeof node !== 'object') return;
  const o = node as Json;
  if (typeof o.$ref === 'string' && o.$ref.startsWith('#/$defs/')) {
    const to = rename.get(o.$ref.slice('#/$defs/'.length));
    if (!to) throw new Error(`openapi: dangling ${o.$ref}`);
    o.$ref = `#/components/schemas/${to}`;
  }
  for (const v of Object.values(o)) rewriteRefs(v, rename);
}

const exampleValue = (v: unknown) => v;

export function openapi(routes: (OpenApiRoute | RouteModule)[], info: OpenApiInfo): Json {
  const components: Record<string, Json> = { Error: errorSchema() };
  const byContent = new Map<string, string>();
  const usedStatuses = new Set<number>();

  /** A component named `name` holding `schema`; an identical schema already stored is reused. */
  function component(name: string, schema: Json): string {
    const key = JSON.stringify(schema);
    const have = byContent.get(key);
    if (have) return have;
    let n = name;
    for (let i = 2; components[n]; i++) n = `${name}${i}`;
    components[n] = schema;
    byContent.set(key, n);
    return n;
  }

  /** zod → JSON Schema with its `$defs` hoisted into components (names prefixed by `prefix`). */
  function jsonSchema(s: z.ZodType, io: 'input' | 'output', prefix: string): Json {
    const out = clone(z.toJSONSchema(s, { io, unrepresentable: 'any', target: 'draft-2020-12' })) as Json;
    delete out.$schema;
    const defs = (out.$defs ?? {}) as Record<string, Json>;
    delete out.$defs;
    const rename = new Map<string, string>();
    for (const name of Object.keys(defs)) {
      let n = /^__schema\d+$/.test(name)
        ? `${prefix}_${name.replace(/^__schema/, 'Def')}`
        : name.replace(/[^A-Za-z0-9._-]/g, '_');
      for (let i = 2; components[n] && JSON.stringify(components[n]) !== JSON.stringify(defs[name]); i++)
        n = `${n}_${i}`;
      rename.set(name, n);
    }
    for (const [name, def] of Object.entries(defs)) {
      rewriteRefs(def, rename);
      components[rename.get(name)!] = def;
    }
    rewriteRefs(out, rename);
    return out;
  }

  const paths: Record<string, Record<string, unknown>> = {};
  const tags = new Set<string>();
  for (const entry of routes) {
    const r: OpenApiRoute =
      'module' in entry
        ? entry
        : {
            module: entry,
            operationId: opIdFromPath(entry.meta.method, entry.meta.path),
            area: areaFromPath(entry.meta.path),
          };
    const { meta, schemas } = r.module;
    const id = r.operationId;
    tags.add(r.area);
    const p = meta.path.replace(/:(\w+)/g, '{$1}');
    const examples = meta.examples ?? [];
    const exampleKey = (i: number) => `example${i + 1}`;

    const params: Json[] = [];
    const declared = new Set<string>();
    if (schemas.params) {
      const ps = jsonSchema(schemas.params, 'input', `${id}_params`) as { properties?: Record<string, Json> };
      for (const [name, s] of Object.entries(ps.properties ?? {})) {
        declared.add(name);
        params.push(parameter(name, 'path', true, s, examples, (e) => e.params?.[name]));
      }
    }
    for (const m of meta.path.matchAll(/:(\w+)/g)) {
      if (!declared.has(m[1]))
        params.push(parameter(m[1], 'path', true, { type: 'string' }, examples, (e) => e.params?.[m[1]]));
    }
    if (schemas.query) {
      const qs = jsonSchema(schemas.query, 'input', `${id}_query`) as {
        properties?: Record<string, Json>;
        required?: string[];
      };
      for (const [name, s] of Object.entries(qs.properties ?? {})) {
        params.push(
          parameter(name, 'query', qs.required?.includes(name) ?? false, s, examples, (e) => e.query?.[name]),
        );
      }
    }

    const type = meta.contentType ?? 'application/json';
    const okExamples: Record<string, Json> = {};
    examples.forEach((e, i) => {
      const a = r.answers?.[i];
      if (a && a.status >= 200 && a.status < 300 && a.status !== 204)
        okExamples[exampleKey(i)] = { summary: e.summary, value: exampleValue(a.body) };
    });
    // a route whose answer is `null` (no body) answers 204
    const noContent = jsonSchema(schemas.response, 'output', `${id}_response`).type === 'null';
    const responses: Record<string, unknown> = noContent
      ? { '204': { description: 'Success, no body' } }
      : {
          '200': {
            description: 'Success',
            content: {
              [type]: {
                schema: {
                  $ref: `#/components/schemas/${component(`${id}_response`, jsonSchema(schemas.response, 'output', `${id}_response`))}`,
                },
                ...(Object.keys(okExamples).length ? { examples: okExamples } : {}),
              },
            },
          },
        };
    if (meta.long) {
      // a long route runs as a job: `Prefer: respond-async` answers 202 with the job (runtime/jobs/)
      responses['202'] = {
        description:
          'Accepted (asked with `Prefer: respond-async`): the request runs as a job; `Location` is the job, poll it or follow its events',
        headers: {
          Location: { schema: { type: 'string' }, description: 'the job: `<basePath>/jobs/{id}`' },
          'Preference-Applied': { schema: { type: 'string', const: 'respond-async' } },
        },
        content: {
          'application/json': {
            schema: {
              $ref: `#/components/schemas/${component('JobAccepted', jsonSchema(jobAccepted, 'output', 'JobAccepted'))}`,
            },
          },
        },
      };
      params.push({
        name: 'Prefer',
        in: 'header',
        required: false,
        description: `\`respond-async\`: answer 202 at once with the job instead of waiting (RFC 7240). The job's budget is ${meta.long.budgetS} s; a synchronous answer that takes longer than the host's request limit is a 504 naming the job, which goes on.`,
        schema: { type: 'string', examples: ['respond-async'] },
      });
    }
    const statuses = new Set([
      ...ALWAYS,
      ...(r.statuses ?? []),
      ...examples.map((e) => e.status ?? 200).filter((s) => s >= 400),
    ]);
    if (schemas.body) statuses.add(413);
    for (const s of [...statuses].sort((a, b) => a - b)) {
      usedStatuses.add(s);
      responses[String(s)] = { $ref: `#/components/responses/Error${s}` };
    }

    const description = [
      `${meta.summary}.`,
      meta.permission === PUBLIC_PERMISSION
        ? 'No token needed.'
        : meta.permission === ANY_TOKEN
          ? 'Needs any valid token (each token sees what its own permissions allow).'
          : `Needs the \`${meta.permission}\` permission.`,
      meta.sideEffects ? 'This GET has side effects: HEAD is refused.' : '',
      meta.long
        ? `A long operation: every request runs as a job (see \`GET /jobs/{id}\`), with a budget of ${meta.long.budgetS} s${meta.long.phases.length ? ` and the progress phases ${meta.long.phases.map((p) => `\`${p}\``).join(', ')}` : ''}; send \`Prefer: respond-async\` for a 202 with the job at once.`
        : '',
      examples.length
        ? `Examples (each answers as shown on the demo appliance): ${examples.map((e) => `${e.summary} (${e.status ?? 200}${e.before?.length ? `, after ${e.before.map((b) => `${b.method} ${b.path}`).join(', ')}` : ''}${e.then?.length ? `; then ${e.then.map((t) => `${t.method} ${t.path} ${(t.status ?? 200) === 200 ? 'shows it' : `answers ${t.status}`}`).join(', ')}` : ''})`).join('; ')}.`
        : '',
    ]
      .filter(Boolean)
      .join(' ');
    const op: Json = {
      operationId: id,
      tags: [r.area],
      summary: meta.summary.length > 120 ? `${meta.summary.slice(0, 117).replace(/\s+\S*$/, '')}…` : meta.summary,
      description,
      'x-permission': meta.permission,
      // the document's global requirement is the token; a public route lifts it
      ...(meta.permission === PUBLIC_PERMISSION ? { security: [] } : {}),
      ...(meta.long ? { 'x-long-operation': meta.long } : {}),
      parameters: params,
      responses,
    };
    if (schemas.body) {
      const bodyName = component(`${id}_body`, jsonSchema(schemas.body, 'input', `${id}_body`));
      const bodyExamples: Record<string, Json> = {};
      examples.forEach((e, i) => {
        if (e.body !== undefined)
          bodyExamples[exampleKey(i)] = { summary: `${e.summary} (answers ${e.status ?? 200})`, value: e.body };
      });
      op.requestBody = {
        required: true,
        content: {
          'application/json': {
            schema: { $ref: `#/components/schemas/${bodyName}` },
            ...(Object.keys(bodyExamples).length ? { examples: bodyExamples } : {}),
          },
        },
      };
    }
    (paths[p] ??= {})[meta.method.toLowerCase()] = op;
  }

  const errorResponses: Record<string, Json> = {};
  for (const s of [...usedStatuses].sort((a, b) => a - b)) errorResponses[`Error${s}`] = errorResponse(s);

  return {
    openapi: '3.1.0',
    info: {
      title: info.title,
      version: info.version,
      description:
        info.description ??
        'The on-box management API of a storage appliance: JSON over HTTP. Every request except this document and the docs page carries an API token in the `token` header.',
      license: { name: 'MIT', identifier: 'MIT' },
    },
    servers: [{ url: '/', description: 'The appliance itself (the demo: http://localhost:8080 after `npm start`)' }],
    security: [{ token: [] }],
    tags: [...tags].sort().map((name) => ({ name, description: info.areas?.[name] ?? `The ${name} area.` })),
    paths,
    components: {
      securitySchemes: {
        token: {
          type: 'apiKey',
          in: 'header',
          name: 'token',
          description: 'An API token (the demo prints its admin token at start).',
        },
      },
      schemas: components,
      responses: errorResponses,
    },
  };
}

function parameter(
  name: string,
  where: 'path' | 'query',
  required: boolean,
  schema: Json,
  examples: RouteExample[],
  pick: (e: RouteExample) => string | undefined,
): Json {
  const p: Json = { name, in: where, required, schema };
  if (typeof schema.description === 'string') p.description = schema.description;
  const ex: Record<string, Json> = {};
  examples.forEach((e, i) => {
    const v = pick(e);
    if (v !== undefined) ex[`example${i + 1}`] = { summary: e.summary, value: v };
  });
  if (Object.keys(ex).length) p.examples = ex;
  return p;
}

/** Fallbacks for route modules given without build information (tests). */
function areaFromPath(path: string): string {
  return path.replace(/^\/api\/[^/]+\//, '').split('/')[0] || 'api';
}
function opIdFromPath(method: string, path: string): string {
  const rest = path.startsWith(API_BASE) ? path.slice(API_BASE.length) : path;
  return `${method.toLowerCase()}${rest.replace(/[^A-Za-z0-9]+(.)?/g, (_, c: string | undefined) => (c ?? '').toUpperCase())}`;
}

/** The document as served under another base path: `/api/v2/...` paths move under `basePath`. */
export function rebase(doc: Json, basePath: string): Json {
  if (basePath === API_BASE) return doc;
  const paths: Record<string, unknown> = {};
  for (const [p, v] of Object.entries(doc.paths as Record<string, unknown>))
    paths[p.startsWith(`${API_BASE}/`) ? basePath + p.slice(API_BASE.length) : p] = v;
  return { ...doc, paths };
}
