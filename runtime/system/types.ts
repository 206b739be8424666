import { STATUS, type ErrorCode } from '../../handlers/core/errors';
import type { ExecOptions, ExecResult, PtyResult, PtyStep } from '../../handlers/core/system';

export type { ExecOptions, ExecResult, PtyResult, PtyStep };

/**
 * The three back ends (live, replay, record) answer the same two calls. `stop` (the host's,
 * never a route's) stops the command when its request is cancelled: its whole process group,
 * SIGTERM then SIGKILL after a grace period.
 */
export interface CommandBackend {
  exec(argv: string[], opts: ExecOptions, stop?: StopSignal): Promise<ExecResult>;
  pty(argv: string[], dialogue: PtyStep[], opts: Omit<ExecOptions, 'stdin'>, stop?: StopSignal): Promise<PtyResult>;
}

/**
 * A request's cancel as a back end sees it. Not an AbortSignal: the host made one per command,
 * and on Node 20 each outlived the young generation (an AbortController and its signal per
 * replayed command were over half of what the host promoted to the old generation under load,
 * the bench's RSS growth), where a command that nobody cancels needs none of it.
 */
export interface StopSignal {
  readonly stopped: boolean;
  /** `fn` runs once, when the request is cancelled (at once if it already was); the result removes it */
  onStop(fn: () => void): () => void;
}

/** The StopSignal of one request's commands (SystemService.cancel stops it). */
export class RequestStop implements StopSignal {
  constructor(readonly requestId: string) {}
  stopped = false;
  /** commands holding it (the service forgets it at 0) */
  users = 0;
  private fns: (() => void)[] | null = null;

  onStop(fn: () => void): () => void {
    if (this.stopped) {
      fn();
      return () => undefined;
    }
    (this.fns ??= []).push(fn);
    return () => {
      const i = this.fns?.indexOf(fn) ?? -1;
      if (i >= 0) this.fns!.splice(i, 1);
    };
  }

  stop(): void {
    this.stopped = true;
    const fns = this.fns ?? [];
    this.fns = null;
    for (const fn of fns) fn();
  }
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
