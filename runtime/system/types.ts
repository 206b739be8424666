import type { ExecOptions, ExecResult, PtyResult, PtyStep } from '../../handlers/core/system';

export type { ExecOptions, ExecResult, PtyResult, PtyStep };

/** The three back ends (live, replay, record) answer the same two calls. */
export interface CommandBackend {
  exec(argv: string[], opts: ExecOptions): Promise<ExecResult>;
  pty(argv: string[], dialogue: PtyStep[], opts: Omit<ExecOptions, 'stdin'>): Promise<PtyResult>;
}

/** A refusal by the host (not a command's own failure): status is the HTTP status to answer. */
export class SystemRefusal extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = 'SystemRefusal';
  }
}

export interface CommandLimits {
  timeoutMs: number;
  maxOutputBytes: number;
}
