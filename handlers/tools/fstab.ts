/**
 * /etc/fstab (fstab(5), util-linux), for every area that reads or writes it: `spec file vfstype
 * mntops [freq [passno]]`, blank and `#` lines skipped, a trailing `# comment` after the fields
 * allowed, `\040` `\011` `\\` octal escapes decoded (parseFstab); a field written back is
 * escaped the same way (encodeFstab). Fields 5 and 6 are optional (0).
 */
import { ParseError } from '../core/parse-error';

export interface FstabEntry {
  fs_spec: string;
  fs_file: string;
  fs_vfstype: string;
  fs_mntops: string[];
  fs_freq: number;
  fs_passno: number;
  /** 0-based line index in the file */
  line: number;
}

export const decodeFstab = (s: string) =>
  s.replace(/\\([0-7]{3})/g, (_, o: string) => String.fromCharCode(parseInt(o, 8))).replace(/\\\\/g, '\\');
export const encodeFstab = (s: string) =>
  s.replace(/\\/g, '\\134').replace(/ /g, '\\040').replace(/\t/g, '\\011').replace(/\n/g, '\\012');

export function parseFstab(text: string): FstabEntry[] {
  const out: FstabEntry[] = [];
  text.split('\n').forEach((raw, i) => {
    const hash = raw.search(/(^|\s)#/);
    const l = (hash >= 0 ? raw.slice(0, hash) : raw).trim();
    if (l === '') return;
    const f = l.split(/\s+/);
    if (f.length < 4) throw new ParseError('fstab', 'expected at least spec, file, type and options', i + 1);
    const num = (v: string | undefined, what: string) => {
      if (v === undefined) return 0;
      if (!/^\d+$/.test(v)) throw new ParseError('fstab', `${what} is not a number`, i + 1);
      return Number(v);
    };
    out.push({
      fs_spec: decodeFstab(f[0]),
      fs_file: decodeFstab(f[1]),
      fs_vfstype: f[2],
      fs_mntops: f[3].split(','),
      fs_freq: num(f[4], 'fs_freq'),
      fs_passno: num(f[5], 'fs_passno'),
      line: i,
    });
  });
  return out;
}
