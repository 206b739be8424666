/**
 * `getent passwd -- NAME` and `getent group -- NAME` (glibc, Debian 12): one colon-separated
 * database line each, exit 2 when the name is unknown (the caller maps that to 404). Pure.
 */
import { ParseError } from '../../core/parse-error';

export interface PasswdEntry {
  name: string;
  uid: number;
  gid: number;
  home: string;
  shell: string;
}

export interface GroupEntry {
  name: string;
  gid: number;
  members: string[];
}

function oneLine(parser: string, stdout: string): string {
  const lines = stdout.split('\n').filter((l) => l !== '');
  if (lines.length !== 1) throw new ParseError(parser, `expected one line, got ${lines.length}`);
  return lines[0];
}

function id(parser: string, s: string, what: string): number {
  if (!/^\d{1,10}$/.test(s) || Number(s) > 0xfffffffe)
    throw new ParseError(parser, `${what} ${JSON.stringify(s)} is not a number`, 1);
  return Number(s);
}

export function parsePasswd(stdout: string): PasswdEntry {
  const P = 'getent passwd';
  const f = oneLine(P, stdout).split(':');
  if (f.length !== 7) throw new ParseError(P, `expected 7 fields, got ${f.length}`, 1);
  const [name, , uid, gid, , home, shell] = f;
  if (name === '') throw new ParseError(P, 'empty user name', 1);
  if (!home.startsWith('/')) throw new ParseError(P, `home ${JSON.stringify(home)} is not an absolute path`, 1);
  return { name, uid: id(P, uid, 'uid'), gid: id(P, gid, 'gid'), home, shell };
}

export function parseGroup(stdout: string): GroupEntry {
  const P = 'getent group';
  const f = oneLine(P, stdout).split(':');
  if (f.length !== 4) throw new ParseError(P, `expected 4 fields, got ${f.length}`, 1);
  const [name, , gid, members] = f;
  if (name === '') throw new ParseError(P, 'empty group name', 1);
  return { name, gid: id(P, gid, 'gid'), members: members === '' ? [] : members.split(',') };
}
