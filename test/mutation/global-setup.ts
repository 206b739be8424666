import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** The suite's one parent of private temp dirs (test/helpers/global-setup.ts), without the build. */
export default function setup(): () => void {
  const dir = mkdtempSync(join(tmpdir(), 'ballast-mutate-'));
  process.env.BALLAST_TEST_TMP = dir;
  return () => rmSync(dir, { recursive: true, force: true });
}
