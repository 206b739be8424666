/**
 * The hop's framed connection, host → Deno entry (docs/bindings-protocol.md "The framed hop"):
 * requests and their answers as a one-line head, the headers as JSON and the body, instead of
 * HTTP/1.1 to Deno.serve, and many exchanges at once on one connection, each frame naming its
 * exchange by id. Measured on the host's side (a Node client on 16 connections, the same request
 * and answer): ~19 µs of CPU a request against ~60 µs through undici's Pool, with one connection
 * per exchange; one connection for all of them then let a turn's requests go out in one write.
 *
 * Pure text and no node: imports: the host (forward-framed.ts) and the Deno entry (deno-hop.ts,
 * bundled into dist/deno.mjs) share it.
 */

/**
 * The longest head line a reader waits for: the request target is the longest part, and the
 * host's server takes at most 16 KiB of request head from a client (node:http's maxHeaderSize).
 */
export const MAX_HOP_HEAD = 20 * 1024;

/** The largest exchange id; the host counts up from 1 and starts over after it. */
export const MAX_HOP_ID = 2 ** 31 - 1;

/**
 * The next id after `after` that is not `taken` (1 after MAX_HOP_ID): the host's exchange ids
 * and the entry's call ids, each side counting its own.
 */
export function nextHopId(after: number, taken: (id: number) => boolean): number {
  let id = after;
  do id = id >= MAX_HOP_ID ? 1 : id + 1;
  while (taken(id));
  return id;
}

const ID = '([1-9][0-9]{0,9})';
const LENGTH = '(0|[1-9][0-9]{0,9})';

/**
 * A request: `<id> <method> <target> <headers' JSON byte length> <body byte length>\n`, the
 * JSON, the body.
 */
export const hopRequestHeadOf = (
  id: number,
  method: string,
  target: string,
  headersLength: number,
  bodyLength: number,
): string => `${id} ${method} ${target} ${headersLength} ${bodyLength}\n`;

export interface HopRequestHead {
  kind: 'request';
  id: number;
  method: string;
  target: string;
  headersLength: number;
  bodyLength: number;
}

/**
 * What the host asks of an answer that comes in pieces (an event stream): hold its pieces back
 * (its client is not reading), go on, or stop it (its client went away).
 */
export type HopControlVerb = 'pause' | 'resume' | 'cancel';

/** A control frame: `<id> <pause|resume|cancel>\n`. */
export const hopControlOf = (id: number, verb: HopControlVerb): string => `${id} ${verb}\n`;

export interface HopControl {
  kind: 'control';
  id: number;
  verb: HopControlVerb;
}

/**
 * A binding call's answer (host → isolate): `<id> result <status> <JSON text's byte length>\n`,
 * the text; the id is the one the isolate gave the call (its own numbering, not the exchanges').
 */
export const hopResultHeadOf = (id: number, status: number, length: number): string =>
  `${id} result ${status} ${length}\n`;

export interface HopResultHead {
  kind: 'result';
  id: number;
  status: number;
  length: number;
}

const REQUEST_HEAD = new RegExp(`^${ID} ([A-Z]{1,16}) (/[\\x21-\\x7e]*) ${LENGTH} ${LENGTH}$`);
const CONTROL = new RegExp(`^${ID} (pause|resume|cancel)$`);
const RESULT_HEAD = new RegExp(`^${ID} result ([1-5][0-9]{2}) ${LENGTH}$`);

const idOf = (text: string): number | null => {
  const n = Number(text);
  return n <= MAX_HOP_ID ? n : null;
};

/** A head line the host sent (without its newline): a request, a control frame or a call's result; null when none. */
export function parseHopHostFrame(line: string): HopRequestHead | HopControl | HopResultHead | null {
  const r = REQUEST_HEAD.exec(line);
  if (r) {
    const id = idOf(r[1]);
    if (id === null) return null;
    return { kind: 'request', id, method: r[2], target: r[3], headersLength: Number(r[4]), bodyLength: Number(r[5]) };
  }
  const c = CONTROL.exec(line);
  if (c) {
    const id = idOf(c[1]);
    return id === null ? null : { kind: 'control', id, verb: c[2] as HopControlVerb };
  }
  const b = RESULT_HEAD.exec(line);
  if (!b) return null;
  const id = idOf(b[1]);
  return id === null ? null : { kind: 'result', id, status: Number(b[2]), length: Number(b[3]) };
}

