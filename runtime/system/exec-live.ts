import { spawn } from 'node:child_process';
import type { CommandBackend, CommandLimits, ExecOptions, ExecResult, PtyResult, PtyStep, StopSignal } from './types';
import { SystemRefusal } from './types';
import { importModule } from '../launcher-bridge';

export interface LiveOptions {
  /** Absolute binaries that may be run. Nothing else is ever executed. */
  allowedBinaries: ReadonlySet<string>;
  /** Environment variable names a route may set (e.g. KRB5CCNAME); others are refused. */
  allowedEnv: ReadonlySet<string>;
  /** Environment every command gets (after LC_ALL=C and PATH), e.g. KRB5_CONFIG in tests. */
  baseEnv: Record<string, string>;
  /** argv prefix, e.g. ['/usr/sbin/ip', 'netns', 'exec', 'ns1'] to run everything in a namespace. */
  wrapper: string[];
  limits: CommandLimits;
}

const KILL_GRACE_MS = 2000;

export function checkArgv(argv: unknown, allowed: ReadonlySet<string>): string[] {
  if (!Array.isArray(argv) || argv.length === 0 || argv.some((a) => typeof a !== 'string')) {
    throw new SystemRefusal('bad_request', 'argv must be a non-empty array of strings');
  }
  const list = argv as string[];
  if (list.some((a) => a.includes('\0'))) throw new SystemRefusal('bad_request', 'argv must not contain NUL');
  if (!list[0].startsWith('/')) throw new SystemRefusal('forbidden', `binary must be an absolute path: ${list[0]}`);
  if (!allowed.has(list[0])) throw new SystemRefusal('forbidden', `binary not on the allow-list: ${list[0]}`);
  return list;
}

export function commandEnv(o: LiveOptions, extra: Record<string, string> | undefined): Record<string, string> {
  const env: Record<string, string> = {
    PATH: '/usr/sbin:/usr/bin:/sbin:/bin',
    // Parsers read C-locale output with UTC timestamps (klist prints local time without a zone).
    LC_ALL: 'C',
    LANG: 'C',
    TZ: 'UTC',
    ...o.baseEnv,
  };
  for (const [k, v] of Object.entries(extra ?? {})) {
    if (!o.allowedEnv.has(k)) throw new SystemRefusal('forbidden', `environment variable not allowed: ${k}`);
    if (typeof v !== 'string' || v.includes('\0')) throw new SystemRefusal('bad_request', `bad value for ${k}`);
    env[k] = v;
  }
  return env;
}

export class LiveBackend implements CommandBackend {
  constructor(private readonly o: LiveOptions) {}

