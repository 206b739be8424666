import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { startIsolateProcess } from './process';
import type { IsolateOptions, Isolated } from './types';

/** The pinned Deno (package.json devDependencies). */
export const DENO_VERSION = '2.9.6';

export function denoBinary(distDir: string): string {
  const bin = join(dirname(distDir), 'node_modules', '.bin', 'deno');
  if (!existsSync(bin))
    throw new Error(`isolate deno: ${bin} is missing; install the pinned Deno with: npm i deno@${DENO_VERSION}`);
  return bin;
}

/**
 * The permissions the Deno process gets, and nothing else: read the bundle directory (and the
 * two sockets, which Deno checks as paths), write (connect/listen) the two sockets, net only to
 * those two Unix sockets. No --allow-run, --allow-env, --allow-ffi, --allow-sys; no prompt.
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
    `--allow-net=unix:${bindingSocket},unix:${listen}`,
    join(distDir, 'deno.mjs'),
  ];
}

/**
 * Isolation mode on Deno: dist/app.mjs served by `deno run dist/deno.mjs` on a Unix socket in the
 * state directory; the host forwards every request to it (runtime/isolate/forward.ts).
 */
export function startDeno(o: IsolateOptions): Promise<Isolated> {
  const listen = join(o.stateDir, 'isolate-deno.sock');
  return startIsolateProcess(o, {
    runtime: 'deno',
    bin: denoBinary(o.distDir),
    args: denoArgs(o.distDir, o.socket.path, listen),
    // no inherited environment (no secrets): Deno's own cache in the state directory
    env: { DENO_DIR: join(o.stateDir, 'deno-cache'), NO_COLOR: '1', DENO_NO_UPDATE_CHECK: '1' },
    listen,
    stdinLine: JSON.stringify({ bindingSocket: o.socket.path, secret: o.socket.secret, listen, vars: o.vars }),
    readiness: 'stdout',
  });
}
