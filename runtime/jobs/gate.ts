/**
 * Where a request meets the job registry (the HTTP server calls run() for every request, and
 * timedOut() when a synchronous answer's time runs out). A request of a long route (RouteMeta
 * `long`) runs as a job whether its client waits or not: `Prefer: respond-async` answers 202 at
 * once; otherwise the client gets the route's own answer, or at the request limit a 504 naming
 * the job, which goes on. A job ends by itself, by its budget (the route's declared limit), or by
 * cancel(); a stopped request starts nothing more (SystemService.cancel) and what it left open in
 * the intent journal is rolled back here. A request of any other route that runs out of time is
 * stopped the same way: no work goes on unseen.
 */
import { IttyRouter, type IRequest } from 'itty-router';
import { authenticate, hasPermission } from '../../handlers/core/auth';
import { database, type Env } from '../../handlers/core/bindings';
import { basePathOf, toRoutePath } from '../../handlers/core/app';
import { toApiError } from '../../handlers/core/errors';
import { baseHeaders, errorReply, jsonReply } from '../../handlers/core/http';
import type { Call, Reply } from '../../handlers/core/pipeline';
import type { LongOperation } from '../../handlers/core/route-module';
import type { Vars } from '../../handlers/core/vars';
import type { JobUndo } from '../../handlers/core/job';
import type { EventsProducer } from '../events';
import type { IntentJournal } from '../system/journal';
import type { SystemService } from '../system/service';
import type { JobRegistry } from './registry';
import { teeChunks } from './tee';

export interface GateRoute {
  method: string;
  path: string;
  permission: string;
  long?: LongOperation;
}

export interface GateOptions {
  registry: JobRegistry;
  system: SystemService;
  journal: IntentJournal;
  events: EventsProducer;
  env: Env;
  vars: Vars;
  /** every route, in the app's order (a path may match several: the same choice as the app) */
  routes: readonly GateRoute[];
  log(line: string): void;
}

interface Running {
  id: string;
  requestId: string;
  route: string;
  stopped?: { kind: 'cancel' | 'budget'; why: string };
  budget?: NodeJS.Timeout;
  settled: Promise<void>;
}

/** How long cancel() waits for the job to end before it answers with the job as it is. */
const CANCEL_WAIT_MS = 15_000;

export class JobGate {
  private readonly running = new Map<string, Running>();
  /** the job of each call as the server holds it (run() may give the job a fresh request id) */
  private readonly jobOfCall = new WeakMap<Call, string>();
  private readonly match: (method: string, path: string) => Promise<GateRoute | undefined>;
  /** `METHOD /api/v2/<area>` of every long route: any other request skips the match */
  private readonly longAreas = new Set<string>();

  constructor(private readonly o: GateOptions) {
    for (const r of o.routes) if (r.long) this.longAreas.add(`${r.method} ${areaPrefix(r.path)}`);
    const router = IttyRouter<IRequest, [], GateRoute | undefined>();
    const byPath = new Map<string, GateRoute[]>();
    for (const r of o.routes) byPath.set(r.path, [...(byPath.get(r.path) ?? []), r]);
    for (const [path, list] of byPath) router.all(path, (req) => list.find((r) => r.method === req.method));
    this.match = async (method, path) => (await router.fetch({ method, url: `http://h${path}` })) ?? undefined;
  }

  /** The long route a request asks for, with its caller's token id; undefined: not a job. */
  private async longRoute(call: Call): Promise<{ route: GateRoute; long: LongOperation; tokenId: string } | undefined> {
    const routePath = toRoutePath(call.url.pathname, basePathOf(this.o.vars));
    if (routePath === null || !this.longAreas.has(`${call.method} ${areaPrefix(routePath)}`)) return undefined;
    const route = await this.match(call.method, routePath);
    if (!route?.long) return undefined;
    // a request the route would refuse (no token, not allowed) is no job: the route answers it
    try {
      const p = await authenticate(database(this.o.env), call.header('token'), Date.now(), this.o.env.TOKENS_DIRECT);
      if (!hasPermission(p.permissions, route.permission)) return undefined;
      return { route, long: route.long, tokenId: p.tokenId };
    } catch {
      return undefined;
    }
  }

