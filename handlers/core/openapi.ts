import * as z from 'zod';
import type { RouteModule } from './route';

/** OpenAPI 3.1 document generated from the same zod schemas that validate requests. */
export function openapi(routes: RouteModule[], info: { title: string; version: string }): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  const schema = (s: z.ZodType | undefined, io: 'input' | 'output') => (s ? z.toJSONSchema(s, { io, unrepresentable: 'any' }) : undefined);
  for (const r of routes) {
    const p = r.meta.path.replace(/:(\w+)/g, '{$1}');
    const params: unknown[] = [];
    const ps = schema(r.schemas.params, 'input') as { properties?: Record<string, unknown> } | undefined;
    for (const [name, s] of Object.entries(ps?.properties ?? {})) params.push({ name, in: 'path', required: true, schema: s });
    const qs = schema(r.schemas.query, 'input') as { properties?: Record<string, unknown>; required?: string[] } | undefined;
    for (const [name, s] of Object.entries(qs?.properties ?? {})) params.push({ name, in: 'query', required: qs?.required?.includes(name) ?? false, schema: s });
    const type = r.meta.contentType ?? 'application/json';
    const op: Record<string, unknown> = {
      summary: r.meta.summary,
      'x-permission': r.meta.permission,
      parameters: params,
      responses: {
        '200': { description: 'success', content: { [type]: { schema: schema(r.schemas.response, 'output') } } },
        default: { description: 'error', content: { [type]: { schema: { $ref: '#/components/schemas/Error' } } } },
      },
      security: [{ token: [] }],
    };
    if (r.schemas.body) op.requestBody = { required: true, content: { 'application/json': { schema: schema(r.schemas.body, 'input') } } };
    (paths[p] ??= {})[r.meta.method.toLowerCase()] = op;
  }
  return {
    openapi: '3.1.0',
    info,
    servers: [{ url: '/' }],
    components: {
      securitySchemes: { token: { type: 'apiKey', in: 'header', name: 'token' } },
      schemas: {
        Error: {
          type: 'object',
          required: ['error'],
          properties: {
            error: {
              type: 'object',
              required: ['code', 'message'],
              properties: {
                code: { type: 'string' },
                message: { type: 'string' },
                requestId: { type: 'string' },
                issues: { type: 'array', items: { type: 'object', properties: { path: { type: 'string' }, message: { type: 'string' } } } },
                details: { type: 'object' },
              },
            },
          },
        },
      },
    },
    paths,
  };
}
