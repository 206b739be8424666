/**
 * POST /fs/xxhash and /fs/xxhash_verify `options` ("array of checksum-tool options"): the
 * xxhsum flags a client may add, one flag per element (none of them takes a separate value),
 * e.g. `["-H2", "--tag"]` or `["--strict", "--warn"]`.
 *
 * Generate: algorithm (`-H0..-H3`, `-H32/-H64/-H128`), `--tag` (BSD lines), `--little-endian`.
 * Verify:  `-q`/`--quiet` (hide OK lines), `--status` (no output), `--strict` (improper lines
 *          fail), `--warn` (name improper lines on stderr), `--little-endian`.
 * The route itself adds `-c` and `--`. Refused: benchmark (`-b`, `-i#`), `-V`/`-h`, and the
 * 0.8.2+ `--files-from`/`--filelist`, which would make xxhsum read its list of files from a
 * file instead of the validated request.
 *
 * Parser notes for the route: `--little-endian` without `--tag` is indistinguishable from the
 * default in GNU output (parseXxhsumSums reports XXH64); with `-q`/`--status` the check output
 * has fewer (or no) lines, so `verified` must come from the exit code plus the counts.
 */
export const XXHSUM_GENERATE_OPTIONS: readonly string[] = [
  '-H0',
  '-H1',
  '-H2',
  '-H3',
  '-H32',
  '-H64',
  '-H128',
  '--tag',
  '--little-endian',
];
export const XXHSUM_VERIFY_OPTIONS: readonly string[] = [
  '-q',
  '--quiet',
  '--status',
  '--strict',
  '--warn',
  '--little-endian',
];

const ALGORITHM = /^-H/;

export type XxhsumOptionsCheck = { ok: true; argv: string[] } | { ok: false; message: string };

export function checkXxhsumOptions(
  mode: 'generate' | 'verify',
  options: readonly unknown[] | undefined,
): XxhsumOptionsCheck {
  const allowed = mode === 'generate' ? XXHSUM_GENERATE_OPTIONS : XXHSUM_VERIFY_OPTIONS;
  const list = options ?? [];
  if (list.length > allowed.length) return { ok: false, message: `at most ${allowed.length} options are accepted` };
  const argv: string[] = [];
  for (let i = 0; i < list.length; i++) {
    const o = list[i];
    if (typeof o !== 'string') return { ok: false, message: `options[${i}] must be a string` };
    if (!allowed.includes(o)) {
      return {
        ok: false,
        message: `option ${JSON.stringify(o)} is not allowed for ${mode} (allowed: ${allowed.join(' ')})`,
      };
    }
    if (argv.includes(o)) return { ok: false, message: `option ${JSON.stringify(o)} is given twice` };
    // two algorithms would silently mean "the last one"; say so instead
    if (ALGORITHM.test(o) && argv.some((a) => ALGORITHM.test(a))) {
      return { ok: false, message: `option ${JSON.stringify(o)}: only one algorithm (-H) may be given` };
    }
    argv.push(o);
  }
  return { ok: true, argv };
}