/** The body length of an answer that follows in chunks (an event stream, a long listing): `*`. */
export const STREAMED = '*';

/**
 * An answer: `<id> <status> <headers' JSON byte length> <body byte length, or *>\n`, the JSON,
 * then the body; after `*`, chunks of `<id> <byte length>\n<bytes>`, ended by a chunk of
 * length 0.
 */
export const hopAnswerHeadOf = (
  id: number,
  status: number,
  headersLength: number,
  bodyLength: number | typeof STREAMED,
): string => `${id} ${status} ${headersLength} ${bodyLength}\n`;

export interface HopAnswerHead {
  kind: 'answer';
  id: number;
  status: number;
  headersLength: number;
  /** null: the body follows in chunks */
  bodyLength: number | null;
}

/** A chunk's head: its exchange and byte length; 0 ends the body. */
export const hopChunkHeadOf = (id: number, length: number): string => `${id} ${length}\n`;

export interface HopChunkHead {
  kind: 'chunk';
  id: number;
  length: number;
}

/**
 * What the isolate sends first on a connection, before any other frame: the per-start binding
 * secret (docs/bindings-protocol.md), as a binding socket connection's preface carries it. The
 * host takes binding calls on the connection only from a peer that knows it.
 */
export const hopPrefaceOf = (secret: string): string => `secret ${secret}\n`;

/** The secret in a preface line (without its newline); null when the line is not one. */
export function parseHopPreface(line: string): string | null {
  const m = /^secret ([\x21-\x7e]{1,200})$/.exec(line);
  return m ? m[1] : null;
}

/** What a request id may be in a call's head: printable ASCII without spaces (the host made or checked it). */
const REQUEST_ID = /^[\x21-\x7e]{1,200}$/;
/** `-` in a head is "no request id": no API request id is one character long (pipeline.ts requestIdFrom). */
const NO_ID = '-';

/**
 * A binding call (isolate → host), what a request to the binding socket would carry (SYSTEM, DB,
 * EVENTS, tokens/touch): `<id> call <op path> <request id or -> <JSON text's byte length>\n`,
 * the text. The isolate numbers its calls; the host answers each with a result of the same id.
 */
export const hopCallHeadOf = (id: number, op: string, requestId: string | null | undefined, length: number): string =>
  `${id} call ${op} ${requestId && REQUEST_ID.test(requestId) ? requestId : NO_ID} ${length}\n`;

export interface HopCallHead {
  kind: 'call';
  id: number;
  op: string;
  requestId: string | undefined;
  length: number;
}

const CALL_HEAD = new RegExp(`^${ID} call (/[\\x21-\\x7e]{1,200}) ([\\x21-\\x7e]{1,200}) ${LENGTH}$`);
const ANSWER_HEAD = new RegExp(`^${ID} ([1-5][0-9]{2}) ${LENGTH} (${LENGTH}|\\*)$`);
const CHUNK_HEAD = new RegExp(`^${ID} ${LENGTH}$`);

/** A head line the isolate sent (without its newline): an answer, a chunk or a binding call; null when none. */
export function parseHopIsolateFrame(line: string): HopAnswerHead | HopChunkHead | HopCallHead | null {
  const a = ANSWER_HEAD.exec(line);
  if (a) {
    const id = idOf(a[1]);
    if (id === null) return null;
    return {
      kind: 'answer',
      id,
      status: Number(a[2]),
      headersLength: Number(a[3]),
      bodyLength: a[4] === STREAMED ? null : Number(a[4]),
    };
  }
  const c = CHUNK_HEAD.exec(line);
  if (c) {
    const id = idOf(c[1]);
    return id === null ? null : { kind: 'chunk', id, length: Number(c[2]) };
  }
  const k = CALL_HEAD.exec(line);
  if (!k) return null;
  const id = idOf(k[1]);
  if (id === null) return null;
  return { kind: 'call', id, op: k[2], requestId: k[3] === NO_ID ? undefined : k[3], length: Number(k[4]) };
}
