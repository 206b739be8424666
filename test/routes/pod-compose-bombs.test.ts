/**
 * Compose admission against inputs built to cost the host: absurd nesting and an alias bomb.
 * Apart from pod-compose-check.test.ts because parsing them takes seconds, and the mutation runs
 * (test/mutation/modules.mjs) would pay that for every mutant of the admission path.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { podSettings } from '../../handlers/pod/contract';
import { checkCompose } from '../../runtime/areas/pod/compose-check';
import { privateDir } from '../helpers/tmp';

let podData: string;
beforeAll(() => {
  podData = join(privateDir('pod-bombs'), 'srv/pods');
  mkdirSync(join(podData, 'ballast-pod-a'), { recursive: true });
});

const check = async (fileContents: string) => {
  const r = await checkCompose(
    { project: 'ballast-pod-a', fileContents, requireVersion: true },
    {
      settings: podSettings.parse({}),
      podData,
      podFiles: join(podData, '../../var/lib/ballast/pods'),
      listeners: async () => new Set<string>(),
      engine: null,
    },
  );
  return r.ok ? [] : r.issues;
};

describe('inputs built to cost the host are refused as the caller’s bad YAML', () => {
  it('200,000 nested flow sequences', async () => {
    expect(await check(`${'['.repeat(200_000)}${']'.repeat(200_000)}`)).toEqual([
      { path: 'fileContents', message: expect.stringMatching(/^not (valid|usable) YAML/) },
    ]);
  });

  it('an alias bomb (10^9 nodes from nine lines) stops at the alias count', async () => {
    const bomb = [
      'a: &a ["x","x","x","x","x","x","x","x","x","x"]',
      ...Array.from(
        { length: 8 },
        (_, i) =>
          `${String.fromCharCode(98 + i)}: &${String.fromCharCode(98 + i)} [${Array(10)
            .fill(`*${String.fromCharCode(97 + i)}`)
            .join(',')}]`,
      ),
    ].join('\n');
    expect(await check(bomb)).toEqual([
      { path: 'fileContents', message: expect.stringMatching(/^not usable YAML: .*alias/i) },
    ]);
  });
});
