import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { startIsolateProcess } from './process';
import type { IsolateOptions, Isolated } from './types';

/** The pinned Deno (package.json devDependencies). */
export const DENO_VERSION = '2.9.6';

/**
 * The Deno binary of the `deno` npm package, found as Node finds the package from here (so an
 * embedder's own `npm i deno@<version>` serves an installed ballast, as workerd's package does),
 * or the checkout's; it must be the pinned version. The package's postinstall puts the binary
 * beside its package.json (`deno/deno`); its optional platform package holds it too.
 */
export function denoBinary(
  distDir: string,
  from: string[] = [import.meta.url, join(dirname(distDir), 'package.json')],
): string {
  const install = `npm i deno@${DENO_VERSION}`;
  let pkgFile: string | undefined;
  for (const base of from) {
    try {
      pkgFile = createRequire(base).resolve('deno/package.json');
      break;
    } catch {
      // not installed where this base looks
    }
  }
  if (!pkgFile)
    throw new Error(`isolate deno: the deno package is not installed; install the pinned Deno with: ${install}`);
  const { version } = JSON.parse(readFileSync(pkgFile, 'utf8')) as { version?: string };
  if (version !== DENO_VERSION)
    throw new Error(
      `isolate deno: ${pkgFile} is deno ${version ?? '?'}, not the pinned ${DENO_VERSION}; install it with: ${install}`,
    );
  const pkgDir = dirname(pkgFile);
  const candidates = [join(pkgDir, 'deno')];
  try {
    candidates.push(join(dirname(createRequire(pkgFile).resolve('@deno/linux-x64-glibc/package.json')), 'deno'));
  } catch {
    // another platform, or its optional package absent: the postinstall's copy is the one
  }
  const bin = candidates.find((c) => existsSync(c));
  if (!bin)
    throw new Error(
      `isolate deno: ${pkgDir} has no deno binary (its install script did not run?); reinstall with: ${install} (scripts allowed)`,
    );
  return bin;
}

/**
 * The permissions the Deno process gets, and nothing else: read the bundle directory (and its
 * socket, which Deno checks as a path), write (listen on) its socket, net only to that Unix
 * socket. Its binding calls go back on the host's hop connection, so it cannot reach the binding
 * socket at all. No --allow-run, --allow-env, --allow-ffi, --allow-sys; no prompt.
 */
export function denoArgs(distDir: string, listen: string): string[] {
  return [
    'run',
    '--no-prompt',
    '--no-config',
    '--no-lock',
    '--no-remote',
    '--no-npm',
    `--allow-read=${distDir},${listen}`,
    `--allow-write=${listen}`,
    `--allow-net=unix:${listen}`,
    join(distDir, 'deno.mjs'),
  ];
}

/**
 * Isolation mode on Deno: dist/app.mjs served by `deno run dist/deno.mjs` on a Unix socket in the
 * state directory; the host forwards every request to it over the framed hop
 * (runtime/isolate/forward-framed.ts, deno-hop.ts), and its binding calls come back on it.
 */
export function startDeno(o: IsolateOptions): Promise<Isolated> {
  const listen = join(o.stateDir, 'isolate-deno.sock');
  return startIsolateProcess(o, {
    runtime: 'deno',
    bin: denoBinary(o.distDir),
    args: denoArgs(o.distDir, listen),
    // no inherited environment (no secrets): Deno's own cache in the state directory
    env: { DENO_DIR: join(o.stateDir, 'deno-cache'), NO_COLOR: '1', DENO_NO_UPDATE_CHECK: '1' },
    listen,
    stdinLine: JSON.stringify({
      secret: o.socket.secret,
      hopSecret: o.hop.secret,
      listen,
      vars: o.vars,
    }),
    readiness: 'stdout',
    hop: 'framed',
  });
}
