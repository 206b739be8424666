/**
 * POST /fs/make_directory `options` ("passed to the copy tool", i.e. install(1)): only what sets
 * the new directory's mode, owner and group. Same format as make_filesystem's options: argv
 * pieces, the option and its value as two elements:
 *
 *     ["-m", "0750", "-o", "backup", "-g", "staff"]      (or --mode / --owner / --group)
 *
 * mode    octal, 3 or 4 digits (`0750`, `2775`); symbolic modes are refused, being a second
 *         grammar to get right for no gain
 * owner   a user name (acl.ts SAFE_NAME) or a numeric uid
 * group   a group name (SAFE_NAME) or a numeric gid
 * Anything else (install's -D, -t, -C, -p, -Z, -b, --backup ...) is refused: they copy files,
 * keep backups or change SELinux contexts, none of which making a directory needs.
 */
import { SAFE_NAME } from './acl';

export type DirectoryOptionsCheck = { ok: true; argv: string[] } | { ok: false; message: string };

interface OptionSpec {
  /** the spelling passed to install */
  canonical: '-m' | '-o' | '-g';
  describe: string;
  test: (v: string) => boolean;
}

const id = /^(0|[1-9]\d{0,9})$/;
const mode: OptionSpec = {
  canonical: '-m',
  describe: 'an octal mode of 3 or 4 digits, e.g. 0750',
  test: (v) => /^[0-7]{3,4}$/.test(v),
};
const owner: OptionSpec = {
  canonical: '-o',
  describe: 'a user name or numeric uid',
  test: (v) => SAFE_NAME.test(v) || id.test(v),
};
const group: OptionSpec = {
  canonical: '-g',
  describe: 'a group name or numeric gid',
  test: (v) => SAFE_NAME.test(v) || id.test(v),
};

const OPTIONS: Readonly<Record<string, OptionSpec>> = {
  '-m': mode,
  '--mode': mode,
  '-o': owner,
  '--owner': owner,
  '-g': group,
  '--group': group,
};

/** Validate; the answer is canonical argv (`-m 0750 -o backup`), whatever spelling was sent. */
export function checkDirectoryOptions(options: readonly unknown[] | undefined): DirectoryOptionsCheck {
  const list = options ?? [];
  const argv: string[] = [];
  const seen = new Set<string>();
  for (let i = 0; i < list.length; i++) {
    const el = list[i];
    if (typeof el !== 'string') return { ok: false, message: `options[${i}] must be a string` };
    const shown = JSON.stringify(el);
    const spec = Object.prototype.hasOwnProperty.call(OPTIONS, el) ? OPTIONS[el] : undefined;
    if (!spec) {
      if (/^(-[mog].|--(mode|owner|group)=)/.test(el)) {
        return {
          ok: false,
          message: `option ${shown}: give the option and its value as two elements, e.g. ["-m", "0750"]`,
        };
      }
      return { ok: false, message: `option ${shown} is not allowed (allowed: -m/--mode, -o/--owner, -g/--group)` };
    }
    if (seen.has(spec.canonical)) return { ok: false, message: `option ${shown} is given twice` };
    seen.add(spec.canonical);
    const value = list[i + 1];
    if (typeof value !== 'string') return { ok: false, message: `option ${shown} needs a value: ${spec.describe}` };
    if (!spec.test(value))
      return {
        ok: false,
        message: `option ${shown}: value ${JSON.stringify(value)} is not valid: expected ${spec.describe}`,
      };
    argv.push(spec.canonical, value);
    i++;
  }
  return { ok: true, argv };
}
