/**
 * Names and file locations of S3 shares. A share `<name>` is the unit `s3-<name>.service` in
 * `paths.s3UnitDir` and the environment file `<name>.env` in `paths.s3EnvDir`; the name reaches
 * argv (systemctl), two file names and the unit text, so it is strict: ASCII letters, digits, `_`
 * and `-`, starting with a letter or digit, at most 64 characters (no `/`, `.`, `..`, NUL, `%`,
 * blanks, leading `-`).
 */
import * as z from 'zod';
import { path, type Vars } from '../core/vars';

export const SHARE_NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/;
export const shareName = z
  .string()
  .regex(SHARE_NAME_PATTERN, 'share name: 1-64 of A-Z a-z 0-9 _ -, starting with a letter or digit')
  .describe('share name: 1-64 of A-Z a-z 0-9 _ -, starting with a letter or digit');

/** `s3-<name>.service` file names in the unit directory that are shares. */
export const UNIT_FILE_PATTERN = /^s3-([A-Za-z0-9][A-Za-z0-9_-]{0,63})\.service$/;

export const UNIT_DIR_KEY = 's3UnitDir';
export const ENV_DIR_KEY = 's3EnvDir';

export const serviceName = (share: string) => `s3-${share}.service`;
export const unitPath = (vars: Vars, share: string) => `${path(vars, UNIT_DIR_KEY)}/${serviceName(share)}`;
export const envPath = (vars: Vars, share: string) => `${path(vars, ENV_DIR_KEY)}/${share}.env`;
/** The previous environment file, kept (0600) while an update is in flight. */
export const envPrevPath = (vars: Vars, share: string) => `${envPath(vars, share)}.prev`;
