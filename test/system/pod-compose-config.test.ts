/**
 * System tier: our verdict on the compose files of fixtures/compose-files matches the real
 * docker-compose 1.29 (`config -q`, no engine needed) for what the Compose Specification decides;
 * where we are stricter (duplicate keys, the appliance limits), the difference is asserted.
 */
import { copyFileSync, existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { podSettings } from '../../handlers/pod/contract';
import { checkCompose } from '../../runtime/areas/pod/compose-check';
import { repo } from '../helpers/host';
import { privateDir } from '../helpers/tmp';
import { exec } from './helpers/exec';

const SRC = join(repo, 'fixtures/compose-files');

describe('compose files: our validation against docker-compose config', () => {
  it('agrees on the schema, and is stricter where it says so', async () => {
    if (!existsSync('/usr/bin/docker-compose'))
      throw new Error('needs /usr/bin/docker-compose (apt-get install docker-compose)');
    const dir = privateDir('pod-compose-config');
    writeFileSync(join(dir, 'db.env'), 'POSTGRES_PASSWORD=x\n');
    const verdicts: Record<string, [boolean, boolean]> = {};
    for (const f of readdirSync(SRC)
      .filter((n) => n.endsWith('.yaml'))
      .sort()) {
      copyFileSync(join(SRC, f), join(dir, f));
      const tool = await exec(['/usr/bin/docker-compose', '-f', join(dir, f), 'config', '-q'], { cwd: dir });
      const ours = await checkCompose(
        { project: 'ballast-pod-a', fileContents: readFileSync(join(SRC, f), 'utf8'), requireVersion: true },
        {
          settings: podSettings.parse({ checkHostPorts: false }),
          podData: dir,
          podFiles: join(dir, 'files'),
          listeners: async () => new Set(),
          engine: null,
        },
      );
      verdicts[f] = [tool.code === 0, ours.ok];
    }
    expect(verdicts).toEqual({
      'duplicate-key.yaml': [true, false], // PyYAML keeps the last key; we refuse the ambiguity
      'invalid-ports-type.yaml': [false, false],
      'invalid-schema.yaml': [false, false],
      'refused-options.yaml': [true, false], // valid compose, refused by the appliance limits
      'refused-paths.yaml': [false, false], // compose 1.x also rejects the top-level include
      'valid-anchors.yaml': [true, true],
      'valid-web-db.yaml': [true, true],
    });
  }, 120_000); // seven docker-compose (Python) starts: 30 s was too short on a loaded box
});
