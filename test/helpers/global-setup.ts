import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * One parent directory for every private temp dir of this test run (test/helpers/tmp.ts), removed
 * at the end of the run: workers may be stopped without running their exit hooks.
 */
export default function setup(): () => void {
  const dir = mkdtempSync(join(tmpdir(), 'ballast-run-'));
  process.env.BALLAST_TEST_TMP = dir;
  return () => rmSync(dir, { recursive: true, force: true });
}