  exec(argvIn: string[], opts: ExecOptions, cancel?: StopSignal): Promise<ExecResult> {
    const argv = checkArgv(argvIn, this.o.allowedBinaries);
    const env = commandEnv(this.o, opts.env);
    const timeoutMs = Math.min(opts.timeoutMs ?? this.o.limits.timeoutMs, this.o.limits.timeoutMs * 10);
    const cap = Math.min(opts.maxOutputBytes ?? this.o.limits.maxOutputBytes, this.o.limits.maxOutputBytes);
    const full = [...this.o.wrapper, ...argv];
    const started = performance.now();

    return new Promise((resolve) => {
      // its own process group, so a timeout stops the whole tool: a shell script's pipeline
      // stages would otherwise go on changing files after the answer (and after a rollback)
      const child = spawn(full[0], full.slice(1), {
        env,
        stdio: ['pipe', 'pipe', 'pipe'],
        shell: false,
        detached: true,
      });
      const signalAll = (signal: NodeJS.Signals) => {
        try {
          if (child.pid !== undefined) process.kill(-child.pid, signal);
        } catch {
          child.kill(signal);
        }
      };
      const out: Buffer[] = [];
      const err: Buffer[] = [];
      let outLen = 0;
      let errLen = 0;
      let truncated = false;
      let timedOut = false;
      let spawnError: Error | undefined;
      const collect = (chunks: Buffer[], len: number, chunk: Buffer): number => {
        const room = cap - len;
        if (room <= 0) {
          truncated = true;
          return len;
        }
        if (chunk.length > room) {
          truncated = true;
          chunks.push(chunk.subarray(0, room));
          return cap;
        }
        chunks.push(chunk);
        return len + chunk.length;
      };
      child.stdout.on('data', (c: Buffer) => (outLen = collect(out, outLen, c)));
      child.stderr.on('data', (c: Buffer) => (errLen = collect(err, errLen, c)));
      child.stdin.on('error', () => undefined); // the tool may exit before reading stdin
      child.on('error', (e) => (spawnError = e));
      let grace: NodeJS.Timeout | undefined;
      const stop = () => {
        if (grace) return;
        signalAll('SIGTERM');
        grace = setTimeout(() => signalAll('SIGKILL'), KILL_GRACE_MS);
        grace.unref();
      };
      const timer = setTimeout(() => {
        timedOut = true;
        stop();
      }, timeoutMs);
      // a cancelled request (its job cancelled, its time run out): the same stop as a timeout
      const forget = cancel?.onStop(stop);
      child.on('close', (code, exitSignal) => {
        clearTimeout(timer);
        forget?.();
        // (once every pipe closed, the group's id may be reused: no late SIGKILL to it)
        clearTimeout(grace);
        const stderr = Buffer.concat(err).toString('utf8');
        resolve({
          code: code ?? (spawnError ? 127 : 128),
          signal: exitSignal ?? null,
          stdout: Buffer.concat(out).toString('utf8'),
          stderr: spawnError ? `${stderr}${spawnError.message}` : stderr,
          timedOut,
          truncated,
          durationMs: Math.round(performance.now() - started),
        });
      });
      if (opts.stdin !== undefined) child.stdin.end(opts.stdin);
      else child.stdin.end();
    });
  }

  async pty(
    argvIn: string[],
    dialogue: PtyStep[],
    opts: Omit<ExecOptions, 'stdin'>,
    cancel?: StopSignal,
  ): Promise<PtyResult> {
    const argv = checkArgv(argvIn, this.o.allowedBinaries);
    const env = commandEnv(this.o, opts.env);
    const timeoutMs = Math.min(opts.timeoutMs ?? this.o.limits.timeoutMs, this.o.limits.timeoutMs * 10);
    const steps = dialogue.map((s) => {
      try {
        return { re: new RegExp(s.expect), send: s.send };
      } catch {
        throw new SystemRefusal('bad_request', `bad expect pattern: ${s.expect}`);
      }
    });
    const full = [...this.o.wrapper, ...argv];
    const pty = await importModule<typeof import('node-pty')>('node-pty');
    const started = performance.now();
    return new Promise((resolve) => {
      const term = pty.spawn(full[0], full.slice(1), { env, cols: 200, rows: 24, name: 'dumb' });
      let output = '';
      let consumedTo = 0;
      let step = 0;
      let timedOut = false;
      const advance = () => {
        while (step < steps.length) {
          const pending = output.slice(consumedTo);
          const m = steps[step].re.exec(pending);
          if (!m) return;
          consumedTo += m.index + m[0].length;
          term.write(`${steps[step].send}\r`);
          step++;
        }
      };
      term.onData((d) => {
        if (output.length < this.o.limits.maxOutputBytes) output += d;
        advance();
      });
      const timer = setTimeout(() => {
        timedOut = true;
        term.kill('SIGKILL');
      }, timeoutMs);
      const forget = cancel?.onStop(() => term.kill('SIGKILL'));
      term.onExit(({ exitCode }) => {
        clearTimeout(timer);
        forget?.();
        // Belt and braces: a tool that leaves echo on must not hand a secret back in the output.
        for (const s of dialogue) if (s.secret && s.send) output = output.split(s.send).join('********');
        resolve({ code: exitCode, output, timedOut, durationMs: Math.round(performance.now() - started) });
      });
    });
  }
}