  async run(call: Call, answer: (call: Call) => Promise<Reply>): Promise<Reply> {
    const found = await this.longRoute(call);
    if (!found) return this.plain(call, answer);
    const asked = call;
    // two jobs never share a request id (the SYSTEM calls, the journal and the log key on it)
    if (this.o.registry.jobOf(call.requestId)) call = { ...call, requestId: crypto.randomUUID() };
    const { route, long, tokenId } = found;
    const id = this.o.registry.create({
      requestId: call.requestId,
      method: call.method,
      route: route.path,
      path: call.url.pathname,
      area: route.permission.split(':')[0],
      tokenId,
      budgetMs: long.budgetS * 1000,
    });
    let settle!: () => void;
    const j: Running = {
      id,
      requestId: call.requestId,
      route: `${route.method} ${route.path}`,
      settled: new Promise((r) => (settle = r)),
    };
    this.running.set(id, j);
    this.jobOfCall.set(asked, id);
    j.budget = setTimeout(
      () => this.stop(j, 'budget', `stopped: its time budget of ${long.budgetS} s ran out`),
      long.budgetS * 1000,
    );
    j.budget.unref?.();
    const end = (status: number, text: string | null, tooLarge?: number) =>
      this.settle(j, status, text, tooLarge).finally(() => {
        this.running.delete(id);
        settle();
      });
    const replied = answer(call).catch((e: unknown) =>
      errorReply(toApiError(e, call.requestId), this.o.vars, call.requestId),
    );
    // the answer goes out once the job has ended (rolled back, recorded): a client that reads
    // the job after its answer finds it final
    const respondAsync = prefersAsync(call.header('prefer'));
    const toClient = replied.then(async (reply): Promise<Reply> => {
      if (reply.chunks)
        return {
          ...reply,
          chunks: teeChunks(
            reply.chunks,
            (e) =>
              void (e === null
                ? end(500, BROKEN_STREAM)
                : 'text' in e
                  ? end(reply.status, e.text)
                  : end(reply.status, null, e.tooLarge)),
            // a client that waits reads the stream itself: the job keeps a copy only of a small one
            respondAsync ? RESULT_MAX_BYTES : STREAMED_KEEP_BYTES,
          ),
        };
      // an isolate's answer arrives as bytes (runtime/http/server.ts replyOf)
      await end(reply.status, textOf(reply.body));
      return reply;
    });
    if (!respondAsync) return toClient;
    // nobody reads a streamed answer: the job reads it itself, to the end
    void toClient.then(async (reply) => {
      if (!reply.chunks) return;
      for await (const piece of reply.chunks) void piece;
    });
    const view = this.o.registry.get(id);
    const headers = baseHeaders(this.o.vars, call.requestId);
    headers.location = view?.links.self ?? '';
    headers['preference-applied'] = 'respond-async';
    return jsonReply({ job: view }, 202, headers, call.method === 'HEAD');
  }

  /**
   * The synchronous answer's time ran out (the server answers 504): a job goes on and the 504
   * names it; any other request is stopped.
   */
  timedOut(call: Call): { job: string } | undefined {
    const id = this.jobOfCall.get(call) ?? this.o.registry.jobOf(call.requestId);
    if (id) return { job: `${basePathOf(this.o.vars)}/jobs/${id}` };
    this.o.system.cancel(call.requestId, 'stopped: the request ran out of time');
    return undefined;
  }

  /** Cancels a running job; resolves when it ended (or after a bound). false: it is not running. */
  async cancel(id: string, why: string): Promise<boolean> {
    const j = this.running.get(id);
    if (!j) return false;
    this.stop(j, 'cancel', why);
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([j.settled, new Promise((r) => (timer = setTimeout(r, CANCEL_WAIT_MS)))]);
    clearTimeout(timer);
    return true;
  }

  /** Every running job, cancelled (a graceful stop of the host). */
  async cancelAll(why: string): Promise<void> {
    await Promise.all([...this.running.keys()].map((id) => this.cancel(id, why)));
  }

  private stop(j: Running, kind: 'cancel' | 'budget', why: string): void {
    if (j.stopped) return;
    j.stopped = { kind, why };
    this.o.registry.log(j.id, `${kind === 'cancel' ? 'cancel' : 'budget'}: ${why}`);
    this.o.system.cancel(j.requestId, kind === 'cancel' ? 'cancelled' : why);
  }

