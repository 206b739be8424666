/**
 * The model the container engine will run: the compose tool's own `config` of the candidate file.
 * Compose interpolates, merges and coerces types before it acts on a file, so the admission policy
 * is evaluated on this output as well as on the file (what was checked is what runs).
 *
 * The file goes in on stdin (`-f -`), so no candidate is ever written where a container could
 * reach it; `--project-directory` is the pod's files directory (root's, never bind-mountable), so
 * no `.env` a container wrote is read. Relative host paths were made absolute before this runs.
 */
import { parse } from 'yaml';
import { flavourOf, type PodSettings } from '../../../../handlers/pod/contract';

export interface EngineExecResult {
  code: number | null;
  stdout: string;
  stderr: string;
  timedOut?: boolean;
}
/** Runs one argv with stdin (the host's SYSTEM exec, or a live runner in the CLI and tests). */
export type EngineExec = (
  argv: string[],
  opts: { stdin: string; timeoutMs: number; env?: Record<string, string> },
) => Promise<EngineExecResult>;

/** The engine's model of a candidate, or why the engine refused it (its last error line). */
export type EngineModel = { ok: true; model: Record<string, unknown> } | { ok: false; message: string };

/** Resolves a candidate compose document (JSON text) to the engine's model. */
export type EngineRunner = (candidate: { project: string; projectDir: string; json: string }) => Promise<EngineModel>;

export function engineConfigArgv(s: PodSettings, project: string, projectDir: string): string[] {
  const head = [...s.composeCommand, '-p', project, '--project-directory', projectDir, '-f', '-', 'config'];
  // compose v2 prints YAML unless asked; 1.x has no --format and prints YAML; both parse below
  return flavourOf(s) === 'compose-v2' ? [...head, '--format', 'json'] : head;
}

/** The last line of what a tool printed that says something (Python tracebacks end with the cause). */
export function lastErrorLine(text: string): string {
  const lines = text
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '');
  return (lines[lines.length - 1] ?? '').slice(0, 500);
}

export function engineRunner(s: PodSettings, exec: EngineExec): EngineRunner {
  return async ({ project, projectDir, json }) => {
    const argv = engineConfigArgv(s, project, projectDir);
    const r = await exec(argv, {
      stdin: json,
      timeoutMs: Math.min(s.composeTimeoutMs, 60_000),
      ...(Object.keys(s.env).length ? { env: s.env } : {}),
    });
    if (r.timedOut) return { ok: false, message: `${argv.slice(0, -1).join(' ')} config timed out` };
    if (r.code !== 0)
      return {
        ok: false,
        message: `the compose tool refused the file: ${lastErrorLine(r.stderr) || lastErrorLine(r.stdout) || `exit ${String(r.code)}`}`,
      };
    let model: unknown;
    try {
      // JSON is YAML; the 1.x output is YAML with its own anchors never used
      model = parse(r.stdout, { maxAliasCount: 100 });
    } catch (e) {
      return {
        ok: false,
        message: `the compose tool printed a model that is not YAML/JSON: ${(e as Error).message.split('\n')[0]}`,
      };
    }
    if (typeof model !== 'object' || model === null || Array.isArray(model))
      return { ok: false, message: 'the compose tool printed no model (not a mapping)' };
    return { ok: true, model: model as Record<string, unknown> };
  };
}
