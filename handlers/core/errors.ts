/**
 * The one error model. Every failure of every route is answered as
 *   { "error": { "code": "<stable_code>", "message": "<human text>", "requestId": "...",
 *                "issues"?: [{ "path": "a.b", "message": "..." }], "details"?: {...} } }
 * with the HTTP status telling the class. Codes are stable API; messages are for people.
 */
import { ParseError } from './parse-error';
/** Every error code and the one HTTP status it is answered with: the status follows from the code. */
export const STATUS = {
  bad_request: 400,
  validation_failed: 400,
  invalid_json: 400,
  unauthorized: 401,
  forbidden: 403,
  not_found: 404,
  route_not_found: 404,
  method_not_allowed: 405,
  conflict: 409,
  /** the request's job was cancelled (or its time ran out): the host starts nothing more for it */
  cancelled: 409,
  payload_too_large: 413,
  unsupported_media_type: 415,
  headers_too_large: 431,
  internal: 500,
  not_implemented: 501,
  not_recorded: 501,
  command_failed: 502,
  bad_gateway: 502,
  busy: 503,
  timeout: 504,
  command_timeout: 504,
} as const;
export type ErrorCode = keyof typeof STATUS;

/** The code used when only a status is known (a tool's failure mapped to a class). */
const CODE_OF_STATUS: Record<number, ErrorCode> = {
  400: 'bad_request',
  401: 'unauthorized',
  403: 'forbidden',
  404: 'not_found',
  405: 'method_not_allowed',
  409: 'conflict',
  413: 'payload_too_large',
  415: 'unsupported_media_type',
  431: 'headers_too_large',
  501: 'not_implemented',
  502: 'command_failed',
  503: 'busy',
  504: 'command_timeout',
};
export const codeForStatus = (status: number): ErrorCode => CODE_OF_STATUS[status] ?? 'internal';

export interface ErrorIssue {
  path: string;
  message: string;
}

/** The one zod-issue formatter (routes, area settings, the config file, host op payloads). */
export function issuesOf(
  location: string,
  error: { issues: readonly { path: readonly PropertyKey[]; message: string }[] },
): ErrorIssue[] {
  return error.issues.map((i) => ({
    path: [location, ...i.path.map(String)].filter((p) => p !== '').join('.') || '(root)',
    message: i.message,
  }));
}

/** `a.b: message; c: message` */
export const issuesText = (issues: readonly ErrorIssue[]) => issues.map((i) => `${i.path}: ${i.message}`).join('; ');

export interface ErrorBody {
  error: {
    code: ErrorCode;
    message: string;
    requestId?: string;
    issues?: ErrorIssue[];
    details?: Record<string, unknown>;
  };
}

export interface ErrorExtra {
  issues?: ErrorIssue[];
  details?: Record<string, unknown>;
  headers?: Record<string, string>;
}

export class ApiError extends Error {
  readonly status: number;
  readonly code: ErrorCode;
  readonly issues?: ErrorIssue[];
  readonly details?: Record<string, unknown>;
  readonly headers?: Record<string, string>;

  constructor(code: ErrorCode, message: string, extra: ErrorExtra = {}) {
    super(message);
    this.name = 'ApiError';
    this.status = STATUS[code];
    this.code = code;
    this.issues = extra.issues;
    this.details = extra.details;
    this.headers = extra.headers;
  }

  body(requestId?: string): ErrorBody {
    const error: ErrorBody['error'] = { code: this.code, message: this.message };
    if (requestId) error.requestId = requestId;
    if (this.issues) error.issues = this.issues;
    if (this.details) error.details = this.details;
    return { error };
  }
}

/** For a status decided by a table (a tool's failure class): the status's usual code. */
export const errorForStatus = (status: number, message: string, extra?: ErrorExtra) =>
  new ApiError(codeForStatus(status), message, extra);

export const badRequest = (message: string, issues?: ErrorIssue[]) =>
  new ApiError(issues ? 'validation_failed' : 'bad_request', message, { issues });
/** One field is wrong: a 400 whose single issue names it (`body.name`, `params.id`, `query.x`). */
export const validationFailed = (path: string, message: string) =>
  new ApiError('validation_failed', `invalid ${path}: ${message}`, { issues: [{ path, message }] });
export const forbidden = (message: string) => new ApiError('forbidden', message);
export const notFound = (message: string) => new ApiError('not_found', message);
export const conflict = (message: string, details?: Record<string, unknown>) =>
  new ApiError('conflict', message, { details });
export const badGateway = (message: string, details?: Record<string, unknown>) =>
  new ApiError('bad_gateway', message, { details });
/** A bug: the message only names the request id, the details go to the log. */
export const internalError = (requestId: string) =>
  new ApiError('internal', `internal error; see the server log for request ${requestId}`);

/**
 * The one mapping of anything thrown to the error model (the app, every route, the Node host):
 * a parser's failure is the system's answer we cannot read (502), anything unexpected is a 500
 * whose message names only the request id; neither leaks its message.
 */
export function toApiError(e: unknown, requestId: string): ApiError {
  if (e instanceof ApiError) return e;
  if (e instanceof ParseError) {
    console.error(`[${requestId}] parse error: ${e.message}`);
    return new ApiError(
      'bad_gateway',
      `could not read the output of ${e.parser}${e.line !== undefined ? ` (line ${e.line})` : ''}`,
    );
  }
  console.error(`[${requestId}] unexpected error:`, e);
  return internalError(requestId);
}
