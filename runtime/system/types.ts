import { STATUS, type ErrorCode } from '../../handlers/core/errors';
import type { ExecOptions, ExecResult, PtyResult, PtyStep } from '../../handlers/core/system';

export type { ExecOptions, ExecResult, PtyResult, PtyStep };

/** The three back ends (live, replay, record) answer the same two calls. */
export interface CommandBackend {
  exec(argv: string[], opts: ExecOptions): Promise<ExecResult>;
  pty(argv: string[], dialogue: PtyStep[], opts: Omit<ExecOptions, 'stdin'>): Promise<PtyResult>;
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
