import { ApiError, type ErrorBody } from './errors';
import type { Reply } from './pipeline';
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

/** The headers of every answer, errors included (lower-case names). */
export function baseHeaders(
  vars: Vars | undefined,
  requestId: string,
  style: ResponseStyle = {},
): Record<string, string> {
  const h: Record<string, string> = {
    'content-type': style.contentType ?? JSON_CONTENT_TYPE,
    'access-control-allow-origin': '*',
    'access-control-expose-headers': 'x-request-id',
  };
  if (style.poweredBy !== false) h['x-powered-by'] = vars?.productName ?? 'Ballast';
  h['x-request-id'] = requestId;
  h['cache-control'] = 'no-store';
  return h;
}

export function jsonReply(value: unknown, status: number, headers: Record<string, string>, head = false): Reply {
  return { status, headers, body: head ? null : JSON.stringify(value) };
}

/** `style`: a route's response style, so its errors carry the same headers as its answers. */
export function errorReply(
  err: ApiError,
  vars: Vars | undefined,
  requestId: string,
  head = false,
  style?: ResponseStyle,
): Reply {
  const headers = baseHeaders(vars, requestId, style);
  if (err.headers) for (const [k, v] of Object.entries(err.headers)) headers[k.toLowerCase()] = v;
  const body: ErrorBody = err.body(requestId);
  return jsonReply(body, err.status, headers, head);
}

export function preflightReply(vars: Vars | undefined, requestId: string, methods: string[], headSafe = true): Reply {
  const headers = baseHeaders(vars, requestId);
  const allow = allowList(methods, headSafe);
  headers['access-control-allow-methods'] = allow;
  headers['access-control-allow-headers'] = ALLOWED_REQUEST_HEADERS;
  headers['access-control-max-age'] = '600';
  headers.allow = allow;
  delete headers['content-type'];
  return { status: 204, headers, body: null };
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
