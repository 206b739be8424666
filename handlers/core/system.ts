import { ApiError, codeForStatus, STATUS, type ErrorCode } from './errors';
import { BindingError, bindingRpc, type BindingPost, type Env, type Fetcher, type SystemDirect } from './bindings';

export interface ExecOptions {
  /** Written to the process's stdin, then closed. Never logged or audited (may hold a secret). */
  stdin?: string;
  timeoutMs?: number;
  /** Extra environment; the host only passes names on its allow-list. LC_ALL=C is always set. */
  env?: Record<string, string>;
  maxOutputBytes?: number;
}

export interface ExecResult {
  code: number;
  signal: string | null;
  stdout: string;
  stderr: string;
  timedOut: boolean;
  truncated: boolean;
  durationMs: number;
}

/** One step of a prompt dialogue: wait for `expect` (a regex source), then type `send` + CR. */
export interface PtyStep {
  expect: string;
  send: string;
  /** The host never records what a secret step sends. */
  secret?: boolean;
}

export interface PtyResult {
  code: number;
  output: string;
  timedOut: boolean;
  durationMs: number;
}

export interface FileStat {
  type: 'file' | 'dir' | 'symlink' | 'block' | 'other';
  size: number;
  mode: number;
  mtimeMs: number;
}

export interface DirEntry {
  name: string;
  type: FileStat['type'];
}

export interface WriteResult {
  path: string;
  /** Where the previous content was kept, when there was one and a backup was asked for. */
  backupPath?: string;
}

const MAX_STDERR_IN_ERROR = 2000;

/**
 * A host refusal becomes the same error for the client (its code says the class); a binding
 * failure we have no code for (500, a crashed op) stays an internal error.
 */
function mapBindingError(e: unknown): never {
  if (e instanceof BindingError) {
    const known = e.code in STATUS ? (e.code as ErrorCode) : undefined;
    throw new ApiError(known ?? (e.status === 500 ? 'internal' : codeForStatus(e.status)), e.message);
  }
  throw e;
}

/**
 * The routes' only way to touch the machine. Every call goes through the host's SYSTEM binding:
 * a method call when the host put `SYSTEM_DIRECT` in env (same process), else its fetch protocol.
 */
export class SystemClient {
  constructor(
    private readonly binding: Fetcher,
    private readonly requestId?: string,
    private readonly direct?: SystemDirect,
    private readonly post?: BindingPost,
  ) {}

  private call<T>(op: string, payload: unknown): Promise<T> {
    const answer = this.direct
      ? this.direct.call(op, payload, this.requestId).then((a) => {
          if (a.ok) return a.value as T;
          throw new BindingError(`system/${op}`, a.status, a.code, a.message);
        })
      : bindingRpc<T>(this.binding, `system/${op}`, payload, this.requestId, this.post);
    return answer.catch(mapBindingError);
  }

  exec(argv: string[], opts: ExecOptions = {}): Promise<ExecResult> {
    return this.call<ExecResult>('exec', { argv, ...opts });
  }

  /** exec, and a non-zero exit becomes a 502 naming the command, its exit code and stderr. */
  async run(argv: string[], opts: ExecOptions = {}): Promise<ExecResult> {
    const r = await this.exec(argv, opts);
    if (r.timedOut) throw commandTimeout(argv, r);
    if (r.code !== 0) throw commandFailed(argv, r);
    return r;
  }

  pty(argv: string[], dialogue: PtyStep[], opts: Omit<ExecOptions, 'stdin'> = {}): Promise<PtyResult> {
    return this.call<PtyResult>('pty', { argv, dialogue, ...opts });
  }

  /** The file's text, or null when it does not exist. */
  async readFile(path: string): Promise<string | null> {
    const r = await this.call<{ content: string | null }>('file/read', { path });
    return r.content;
  }

  /** Atomic write (temp file, fsync, rename); `backup` keeps the previous version beside it. */
  writeFile(
    path: string,
    content: string,
    opts: { mode?: number; backup?: boolean; exclusive?: boolean } = {},
  ): Promise<WriteResult> {
    return this.call<WriteResult>('file/write', { path, content, ...opts });
  }

  /** Put back the version a previous write or remove kept (rollback after a failed apply). */
  restoreFile(path: string): Promise<{ restored: boolean }> {
    return this.call('file/restore', { path });
  }

  removeFile(path: string, opts: { backup?: boolean } = {}): Promise<{ removed: boolean; backupPath?: string }> {
    return this.call('file/remove', { path, ...opts });
  }

