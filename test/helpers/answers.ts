/**
 * Typed reads of what `call` answers (test/helpers/host.ts): an error answer is checked against
 * the one error shape (handlers/core/errors.ts ErrorBody) before a test looks inside it.
 */
import * as z from 'zod';
import { STATUS, type ErrorBody, type ErrorCode } from '../../handlers/core/errors';

const CODES = Object.keys(STATUS) as [ErrorCode, ...ErrorCode[]];

/** ErrorBody as a schema: `{ error: { code, message, requestId?, issues?, details? } }`, nothing else. */
export const errorBodySchema = z
  .object({
    error: z
      .object({
        code: z.enum(CODES),
        message: z.string(),
        requestId: z.string().optional(),
        issues: z.array(z.object({ path: z.string(), message: z.string() }).strict()).optional(),
        details: z.record(z.string(), z.unknown()).optional(),
      })
      .strict(),
  })
  .strict() satisfies z.ZodType<ErrorBody>;

export type ApiErrorBody = ErrorBody['error'];

/** The `error` of an answer; fails the test when the body is not the error shape. */
export function errorOf(r: { status?: number; json: unknown }): ApiErrorBody {
  const p = errorBodySchema.safeParse(r.json);
  if (!p.success)
    throw new Error(
      `expected an error answer {error: {code, message, …}}, got ${r.status ?? ''} ${JSON.stringify(r.json)}: ${p.error.message}`,
    );
  return p.data.error;
}

/** `issues[].path` of an error answer (empty when it has none). */
export const issuePaths = (r: { status?: number; json: unknown }): string[] =>
  (errorOf(r).issues ?? []).map((i) => i.path);

/** A nested value of an error's `details` (e.g. `detail(r, 'rollback', 'failed')`); undefined when absent. */
export function detail(r: { status?: number; json: unknown }, ...keys: string[]): unknown {
  let v: unknown = errorOf(r).details;
  for (const k of keys) v = typeof v === 'object' && v !== null ? (v as Record<string, unknown>)[k] : undefined;
  return v;
}

/**
 * `r.json` checked against a route's response schema (fails the test when it does not match),
 * answered as it came (not the schema's parse, which would drop unknown keys).
 */
export function answerOf<S extends z.ZodType>(schema: S, r: { status?: number; json: unknown }): z.infer<S> {
  const p = schema.safeParse(r.json);
  if (!p.success)
    throw new Error(
      `answer ${r.status ?? ''} does not match its schema: ${p.error.message}\n${JSON.stringify(r.json)}`,
    );
  return r.json as z.infer<S>;
}

/** A fetch Response's JSON body, typed as the caller states it (`unknown` unless given): never `any`. */
export async function jsonOf<T = unknown>(r: Response): Promise<T> {
  return (await r.json()) as T;
}

/** An error answer of a fetch Response: its status and body, for errorOf. */
export async function answerFrom(r: Response): Promise<{ status: number; json: unknown }> {
  return { status: r.status, json: await jsonOf(r) };
}
