/**
 * The binding socket's framed connections (docs/bindings-protocol.md "Framed connections"): the
 * same operations as its HTTP/1.1 requests, each a one-line head and the JSON text, for the Deno
 * entry's client. Measured on the host: ~15 µs of CPU a call against ~40 µs for the same call as
 * an HTTP request to node:http (a request object, its headers and a response object per call).
 *
 * Pure text and no node: imports: the host's server (framed.ts) and the Deno entry
 * (runtime/isolate/deno-entry.ts, bundled into dist/deno.mjs) share it.
 */

/** The first byte of a framed connection: NUL, which no HTTP request begins with. */
export const FRAMED_FIRST_BYTE = 0;
/** The longest head line (preface, request or answer) a reader waits for before it gives up. */
export const MAX_FRAME_HEAD = 512;

/** Opens a framed connection: NUL, the binding secret, a newline (once per connection). */
export const prefaceOf = (secret: string): string => `\0${secret}\n`;

/** What a request id may be in a head: printable ASCII without spaces (the host makes or checks it). */
const REQUEST_ID = /^[\x21-\x7e]{1,200}$/;
/** `-` in a head is "no request id": no API request id is one character long (pipeline.ts requestIdFrom). */
const NO_ID = '-';

/** A request's head: `<op path> <request id or -> <byte length of the JSON text>\n`. */
export function requestHeadOf(op: string, requestId: string | null | undefined, length: number): string {
  return `${op} ${requestId && REQUEST_ID.test(requestId) ? requestId : NO_ID} ${length}\n`;
}

export interface RequestHead {
  op: string;
  requestId: string | undefined;
  length: number;
}

const REQUEST_HEAD = /^(\/[\x21-\x7e]{1,200}) ([\x21-\x7e]{1,200}) (0|[1-9][0-9]{0,9})$/;
/** A request's head line (without its newline); null when it is not one. */
export function parseRequestHead(line: string): RequestHead | null {
  const m = REQUEST_HEAD.exec(line);
  if (!m) return null;
  return { op: m[1], requestId: m[2] === NO_ID ? undefined : m[2], length: Number(m[3]) };
}

/** An answer's head: `<status> <byte length of the JSON text>\n`. */
export const answerHeadOf = (status: number, length: number): string => `${status} ${length}\n`;

const ANSWER_HEAD = /^([1-5][0-9]{2}) (0|[1-9][0-9]{0,9})$/;
/** An answer's head line (without its newline); null when it is not one. */
export function parseAnswerHead(line: string): { status: number; length: number } | null {
  const m = ANSWER_HEAD.exec(line);
  return m ? { status: Number(m[1]), length: Number(m[2]) } : null;
}
