import { spawn } from 'node:child_process';
import { chmodSync, lstatSync, unlinkSync } from 'node:fs';
import { forwarder, loadUndici } from './forward';
import { framedForwarder } from './forward-framed';
import { BINDING_BODY_LIMIT } from '../bindings/socket';
import type { IsolateOptions, Isolated, IsolateRuntime } from './types';

export function removeStaleSocket(path: string): void {
  try {
    if (lstatSync(path).isSocket()) unlinkSync(path);
    else throw new Error(`${path} exists and is not a socket: refusing to replace it`);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
  }
}

export interface IsolateProcess {
  runtime: IsolateRuntime;
  bin: string;
  args: string[];
  env: Record<string, string>;
  /** The Unix socket the isolate serves on (the host forwards to it). */
  listen: string;
  /** One line written on the child's stdin at start (the secret travels there, never in argv or env). */
  stdinLine?: string;
  /** How the child says it serves: `ready` on stdout (Deno) or a listen event on fd 3 (workerd --control-fd=3). */
  readiness: 'stdout' | 'control-fd';
  /** Run once the child serves (or failed to start): e.g. remove a config file holding the secret. */
  afterStart?: () => void;
  /** How the host's calls reach it: HTTP/1.1 (workerd) or the framed hop (the Deno entry: forward-framed.ts). */
  hop: 'http' | 'framed';
}

/**
 * Spawns an isolate process that serves the hop on a Unix socket, waits until it serves, and
 * supervises it: its output goes to the log, its death while serving is logged and reported
 * (onExit), close() stops it (SIGTERM, SIGKILL after 3 s) and removes its socket.
 */
export async function startIsolateProcess(o: IsolateOptions, p: IsolateProcess): Promise<Isolated> {
  removeStaleSocket(p.listen);
  const started = performance.now();
  // the HTTP hop's client loads while the isolate starts (forwarder() below awaits the same load)
  if (p.hop === 'http') loadUndici().catch(() => undefined);
  const child = spawn(p.bin, p.args, {
    stdio: p.readiness === 'control-fd' ? ['pipe', 'pipe', 'pipe', 'pipe'] : ['pipe', 'pipe', 'pipe'],
    env: p.env,
  });
  let closing = false;
  let stderrTail = '';
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  const logLines = (t: string) => {
    for (const line of t.split('\n')) if (line) o.log(`${p.runtime}: ${line}`);
  };
  child.stderr.setEncoding('utf8');
  child.stderr.on('data', (t: string) => {
    stderrTail = (stderrTail + t).slice(-4000);
    logLines(t);
  });
  child.stdin.on('error', () => undefined);
  if (p.stdinLine !== undefined) child.stdin.write(`${p.stdinLine}\n`);
  try {
    await new Promise<void>((resolve, reject) => {
      let out = '';
      const signal = p.readiness === 'control-fd' ? (child.stdio[3] as NodeJS.ReadableStream) : child.stdout;
      const word = p.readiness === 'control-fd' ? '"event":"listen"' : 'ready\n';
      const onData = (t: Buffer) => {
        out += t.toString('utf8');
        if (!out.includes(word)) return;
        signal.removeListener('data', onData);
        resolve();
      };
      signal.on('data', onData);
      child.once('error', (e) => reject(new Error(`isolate ${p.runtime}: cannot start ${p.bin}: ${e.message}`)));
      void exited.then(({ code, signal: sig }) =>
        reject(
          new Error(`isolate ${p.runtime} exited before serving (${sig ?? `exit ${code}`}): ${stderrTail.trim()}`),
        ),
      );
    });
  } finally {
    p.afterStart?.();
  }
  child.stdout.on('data', (t: Buffer) => logLines(t.toString('utf8')));
  // only the host may talk to the isolate (it alone sets the connection header the app trusts)
  chmodSync(p.listen, 0o600);
  const coldStartMs = performance.now() - started;
  void exited.then(({ code, signal }) => {
    if (closing) return;
    o.log(`isolate ${p.runtime} (pid ${child.pid}) died: ${signal ?? `exit ${code}`}`);
    o.onExit?.(`${p.runtime} ${signal ?? `exit ${code}`}`);
  });
  const fwd =
    p.hop === 'framed'
      ? framedForwarder(p.listen, o.hop, {
          authorised: o.socket.authorised,
          answer: o.socket.answer,
          limit: BINDING_BODY_LIMIT,
        })
      : await forwarder({ socketPath: p.listen }, o.hop);
  return {
    runtime: p.runtime,
    pid: child.pid,
    coldStartMs,
    fetch: fwd.fetch,
    handle: fwd.handle,
    async close() {
      if (closing) return;
      closing = true;
      fwd.close();
      child.stdin.end();
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 3000);
      await exited;
      clearTimeout(timer);
      try {
        unlinkSync(p.listen);
      } catch {
        // the isolate removed it
      }
    },
  };
}