  /** Entries of a directory, or null when it does not exist. */
  async listDir(path: string): Promise<DirEntry[] | null> {
    const r = await this.call<{ entries: DirEntry[] | null }>('file/list', { path });
    return r.entries;
  }

  async stat(path: string): Promise<FileStat | null> {
    const r = await this.call<{ stat: FileStat | null }>('file/stat', { path });
    return r.stat;
  }

  /**
   * The real path of an operand the route is about to hand a command, checked against the roots
   * of its kind (403 outside, or another area's: `recursive` when the command reaches the whole
   * tree below it): lets a route answer early and record the resolved path.
   */
  async resolvePath(path: string, kind: string, strictlyBelow = false, recursive = false): Promise<string> {
    return (await this.call<{ path: string }>('resolve', { path, kind, strictlyBelow, recursive })).path;
  }

  /**
   * Opens an intent before a multi-step change (runtime/system/journal.ts): the host keeps the
   * listed files as they are now, so a host killed mid-change puts them back at its next start.
   */
  async beginIntent(area: string, files: string[]): Promise<number> {
    return (await this.call<{ id: number }>('journal/begin', { area, files })).id;
  }

  /** Records how to take back the step about to run (before running it). */
  async recordUndo(id: number, undo: string[][]): Promise<void> {
    await this.call('journal/step', { id, undo });
  }

  /** The change is complete, or the route rolled it back itself. */
  async endIntent(id: number): Promise<void> {
    await this.call('journal/end', { id });
  }

  /** Seals secrets for storage with the host's key (they can be opened only by host code). */
  async sealSecrets(values: string[]): Promise<string[]> {
    return (await this.call<{ sealed: string[] }>('secret/seal', { values })).sealed;
  }

  /**
   * Where a long route is (its job's progress: runtime/jobs/), as far as it can tell truthfully.
   * Best effort: a request that is not a job ignores it, and a failed report never fails the route.
   */
  async progress(p: {
    phase?: string;
    step?: number;
    steps?: number;
    done?: number;
    total?: number;
    percent?: number;
    message?: string;
  }): Promise<void> {
    try {
      await this.call('job/progress', p);
    } catch {
      /* progress is news, not work */
    }
  }

  /** Generic host operation for area-specific capabilities (e.g. fs/explore). */
  op<T>(name: string, payload: unknown): Promise<T> {
    return this.call<T>(name, payload);
  }
}

/** The SYSTEM client of a request: direct when env carries SYSTEM_DIRECT, else over SYSTEM.fetch (or BINDING_POST). */
export function system(env: Env, requestId?: string): SystemClient {
  return new SystemClient(env.SYSTEM, requestId, env.SYSTEM_DIRECT, env.BINDING_POST);
}

function toolName(argv: string[]): string {
  const a0 = argv[0] ?? '?';
  return a0.slice(a0.lastIndexOf('/') + 1);
}

/**
 * What a failed command printed, as an error shows it: the kept stderr and the line that says
 * why. A Python tool (docker-compose 1.x) that dies prints its traceback first and the cause
 * last: the cause is its last line, and the end of stderr is kept, where it is.
 */
export function failureOf(r: Pick<ExecResult, 'stderr'>): { stderr: string; cause: string } {
  const all = r.stderr.trim();
  const traceback = all.includes('Traceback (most recent call last):');
  const stderr = traceback ? all.slice(-MAX_STDERR_IN_ERROR) : all.slice(0, MAX_STDERR_IN_ERROR);
  const lines = stderr.split('\n').filter((l) => l.trim() !== '');
  return { stderr, cause: (traceback ? lines[lines.length - 1] : lines[0]) ?? '' };
}

/** `<tool> failed (exit N): <cause>`, the message of a command_failed error. */
export function failureText(argv: string[], r: Pick<ExecResult, 'code' | 'stderr'>): string {
  const { cause } = failureOf(r);
  return `${toolName(argv)} failed (exit ${r.code})${cause ? `: ${cause}` : ''}`;
}

export function commandFailed(argv: string[], r: ExecResult, message?: string): ApiError {
  return new ApiError('command_failed', message ?? failureText(argv, r), {
    details: { command: argv, exitCode: r.code, stderr: failureOf(r).stderr },
  });
}

export function commandTimeout(argv: string[], r: ExecResult): ApiError {
  return new ApiError('command_timeout', `${toolName(argv)} did not finish within its time limit`, {
    details: { command: argv, durationMs: r.durationMs },
  });
}
