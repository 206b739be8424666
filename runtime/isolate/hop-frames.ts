/**
 * The hop's framed connections, host → Deno entry (docs/bindings-protocol.md "The framed hop"): a request
 * and its answer as a one-line head, the headers as JSON and the body, instead of HTTP/1.1 to
 * Deno.serve. Measured on the host's side (a Node client on 16 connections, the same request and
 * answer): ~19 µs of CPU a request against ~60 µs through undici's Pool.
 *
 * Pure text and no node: imports: the host (forward-framed.ts) and the Deno entry (deno-hop.ts,
 * bundled into dist/deno.mjs) share it.
 */

/**
 * The longest head line a reader waits for: the request target is the longest part, and the
 * host's server takes at most 16 KiB of request head from a client (node:http's maxHeaderSize).
 */
export const MAX_HOP_HEAD = 20 * 1024;

/** A request: `<method> <target> <headers' JSON byte length> <body byte length>\n`, the JSON, the body. */
export const hopRequestHeadOf = (method: string, target: string, headersLength: number, bodyLength: number): string =>
  `${method} ${target} ${headersLength} ${bodyLength}\n`;

export interface HopRequestHead {
  method: string;
  target: string;
  headersLength: number;
  bodyLength: number;
}

const LENGTH = '(0|[1-9][0-9]{0,9})';
const REQUEST_HEAD = new RegExp(`^([A-Z]{1,16}) (/[\\x21-\\x7e]*) ${LENGTH} ${LENGTH}$`);
/** A request's head line (without its newline); null when it is not one. */
export function parseHopRequestHead(line: string): HopRequestHead | null {
  const m = REQUEST_HEAD.exec(line);
  return m ? { method: m[1], target: m[2], headersLength: Number(m[3]), bodyLength: Number(m[4]) } : null;
}

/** The body length of an answer that follows in chunks (an event stream): `*`. */
export const STREAMED = '*';

/**
 * An answer: `<status> <headers' JSON byte length> <body byte length, or *>\n`, the JSON, then the
 * body; after `*`, chunks of `<byte length>\n<bytes>`, ended by a chunk of length 0.
 */
export const hopAnswerHeadOf = (status: number, headersLength: number, bodyLength: number | typeof STREAMED): string =>
  `${status} ${headersLength} ${bodyLength}\n`;

export interface HopAnswerHead {
  status: number;
  headersLength: number;
  /** null: the body follows in chunks */
  bodyLength: number | null;
}

const ANSWER_HEAD = new RegExp(`^([1-5][0-9]{2}) ${LENGTH} (${LENGTH}|\\*)$`);
/** An answer's head line (without its newline); null when it is not one. */
export function parseHopAnswerHead(line: string): HopAnswerHead | null {
  const m = ANSWER_HEAD.exec(line);
  if (!m) return null;
  return { status: Number(m[1]), headersLength: Number(m[2]), bodyLength: m[3] === STREAMED ? null : Number(m[3]) };
}

/** A chunk's head: its byte length; 0 ends the body. */
export const hopChunkHeadOf = (length: number): string => `${length}\n`;

const CHUNK_HEAD = new RegExp(`^${LENGTH}$`);
/** A chunk's head line (without its newline): its length, or null when it is not one. */
export function parseHopChunkHead(line: string): number | null {
  const m = CHUNK_HEAD.exec(line);
  return m ? Number(m[1]) : null;
}
