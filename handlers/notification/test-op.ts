/**
 * The contract of the host operation behind GET /notification/agent/{id}/test. The route asks
 * the host (runtime/areas/notification/ops.ts) because sending needs sockets, which route code has not.
 * A refused send is an answer, not a binding error, so the route can say why with a 502.
 */
export const TEST_OP = 'notification/test';

export interface TestOpPayload {
  id: number;
}

export type TestOpResult = { sent: true } | { sent: false; error: string };
