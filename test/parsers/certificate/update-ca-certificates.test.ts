import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseUpdateCaCertificates } from '../../../handlers/certificate/parse/update-ca-certificates';
import { loadFixtureDir } from '../../../runtime/system/fixture-file';
import { parseError } from '../../helpers/parse-error';
import { runFixtureTable } from '../../helpers/fixture-runner';
import { CERTIFICATE_FIXTURES } from '../fixture-tables';

const repo = resolve(import.meta.dirname, '../../..');
const fixtures = loadFixtureDir(join(repo, 'fixtures/update-ca-certificates'));

runFixtureTable(CERTIFICATE_FIXTURES);

describe('update-ca-certificates output', () => {
  it('has the upstream captures and the composed hook failure', () => {
    expect(fixtures.map((f) => (f.file ?? '').split('/').pop())).toEqual([
      'composed-hook-failure.yaml',
      'upstream-first-run.yaml',
      'upstream-fresh.yaml',
      'upstream-no-change.yaml',
    ]);
  });

  it('garbage, truncated output and a doubled summary are ParseErrors', () => {
    const full = fixtures[1].stdout;
    const bad = [
      '',
      'hello\n',
      full.split('\n').slice(0, 1).join('\n'), // cut before the summary
      full.replace('2 added, 0 removed; done.', '2 added; done.'),
      '2 added, 0 removed; done.\n', // no "Updating certificates" line
      `${full}2 added, 0 removed; done.\n`,
    ];
    for (const text of bad)
      expect(
        parseError(() => parseUpdateCaCertificates(text), { parser: 'update-ca-certificates' }).parser,
        JSON.stringify(text),
      ).toBe('update-ca-certificates');
  });
});
