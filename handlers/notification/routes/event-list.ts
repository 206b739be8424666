import * as z from 'zod';
import { route } from '../../core/route';
import { eventListQuery } from '../requests';
import { DELIVERY_STATES, event } from '../responses';

interface Row {
  id: string;
  seq: number;
  kind: string;
  at: number;
  request_id: string | null;
  data: string;
}
interface DeliveryRow {
  event_id: string;
  agent_id: number;
  state: (typeof DELIVERY_STATES)[number];
  attempts: number;
  next_attempt_at: number;
  last_attempt_at: number | null;
  last_error: string | null;
  delivered_at: number | null;
}

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());
const DEFAULT_LIMIT = 50;

/** An extension to the spec: what was emitted and where each notification stands. */
export default route({
  method: 'GET',
  path: '/notification/events',
  permission: 'notification:read',
  examples: [{ summary: 'the recorded events' }],
  summary: 'Recent events, newest first, with the delivery state for each agent and what holds its queue (extension)',
  query: eventListQuery,
  response: z.array(event),
  async handler({ db, query }) {
    const limit = query.limit ?? DEFAULT_LIMIT;
    const events = (
      query.kind
        ? await db
            .prepare('SELECT id, seq, kind, at, request_id, data FROM events WHERE kind = ? ORDER BY seq DESC LIMIT ?')
            .bind(query.kind, limit)
            .all<Row>()
        : await db
            .prepare('SELECT id, seq, kind, at, request_id, data FROM events ORDER BY seq DESC LIMIT ?')
            .bind(limit)
            .all<Row>()
    ).results;
    if (events.length === 0) return [];
    const deliveries = (
      await db
        .prepare(
          // One statement text whatever the count: the ids go in as one JSON array.
          'SELECT event_id, agent_id, state, attempts, next_attempt_at, last_attempt_at, last_error, delivered_at FROM deliveries WHERE event_id IN (SELECT value FROM json_each(?)) ORDER BY agent_id',
        )
        .bind(JSON.stringify(events.map((e) => e.id)))
        .all<DeliveryRow>()
    ).results;
    // The head of each listed agent's queue: its oldest pending delivery (events walked in seq
    // order, its row probed: index look-ups only). Its other pending deliveries are held by it.
    const agents = [...new Set(deliveries.filter((d) => d.state === 'pending').map((d) => d.agent_id))];
    const headOf = db.prepare(
      "SELECT e.id AS event_id FROM events e CROSS JOIN deliveries d ON d.event_id = e.id AND d.agent_id = ? WHERE d.state = 'pending' ORDER BY e.seq LIMIT 1",
    );
    const heads = new Map<number, string>();
    for (const agent of agents) {
      const head = await headOf.bind(agent).first<{ event_id: string }>();
      if (head) heads.set(agent, head.event_id);
    }
    const heldBy = (d: DeliveryRow) => {
      const head = d.state === 'pending' ? heads.get(d.agent_id) : undefined;
      return head === undefined || head === d.event_id ? null : head;
    };
    const byEvent = new Map<string, DeliveryRow[]>();
    for (const d of deliveries) byEvent.set(d.event_id, [...(byEvent.get(d.event_id) ?? []), d]);
    return events.map((e) => ({
      id: e.id,
      seq: e.seq,
      kind: e.kind,
      time: new Date(e.at).toISOString(),
      requestId: e.request_id,
      data: JSON.parse(e.data) as Record<string, unknown>,
      deliveries: (byEvent.get(e.id) ?? []).map((d) => ({
        agentId: d.agent_id,
        state: d.state,
        attempts: d.attempts,
        nextAttemptAt: d.state === 'pending' ? iso(d.next_attempt_at) : null,
        lastAttemptAt: iso(d.last_attempt_at),
        lastError: d.last_error,
        deliveredAt: iso(d.delivered_at),
        heldBy: heldBy(d),
      })),
    }));
  },
});
