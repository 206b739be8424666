/** What the hop's client tests share (test/host/isolate-forward*.test.ts): a token row, calls, reply text. */
import { expect, vi } from 'vitest';
import type { TokenRecord } from '../../handlers/core/bindings';
import { callFromRequest, type Call, type Reply } from '../../handlers/core/pipeline';
import { answers } from '../../runtime/http/reply-batch';

export const hopTokenRow: TokenRecord = {
  id: 'a'.repeat(12),
  name: 'ops é',
  hash: 'h',
  permissions: '["fs:read"]',
  expires_at: null,
  revoked_at: null,
  last_used_at: 5,
};
/** a token in the product's shape (auth.ts TOKEN_PATTERN) whose id is the row's */
export const HOP_TOKEN = `blt_${'a'.repeat(12)}_${'s'.repeat(43)}`;

/** A Call as the host's server makes it, from a WHATWG request's parts. */
export function callOf(url: string, init: RequestInit = {}): Promise<Call> {
  return callFromRequest(new Request(url, init), 1 << 20);
}

/** A reply's whole text: its body, or its pieces read to the end. */
export async function replyText(reply: Reply): Promise<string> {
  if (reply.chunks) {
    let all = '';
    for await (const piece of reply.chunks) all += piece;
    return all;
  }
  return reply.body === null ? '' : typeof reply.body === 'string' ? reply.body : Buffer.from(reply.body).toString();
}

/**
 * An isolate's event stream far larger than the sockets' buffers hold (2,048 pieces of 4 KiB),
 * written with backpressure: `write` returns false when the socket is full and `drained` calls
 * back once it takes more. `stall` resolves when no drain came for 300 ms: the reader holds it
 * back. `written()` counts the pieces handed to the socket so far. `readAfterStall` waits for the
 * stall, then reads the reply's pieces to the end: the pieces written by the stall and by the
 * end, and the characters read.
 */
export function heldBackStream(): {
  piece: string;
  total: number;
  stall: Promise<void>;
  written(): number;
  run(write: (piece: string) => boolean, drained: (more: () => void) => void, end: () => void): void;
  readAfterStall(reply: Reply): Promise<{ atStall: number; atEnd: number; read: number }>;
} {
  const piece = `data: ${'x'.repeat(4089)}\n\n`;
  const total = 2048;
  let written = 0;
  let stalled = () => undefined as void;
  const stall = new Promise<void>((r) => (stalled = r));
  return {
    piece,
    total,
    stall,
    written: () => written,
    run(write, drained, end) {
      const more = () => {
        while (written < total) {
          written++;
          if (!write(piece)) {
            const t = setTimeout(stalled, 300);
            drained(() => (clearTimeout(t), more()));
            return;
          }
        }
        end();
      };
      more();
    },
    async readAfterStall(reply) {
      await stall;
      const atStall = written;
      let read = 0;
      for await (const p of reply.chunks ?? []) read += p.length;
      return { atStall, atEnd: written, read };
    },
  };
}

/**
 * That an answer read from the hop re-arms the turn's answer batch (runtime/http/reply-batch.ts):
 * `call` makes one call through the hop's client and waits for its answer.
 */
export async function expectAnswerArrives(call: () => Promise<unknown>): Promise<void> {
  const arrive = vi.spyOn(answers, 'arrive');
  try {
    await call();
    expect(arrive).toHaveBeenCalled();
  } finally {
    arrive.mockRestore();
  }
}
