import type { SqliteD1 } from './db/database';
import type { EventsProducer } from './events';
import type { SystemService } from './system/service';
import type { BindingAnswer, EventKind, TokenLookup } from '../handlers/core/bindings';

const ok = (value: unknown): BindingAnswer => ({ status: 200, body: JSON.stringify(value) ?? 'null' });
const fail = (status: number, code: string, message: string): BindingAnswer => ({
  status,
  body: JSON.stringify({ error: { code, message } }),
});
const toResponse = (a: BindingAnswer) =>
  new Response(a.body, { status: a.status, headers: { 'content-type': 'application/json' } });

interface DbPayload {
  sql: string;
  params?: unknown[];
  statements?: { sql: string; params: unknown[] }[];
}

/**
 * Serves the bindings to route code in another isolate, in the protocol of
 * docs/bindings-protocol.md: `call()` for the binding socket (runtime/bindings/socket.ts; no
 * WHATWG Request or Response per call), and the same answers as fetch functions (`fetchSystem`,
 * `fetchDb`, `fetchEvents`: the in-process transport). test/edge/bindings-contract.test.ts runs
 * one suite against both.
 */
export class BindingServer {
  constructor(
    private readonly system: SystemService,
    private readonly d1: SqliteD1,
    private readonly events: EventsProducer,
    /** the host's token cache: `/tokens/touch` records a use an isolate checked (core/hop.ts) */
    private readonly tokens?: TokenLookup,
  ) {}

  readonly fetchSystem = (request: Request): Promise<Response> => this.system.fetch(request);

  readonly fetchDb = async (request: Request): Promise<Response> =>
    toResponse(await this.db(new URL(request.url).pathname, await request.text()));

  readonly fetchEvents = async (request: Request): Promise<Response> =>
    toResponse(this.event(await request.text(), request.headers.get('x-request-id') ?? undefined));

  /**
   * One operation by path (`/system/<op>`, `/db/<op>`, `/events/send`, `/tokens/touch`), its
   * payload as JSON text.
   * SYSTEM answers as SystemService.fetch does (SystemService.answer: a refusal with its code,
   * anything else logged and `500 internal` naming the op).
   */
  async call(path: string, body: string, requestId: string | undefined): Promise<BindingAnswer> {
    if (path.startsWith('/system/')) {
      const a = await this.system.answer(
        path.slice('/system/'.length),
        () => JSON.parse(body) as Record<string, unknown>,
        requestId,
      );
      if (!a.ok) return fail(a.status, a.code, a.message);
      await this.system.auditWritten();
      return ok(a.value);
    }
    if (path.startsWith('/db/')) return this.db(path, body);
    if (path === '/events/send') return this.event(body, requestId);
    if (path === '/tokens/touch') return this.touch(body);
    return fail(404, 'not_found', `unknown binding operation ${path}`);
  }

  private async db(path: string, body: string): Promise<BindingAnswer> {
    const op = path.replace(/^\/db\//, '');
    try {
      const p = JSON.parse(body) as DbPayload;
      const params = p.params ?? [];
      switch (op) {
        case 'first':
          return ok(this.d1.firstSync(p.sql, params));
        case 'all':
          return ok(this.d1.allSync(p.sql, params));
        case 'run':
          return ok(this.d1.runSync(p.sql, params));
        case 'raw':
          return ok(this.d1.rawSync(p.sql, params));
        case 'batch':
          return ok(this.d1.batchSync(p.statements ?? []));
        case 'exec':
          return ok(await this.d1.exec(p.sql));
        default:
          return fail(404, 'not_found', `unknown db op ${op}`);
      }
    } catch (e) {
      return fail(500, 'internal', `db ${op} failed: ${(e as Error).message}`);
    }
  }

  /** The id only: the time is the host's, and the cache's row follows the write (tokens.ts TokenCache). */
  private async touch(body: string): Promise<BindingAnswer> {
    let id: unknown;
    try {
      id = (JSON.parse(body) as { id?: unknown } | null)?.id;
    } catch {
      id = undefined;
    }
    if (typeof id !== 'string' || !/^[0-9a-f]{12}$/.test(id))
      return fail(400, 'bad_request', 'tokens/touch takes { id }');
    if (!this.tokens) return fail(501, 'not_implemented', 'this host has no token cache');
    await this.tokens.touch(id, Date.now());
    return ok(null);
  }

  private event(body: string, requestId?: string): BindingAnswer {
    try {
      // the wire's kind is any string until the producer's pattern check (events.ts) passes it
      const p = JSON.parse(body) as { kind: EventKind; data: Record<string, unknown>; requestId?: string };
      this.events.record({ ...p, requestId: p.requestId ?? requestId });
      return ok(null);
    } catch (e) {
      return fail(400, 'bad_request', (e as Error).message);
    }
  }
}
