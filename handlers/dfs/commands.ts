/**
 * How the dfs routes run their tools: absolute binaries, argv arrays, a time limit per command
 * from `settings.dfs.timeouts`, and the mapping of failures (502 with command/exit/stderr, 504
 * with what the command printed before it was stopped, lnetctl's YAML errno → status).
 */
import { ApiError } from '../core/errors';
import { areaSettings } from '../core/settings';
import type { ExecResult, SystemClient } from '../core/system';
import { commandFailed } from '../core/system';
import { bin, path, type Vars } from '../core/vars';
import { encodeFstab, parseFstab } from '../tools/fstab';
import { DFS_PATHS, dfsSettings, type DfsSettings } from './contract';
import { parseLctlDl, type DlLine } from './parse/lctl-dl';
import { lnetBlocks, lnetErrors, type LnetError } from './parse/lnetctl';
import { parseLustreMounts, type LustreMount } from './parse/mount';

export type TimeoutKey = keyof DfsSettings['timeouts'];

const tool = (argv: string[]) => argv[0].slice(argv[0].lastIndexOf('/') + 1);

/** 504 naming the command and its limit; `warnings` holds what it printed before it was stopped. */
export function timedOut(
  argv: string[],
  r: ExecResult,
  limitMs: number,
  extra: Record<string, unknown> = {},
): ApiError {
  const collected = [r.stdout, r.stderr].filter((s) => s.trim() !== '').join('\n');
  return new ApiError('command_timeout', `${tool(argv)} did not finish within ${limitMs} ms`, {
    details: { command: argv, timeoutMs: limitMs, warnings: collected, ...extra },
  });
}

/** exec with the area's limit; a time-out is a 504 (never a partial 200). */
export async function exec(system: SystemClient, vars: Vars, argv: string[], limit: TimeoutKey): Promise<ExecResult> {
  const timeoutMs = areaSettings(vars, 'dfs', dfsSettings).timeouts[limit];
  const r = await system.exec(argv, { timeoutMs });
  if (r.timedOut) throw timedOut(argv, r, timeoutMs);
  return r;
}

/** exec, and a non-zero exit is a 502 `command_failed`. */
export async function run(system: SystemClient, vars: Vars, argv: string[], limit: TimeoutKey): Promise<ExecResult> {
  const r = await exec(system, vars, argv, limit);
  if (r.code !== 0) throw commandFailed(argv, r);
  return r;
}

export const lctl = (vars: Vars, ...args: string[]) => [bin(vars, 'lctl'), ...args];
export const lnetctl = (vars: Vars, ...args: string[]) => [bin(vars, 'lnetctl'), ...args];

/** `lctl dl [-t]`. */
export async function devices(
  system: SystemClient,
  vars: Vars,
  withNids = false,
): Promise<{ raw: string; stderr: string; lines: DlLine[] }> {
  const r = await run(system, vars, withNids ? lctl(vars, 'dl', '-t') : lctl(vars, 'dl'), 'lctlMs');
  return { raw: r.stdout, stderr: r.stderr, lines: parseLctlDl(r.stdout) };
}

/** `mount -t lustre`: the Lustre mounts of this node (clients and targets). */
export async function lustreMounts(system: SystemClient, vars: Vars): Promise<LustreMount[]> {
  const r = await run(system, vars, [bin(vars, 'mount'), '-t', 'lustre'], 'lctlMs');
  return parseLustreMounts(r.stdout);
}

/** lnetctl's YAML errors (stdout or stderr), e.g. `add: - net: errno: -17 descr: …`. */
export function lnetctlErrors(r: ExecResult): LnetError[] {
  for (const text of [r.stderr, r.stdout]) {
    try {
      const errs = lnetErrors(lnetBlocks(text));
      if (errs.length) return errs;
    } catch {
      // not YAML: plain text error, handled by the caller
    }
  }
  return [];
}

