import { STATUS, type ErrorCode } from '../../handlers/core/errors';
import type { ExecOptions, ExecResult, PtyResult, PtyStep } from '../../handlers/core/system';

export type { ExecOptions, ExecResult, PtyResult, PtyStep };

/**
 * What the host adds to a route's options: `signal` stops the command (its whole process group:
 * SIGTERM, SIGKILL after a grace period) when the request is cancelled. Never from a route.
 */
export interface BackendExecOptions extends ExecOptions {
  signal?: AbortSignal;
}

/** The three back ends (live, replay, record) answer the same two calls. */
export interface CommandBackend {
  exec(argv: string[], opts: BackendExecOptions): Promise<ExecResult>;
  pty(argv: string[], dialogue: PtyStep[], opts: Omit<BackendExecOptions, 'stdin'>): Promise<PtyResult>;
}

/** A refusal by the host (not a command's own failure); its code gives the HTTP status to answer. */
export class SystemRefusal extends Error {
  readonly status: number;
  constructor(
    readonly code: ErrorCode,
    message: string,
  ) {
    super(message);
    this.name = 'SystemRefusal';
    this.status = STATUS[code];
  }
}

export interface CommandLimits {
  timeoutMs: number;
  maxOutputBytes: number;
}
