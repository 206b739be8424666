import { ApiError, type ErrorBody } from './errors';
import type { Vars } from './vars';

export const JSON_CONTENT_TYPE = 'application/json; charset=utf-8';
export const ALLOWED_REQUEST_HEADERS = 'content-type, token, x-request-id';

export interface ResponseStyle {
  /** the spec's S3 routes answer `application/string; charset=utf-8` and no X-Powered-By */
  contentType?: string;
  poweredBy?: boolean;
}

/**
 * The spec's exception for the S3 routes: `Content-Type: application/string; charset=utf-8` and no
 * `X-Powered-By`. The body is still JSON text; a route's errors carry the same headers.
 */
export const S3_STYLE: ResponseStyle = { contentType: 'application/string; charset=utf-8', poweredBy: false };

export function baseHeaders(vars: Vars | undefined, requestId: string, style: ResponseStyle = {}): Headers {
  const h = new Headers();
  h.set('content-type', style.contentType ?? JSON_CONTENT_TYPE);
  h.set('access-control-allow-origin', '*');
  h.set('access-control-expose-headers', 'x-request-id');
  if (style.poweredBy !== false) h.set('x-powered-by', vars?.productName ?? 'Ballast');
  h.set('x-request-id', requestId);
  h.set('cache-control', 'no-store');
  return h;
}

/**
 * The body text of a JSON response, kept beside the Response under a registry symbol so a host
 * in the same process can write it without draining the body stream (the dominant cost of
 * answering small JSON through WHATWG Responses in Node). Any other server just reads the body.
 */
export const BODY_TEXT = Symbol.for('ballast.bodyText');

export function jsonResponse(value: unknown, status: number, headers: Headers, head = false): Response {
  const text = head ? null : JSON.stringify(value);
  const res = new Response(text, { status, headers });
  if (text !== null) Object.defineProperty(res, BODY_TEXT, { value: text });
  return res;
}

/** `style`: a route's response style, so its errors carry the same headers as its answers. */
export function errorResponse(err: ApiError, vars: Vars | undefined, requestId: string, head = false, style?: ResponseStyle): Response {
  const headers = baseHeaders(vars, requestId, style);
  if (err.headers) for (const [k, v] of Object.entries(err.headers)) headers.set(k, v);
  const body: ErrorBody = err.body(requestId);
  return jsonResponse(body, err.status, headers, head);
}

export function preflightResponse(vars: Vars | undefined, requestId: string, methods: string[], headSafe = true): Response {
  const headers = baseHeaders(vars, requestId);
  const allow = allowList(methods, headSafe);
  headers.set('access-control-allow-methods', allow);
  headers.set('access-control-allow-headers', ALLOWED_REQUEST_HEADERS);
  headers.set('access-control-max-age', '600');
  headers.set('allow', allow);
  headers.delete('content-type');
  return new Response(null, { status: 204, headers });
}

/** `headSafe`: HEAD is offered for GET unless that GET has side effects (HEAD must not). */
export function allowList(methods: string[], headSafe = true): string {
  const set = new Set(methods);
  if (set.has('GET') && headSafe) set.add('HEAD');
  set.add('OPTIONS');
  return [...set].join(', ');
}

export function methodNotAllowed(methods: string[], headSafe = true): ApiError {
  return new ApiError('method_not_allowed', `method not allowed; use ${methods.join(' or ')}`, {
    headers: { allow: allowList(methods, headSafe) },
  });
}

const REQUEST_ID_PATTERN = /^[A-Za-z0-9._-]{8,64}$/;
export function requestIdOf(request: Request): string {
  const given = request.headers.get('x-request-id');
  return given && REQUEST_ID_PATTERN.test(given) ? given : crypto.randomUUID();
}
