/**
 * The environment file of one S3 share (pure): root user, root password, path and port, one
 * `NAME="value"` line each. Values are double-quoted with `\`, `"`, `` ` `` and `$` escaped by a
 * backslash: systemd's EnvironmentFile= reader (systemd.exec(5)) and a POSIX shell's `.` both
 * read that back as the exact value. Control characters (line breaks included) and NUL cannot be
 * written safely and are refused.
 */
import type { S3Settings } from '../contract';
import { RenderError } from './unit';

export interface EnvFileInput {
  shareName: string;
  rootUser: string;
  rootPassword: string;
  path: string;
  port: string;
  env: S3Settings['env'];
}

const CONTROL = /[\u0000-\u001f\u007f]/;

export function quoteEnvValue(name: string, v: string): string {
  if (CONTROL.test(v)) throw new RenderError(`${name} contains a control character`);
  return `"${v.replace(/[\\"`$]/g, (c) => `\\${c}`)}"`;
}

export function renderEnvFile(e: EnvFileInput): string {
  return [
    `# S3 share ${e.shareName}, managed by Ballast (mode 0600, root only: holds the root password)`,
    `${e.env.rootUser}=${quoteEnvValue('rootUser', e.rootUser)}`,
    `${e.env.rootPassword}=${quoteEnvValue('rootPassword', e.rootPassword)}`,
    `${e.env.path}=${quoteEnvValue('path', e.path)}`,
    `${e.env.port}=${quoteEnvValue('port', e.port)}`,
    '',
  ].join('\n');
}