const ERRNO_STATUS: Record<number, 'conflict' | 'not_found' | 'bad_request'> = {
  [-17]: 'conflict', // EEXIST: the network/NI is already configured
  [-100]: 'conflict', // ENETDOWN: LNet is not configured (GET /dfs/lnet/prepare)
  [-2]: 'not_found', // ENOENT: no such network/NI
  [-19]: 'not_found', // ENODEV: no such interface
  [-22]: 'bad_request', // EINVAL
};

/** An lnetctl failure: its errno decides the status (409/404/400), else 502 with the command. */
export function lnetctlFailure(argv: string[], r: ExecResult, what: string): ApiError {
  const errs = lnetctlErrors(r);
  const e = errs[0];
  if (e) {
    const code = ERRNO_STATUS[e.errno];
    const hint = e.errno === -100 ? ' (LNet is down: GET /dfs/lnet/prepare configures it)' : '';
    if (code) return new ApiError(code, `${what}: ${e.descr}${hint}`, { details: { command: argv, errno: e.errno } });
    return commandFailed(argv, r, `${what}: ${e.descr} (errno ${e.errno})`);
  }
  return commandFailed(argv, r);
}

/** Run an lnetctl command; failures mapped by lnetctlFailure. */
export async function runLnetctl(system: SystemClient, vars: Vars, args: string[], what: string): Promise<ExecResult> {
  const argv = lnetctl(vars, ...args);
  const r = await exec(system, vars, argv, 'lnetctlMs');
  if (r.code !== 0) throw lnetctlFailure(argv, r, what);
  // some lnetctl releases exit 0 after printing an error block (`show: - net: errno: …`) on stdout
  if (lnetctlErrors({ ...r, stderr: '' }).length) throw lnetctlFailure(argv, { ...r, stderr: '' }, what);
  return r;
}

export const dfsPath = (vars: Vars, key: keyof typeof DFS_PATHS) => path(vars, DFS_PATHS[key]);

/**
 * Adds `<spec> <dir> lustre <opts> 0 0` to fstab (atomic write, previous version kept), its fields
 * escaped as fstab(5) wants (`\040`…). An identical entry already there is left alone; another
 * entry for the same mount point is a 409 (this route does not silently replace someone's entry).
 * An fstab this node cannot read (a line without spec, file, type and options) is a 502 and is
 * not written. Returns whether the file changed.
 */
export async function persistMount(system: SystemClient, vars: Vars, spec: string, dir: string): Promise<boolean> {
  const fstab = dfsPath(vars, 'fstab');
  const current = (await system.readFile(fstab)) ?? '';
  const lines = current.split('\n');
  for (const e of parseFstab(current)) {
    if (e.fs_file !== dir) continue;
    if (e.fs_spec === spec && e.fs_vfstype === 'lustre') return false;
    throw new ApiError('conflict', `${fstab} already mounts ${e.fs_spec} on ${dir}`, {
      details: { line: lines[e.line].trim() },
    });
  }
  const entry = `${encodeFstab(spec)} ${encodeFstab(dir)} lustre ${areaSettings(vars, 'dfs', dfsSettings).fstabOptions} 0 0\n`;
  const next = current === '' || current.endsWith('\n') ? current + entry : `${current}\n${entry}`;
  await system.writeFile(fstab, next, { backup: true, mode: 0o644 });
  return true;
}

/**
 * `install -d -m 0755 -- <dir>`: the mount point (idempotent). `dir` is `<configured root>/<strict
 * name>`; the host resolves it first (symlinks followed) and refuses one that leaves the configured
 * roots (403), so a link planted there cannot point the mount at /etc. Anything there that is not
 * a directory is a 409.
 */
export async function makeMountPoint(system: SystemClient, vars: Vars, dir: string): Promise<void> {
  const st = await system.stat(dir);
  if (st && st.type !== 'dir') throw new ApiError('conflict', `${dir} exists and is not a directory`);
  await run(system, vars, [bin(vars, 'install'), '-d', '-m', '0755', '--', dir], 'lctlMs');
}
