/**
 * Every recorded ip/ethtool invocation under fixtures/ against its reviewed expected parse.
 * A fixture whose command failed (code != 0) must make the parser throw a ParseError at the
 * line its expected file names: the route looks at the exit code first, and a parser handed
 * that output by mistake must not invent an empty success.
 */
import { describe, expect, it } from 'vitest';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as z from 'zod';
import { loadFixtureDir } from '../../../runtime/system/fixture-file';
import { ParseError } from '../../../handlers/core/parse-error';
import { ethtoolDriverInfo, ethtoolSettings, ipAddrRecord, ipLinkRecord } from '../../../handlers/network/schemas';
import { parserFor, runParser, type ParserName } from './dispatch';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
const schemaFor: Record<ParserName, z.ZodType> = {
  'ip-link': z.array(ipLinkRecord),
  'ip-addr': z.array(ipAddrRecord),
  ethtool: ethtoolSettings,
  'ethtool-i': ethtoolDriverInfo,
};

for (const tool of ['ip', 'ethtool']) {
  const fixtures = loadFixtureDir(join(root, 'fixtures', tool));
  describe(`fixtures/${tool}`, () => {
    it('has fixtures', () => expect(fixtures.length).toBeGreaterThan(5));
    for (const f of fixtures) {
      const file = f.file ?? '';
      const name = file.slice(file.lastIndexOf('/') + 1);
      it(name, () => {
        expect(f.argv[0]).toMatch(/^\/usr\/sbin\/(ip|ethtool)$/);
        expect(f.source.length).toBeGreaterThan(20);
        const expectedFile = file.replace(/\.yaml$/, '.expected.json');
        expect(existsSync(expectedFile), `${expectedFile} missing`).toBe(true);
        const expected = JSON.parse(readFileSync(expectedFile, 'utf8')) as unknown;
        const parser = parserFor(f);
        if (f.code !== 0) {
          expect(expected).toMatchObject({ throws: 'ParseError' });
          let err: unknown;
          try {
            runParser(parser, f.stdout);
          } catch (e) {
            err = e;
          }
          expect(err).toBeInstanceOf(ParseError);
          expect((err as ParseError).line).toBe((expected as { line: number }).line);
          return;
        }
        const parsed = runParser(parser, f.stdout);
        expect(parsed).toEqual(expected);
        // the parse is also a valid instance of the exported schema
        expect(schemaFor[parser].safeParse(parsed).success).toBe(true);
      });
    }
  });
}