  /** A request of another route: stopped (timedOut) means rolled back once its handler ended. */
  private async plain(call: Call, answer: (call: Call) => Promise<Reply>): Promise<Reply> {
    try {
      return await answer(call);
    } finally {
      if (this.o.system.isCancelled(call.requestId)) {
        const undo = await this.rollBack(call.requestId);
        if (undo.files.length || undo.undone.length || undo.failed.length)
          this.o.log(
            `[${call.requestId}] stopped at its time limit: rolled back ${undo.files.length} file(s), ${undo.undone.length} command(s)${undo.failed.length ? `; ${undo.failed.length} step(s) failed` : ''}`,
          );
        this.o.system.release(call.requestId);
      }
    }
  }

  private async settle(j: Running, status: number, text: string | null, tooLarge?: number): Promise<void> {
    clearTimeout(j.budget);
    const undo = j.stopped ? await this.rollBack(j.requestId) : null;
    this.o.system.release(j.requestId);
    const routeError = status >= 400 && text ? errorOf(text) : null;
    let state: 'succeeded' | 'failed' | 'cancelled' = status < 400 ? 'succeeded' : 'failed';
    let error = routeError;
    if (j.stopped) {
      state = j.stopped.kind === 'cancel' ? 'cancelled' : 'failed';
      // what the route itself answered once its commands stopped stays in the details
      error = {
        code: j.stopped.kind === 'cancel' ? 'cancelled' : 'timeout',
        message: j.stopped.why,
        ...(routeError ? { details: { answer: routeError } } : {}),
      };
    }
    const keep = text !== null && status < 400 && Buffer.byteLength(text) <= RESULT_MAX_BYTES;
    const size = tooLarge ?? (text !== null && status < 400 && !keep ? Buffer.byteLength(text) : undefined);
    if (size !== undefined) this.o.registry.log(j.id, `the answer (${size} bytes) is too large to keep`);
    this.o.registry.finish(j.id, { state, status, resultText: keep ? text : null, error, undo });
    const view = this.o.registry.get(j.id);
    await this.o.events
      .send({
        kind: 'jobs.job.finished',
        data: { id: j.id, route: j.route, state, status, durationMs: view?.durationMs ?? null, undo: undo !== null },
      })
      .catch((e: unknown) => this.o.log(`jobs: the event of job ${j.id} was not recorded: ${String(e)}`));
  }

  /** The intents the request left open, rolled back (files, then undo commands newest first). */
  private async rollBack(requestId: string): Promise<JobUndo> {
    const recovered = await this.o.journal.rollBackRequest(requestId, async (argv) => {
      const r = (await this.o.system.handle('exec', { argv }, `${requestId}.undo`)) as { code: number; stderr: string };
      return r;
    });
    return {
      files: recovered.flatMap((r) => r.files),
      undone: recovered.flatMap((r) => r.undone),
      failed: recovered.flatMap((r) => r.failed),
    };
  }
}

const BROKEN_STREAM = JSON.stringify({
  error: { code: 'internal', message: 'the answer failed part way while it was written' },
});

/** A kept answer is at most this large (an explore of a huge tree is answered, not kept). */
const RESULT_MAX_BYTES = 64 * 1024 * 1024;
/**
 * What a job keeps of a streamed answer its client is reading (fs/explore): the client has it
 * all; a copy of a large one in memory and in the registry cost the host 1 GB peak for a
 * 100k-entry walk (57 MB of JSON) and doubled its time.
 */
const STREAMED_KEEP_BYTES = 8 * 1024 * 1024;

function textOf(body: Reply['body']): string | null {
  if (body === null) return null;
  return typeof body === 'string' ? body : new TextDecoder().decode(body);
}

/** RFC 7240: `Prefer: respond-async` (among other preferences, any case, with or without params). */
export function prefersAsync(header: string | null): boolean {
  if (!header) return false;
  return header.split(',').some((p) => p.split(';')[0].trim().toLowerCase() === 'respond-async');
}

/** `/api/v2/fs/make_filesystem` → `/api/v2/fs` */
function areaPrefix(path: string): string {
  return path.split('/', 4).join('/');
}

function errorOf(text: string): { code: string; message: string; [k: string]: unknown } | null {
  try {
    const e = (JSON.parse(text) as { error?: { code?: unknown; message?: unknown } }).error;
    if (e && typeof e.code === 'string' && typeof e.message === 'string') return e as { code: string; message: string };
  } catch {
    /* not JSON: a route's own text answer */
  }
  return { code: 'failed', message: text.slice(0, 500) };
}
