/**
 * The one error model. Every failure of every route is answered as
 *   { "error": { "code": "<stable_code>", "message": "<human text>", "requestId": "...",
 *                "issues"?: [{ "path": "a.b", "message": "..." }], "details"?: {...} } }
 * with the HTTP status telling the class. Codes are stable API; messages are for people.
 */
export type ErrorCode =
  | 'bad_request'
  | 'validation_failed'
  | 'invalid_json'
  | 'unauthorized'
  | 'forbidden'
  | 'not_found'
  | 'route_not_found'
  | 'method_not_allowed'
  | 'conflict'
  | 'payload_too_large'
  | 'unsupported_media_type'
  | 'command_failed'
  | 'command_timeout'
  | 'bad_gateway'
  | 'busy'
  | 'timeout'
  | 'internal';

export interface ErrorIssue {
  path: string;
  message: string;
}

export interface ErrorBody {
  error: {
    code: ErrorCode;
    message: string;
    requestId?: string;
    issues?: ErrorIssue[];
    details?: Record<string, unknown>;
  };
}

export class ApiError extends Error {
  readonly status: number;
  readonly code: ErrorCode;
  readonly issues?: ErrorIssue[];
  readonly details?: Record<string, unknown>;
  readonly headers?: Record<string, string>;

  constructor(
    status: number,
    code: ErrorCode,
    message: string,
    extra: { issues?: ErrorIssue[]; details?: Record<string, unknown>; headers?: Record<string, string> } = {},
  ) {
    super(message);
    this.name = 'ApiError';
    this.status = status;
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

export const badRequest = (message: string, issues?: ErrorIssue[]) =>
  new ApiError(400, issues ? 'validation_failed' : 'bad_request', message, { issues });
export const notFound = (message: string) => new ApiError(404, 'not_found', message);
export const conflict = (message: string, details?: Record<string, unknown>) =>
  new ApiError(409, 'conflict', message, { details });
