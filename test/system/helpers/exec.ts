import { execFile } from 'node:child_process';

/** Running real tools from system tests: argv only, never a shell; LC_ALL=C always. */
export interface ExecResult {
  argv: string[];
  code: number;
  stdout: string;
  stderr: string;
}

export interface ExecOptions {
  /** extra environment; LC_ALL=C is always set */
  env?: Record<string, string>;
  timeoutMs?: number;
  /** run in this directory */
  cwd?: string;
}

/** Run argv (no shell); resolves with the exit code instead of throwing. */
export function exec(argv: readonly string[], opts: ExecOptions = {}): Promise<ExecResult> {
  const [file, ...args] = argv;
  return new Promise((resolve, reject) => {
    execFile(
      file,
      args,
      {
        env: { PATH: '/usr/sbin:/usr/bin:/sbin:/bin', ...opts.env, LC_ALL: 'C' },
        cwd: opts.cwd,
        timeout: opts.timeoutMs ?? 60_000,
        maxBuffer: 64 * 1024 * 1024,
        encoding: 'utf8',
      },
      (err, stdout, stderr) => {
        if (err && typeof err.code !== 'number') {
          // spawn failure or timeout (code is a string such as ENOENT, or null when killed)
          reject(new Error(`${argv.join(' ')}: ${err.message}`));
          return;
        }
        resolve({ argv: [...argv], code: err ? (err.code as number) : 0, stdout, stderr });
      },
    );
  });
}

/** Like exec, but rejects naming argv, exit code and stderr unless the exit code is 0. */
export async function run(argv: readonly string[], opts: ExecOptions = {}): Promise<ExecResult> {
  const r = await exec(argv, opts);
  if (r.code !== 0) {
    throw new Error(`${JSON.stringify(argv)} exited ${r.code}: ${r.stderr.trim() || r.stdout.trim()}`);
  }
  return r;
}
