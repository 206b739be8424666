import { STATUS, type ErrorCode } from '../../handlers/core/errors';
import type { ExecOptions, ExecResult, PtyResult, PtyStep } from '../../handlers/core/system';

export type { ExecOptions, ExecResult, PtyResult, PtyStep };

/**
 * The three back ends (live, replay, record) answer the same two calls. `signal` (the host's,
 * never a route's) stops the command when its request is cancelled: its whole process group,
 * SIGTERM then SIGKILL after a grace period.
 */
export interface CommandBackend {
  exec(argv: string[], opts: ExecOptions, signal?: AbortSignal): Promise<ExecResult>;
  pty(argv: string[], dialogue: PtyStep[], opts: Omit<ExecOptions, 'stdin'>, signal?: AbortSignal): Promise<PtyResult>;
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
