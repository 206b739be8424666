import { spawn } from 'node:child_process';
import { chmodSync, existsSync, lstatSync, unlinkSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { forwarder } from './forward';
import type { IsolateOptions, Isolated } from './types';

/** The pinned Deno (package.json devDependencies). */
export const DENO_VERSION = '2.9.6';

export function denoBinary(distDir: string): string {
  const bin = join(dirname(distDir), 'node_modules', '.bin', 'deno');
  if (!existsSync(bin))
    throw new Error(`isolate deno: ${bin} is missing; install the pinned Deno with: npm i deno@${DENO_VERSION}`);
  return bin;
}

function removeStaleSocket(path: string): void {
  try {
    if (lstatSync(path).isSocket()) unlinkSync(path);
    else throw new Error(`${path} exists and is not a socket: refusing to replace it`);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
  }
}

/**
 * The permissions the Deno process gets, and nothing else: read the bundle directory (and the
 * two sockets, which Deno checks as paths), write (connect/listen) the two sockets, net only to
 * the binding socket and the internal binding origin (never resolved: the client proxies it to
 * the socket). No --allow-run, --allow-env, --allow-ffi, --allow-sys; no prompt.
 */
export function denoArgs(distDir: string, bindingSocket: string, listen: string): string[] {
  return [
    'run',
    '--no-prompt',
    '--no-config',
    '--no-lock',
    '--no-remote',
    '--no-npm',
    `--allow-read=${distDir},${bindingSocket},${listen}`,
    `--allow-write=${bindingSocket},${listen}`,
    `--allow-net=unix:${bindingSocket},unix:${listen},binding.internal:80`,
    join(distDir, 'deno.mjs'),
  ];
}

/**
 * Isolation mode on Deno: dist/app.mjs served by `deno run dist/deno.mjs` on a Unix socket in the
 * state directory; the host forwards every request to it (runtime/isolate/forward.ts).
 */
export async function startDeno(o: IsolateOptions): Promise<Isolated> {
  const bin = denoBinary(o.distDir);
  const listen = join(o.stateDir, 'isolate-deno.sock');
  removeStaleSocket(listen);
  const started = performance.now();
  const child = spawn(bin, denoArgs(o.distDir, o.socket.path, listen), {
    stdio: ['pipe', 'pipe', 'pipe'],
    // no inherited environment (no secrets): Deno's own cache in the state directory
    env: { DENO_DIR: join(o.stateDir, 'deno-cache'), NO_COLOR: '1', DENO_NO_UPDATE_CHECK: '1' },
  });
  let closing = false;
  let stderrTail = '';
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  child.stderr.setEncoding('utf8');
  child.stderr.on('data', (t: string) => {
    stderrTail = (stderrTail + t).slice(-4000);
    for (const line of t.split('\n')) if (line) o.log(`deno: ${line}`);
  });
  child.stdin.on('error', () => undefined);
  // the secret travels on stdin, never on the command line or in the environment
  child.stdin.write(
    `${JSON.stringify({ bindingSocket: o.socket.path, secret: o.socket.secret, listen, vars: o.vars })}\n`,
  );
  await new Promise<void>((resolve, reject) => {
    let out = '';
    const onData = (t: Buffer) => {
      out += t.toString('utf8');
      if (out.includes('ready\n')) {
        child.stdout.off('data', onData);
        child.stdout.on('data', (more: Buffer) => {
          for (const line of more.toString('utf8').split('\n')) if (line) o.log(`deno: ${line}`);
        });
        resolve();
      }
    };
    child.stdout.on('data', onData);
    child.once('error', (e) => reject(new Error(`isolate deno: cannot start ${bin}: ${e.message}`)));
    void exited.then(({ code, signal }) =>
      reject(new Error(`isolate deno exited before serving (${signal ?? `exit ${code}`}): ${stderrTail.trim()}`)),
    );
  });
  // only the host may talk to the isolate (it alone sets the connection header the app trusts)
  chmodSync(listen, 0o600);
  const coldStartMs = performance.now() - started;
  void exited.then(({ code, signal }) => {
    if (closing) return;
    o.log(`isolate deno (pid ${child.pid}) died: ${signal ?? `exit ${code}`}`);
    o.onExit?.(`deno ${signal ?? `exit ${code}`}`);
  });
  const fwd = forwarder({ socketPath: listen });
  return {
    runtime: 'deno',
    pid: child.pid,
    coldStartMs,
    fetch: fwd.fetch,
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
        unlinkSync(listen);
      } catch {
        // Deno removed it
      }
    },
  };
}
