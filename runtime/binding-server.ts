import type { SqliteD1 } from './db/database';
import type { EventsProducer } from './events';
import type { SystemService } from './system/service';

/**
 * Serves the DB and EVENTS bindings over fetch, for route code running in another isolate
 * (workerd through Miniflare). SYSTEM already speaks fetch. Same ops as handlers/core/bindings.ts.
 */
export class BindingServer {
  constructor(
    private readonly system: SystemService,
    private readonly d1: SqliteD1,
    private readonly events: EventsProducer,
  ) {}

  readonly fetchSystem = (request: Request): Promise<Response> => this.system.fetch(request);

  readonly fetchDb = async (request: Request): Promise<Response> => {
    const op = new URL(request.url).pathname.replace(/^\/db\//, '');
    try {
      const p = (await request.json()) as {
        sql: string;
        params?: unknown[];
        statements?: { sql: string; params: unknown[] }[];
      };
      const params = p.params ?? [];
      switch (op) {
        case 'first':
          return Response.json(this.d1.firstSync(p.sql, params));
        case 'all':
          return Response.json(this.d1.allSync(p.sql, params));
        case 'run':
          return Response.json(this.d1.runSync(p.sql, params));
        case 'raw':
          return Response.json(this.d1.rawSync(p.sql, params));
        case 'batch':
          return Response.json(this.d1.batchSync(p.statements ?? []));
        case 'exec':
          return Response.json(await this.d1.exec(p.sql));
        default:
          return Response.json({ error: { code: 'not_found', message: `unknown db op ${op}` } }, { status: 404 });
      }
    } catch (e) {
      return Response.json(
        { error: { code: 'internal', message: `db ${op} failed: ${(e as Error).message}` } },
        { status: 500 },
      );
    }
  };

  readonly fetchEvents = async (request: Request): Promise<Response> => {
    try {
      const p = (await request.json()) as { kind: string; data: Record<string, unknown>; requestId?: string };
      this.events.record(p);
      return Response.json(null);
    } catch (e) {
      return Response.json({ error: { code: 'bad_request', message: (e as Error).message } }, { status: 400 });
    }
  };
}
