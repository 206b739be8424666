import { ANY_TOKEN } from '../../core/auth';
import { JsonText, route } from '../../core/route';
import type { SystemClient } from '../../core/system';
import { JOBS_OPS, type JobEvent, type JobEventsResult, type JobViewer } from '../contract';
import { jobEventsQuery, jobParams } from '../requests';
import { viewerOf } from '../viewer';
import * as z from 'zod';

/** How long one look at the job waits for news; a comment line keeps the connection alive between looks. */
const WAIT_MS = 15_000;

function sse(e: JobEvent): string {
  return `id: ${e.seq}\nevent: ${e.type}\ndata: ${JSON.stringify({ ...e.data, at: new Date(e.at).toISOString() })}\n\n`;
}

async function* stream(system: SystemClient, viewer: JobViewer, id: string, after: number): AsyncGenerator<string> {
  let last = after;
  for (;;) {
    const r = await system.op<JobEventsResult>(JOBS_OPS.events, { viewer, id, after: last, waitMs: WAIT_MS });
    for (const e of r.events) {
      last = e.seq;
      yield sse(e);
    }
    if (r.ended) return;
    if (r.events.length === 0) yield ': still running\n\n';
  }
}

export default route({
  method: 'GET',
  path: '/jobs/:id/events',
  permission: ANY_TOKEN,
  summary:
    'A job as Server-Sent Events: `progress`, `log` (each command, its exit code and stderr, secrets masked) and `state` (running, then the final state), each with its number as `id:`; resumable with `Last-Event-ID` (or `?after=`); the stream ends with the final state',
  params: jobParams,
  query: jobEventsQuery,
  response: z.string().describe('text/event-stream'),
  style: { contentType: 'text/event-stream; charset=utf-8' },
  examples: [
    {
      summary: 'A job id nobody started',
      params: { id: '00000000-0000-4000-8000-000000000000' },
      status: 404,
    },
  ],
  async handler({ params, query, principal, system, header }) {
    const viewer = viewerOf(principal);
    const lastId = Number(header('last-event-id') ?? '');
    const after = query.after ?? (Number.isInteger(lastId) && lastId >= 0 ? lastId : 0);
    // an unknown (or another token's) job is a 404 before the stream starts
    const first = await system.op<JobEventsResult>(JOBS_OPS.events, { viewer, id: params.id, after, waitMs: 0 });
    async function* all(): AsyncGenerator<string> {
      // how soon an EventSource reconnects (it then sends Last-Event-ID); the stream ends with the job
      yield 'retry: 3000\n\n';
      let last = after;
      for (const e of first.events) {
        last = e.seq;
        yield sse(e);
      }
      if (first.ended) return;
      yield* stream(system, viewer, params.id, last);
    }
    return new JsonText(all());
  },
});
