/**
 * The lint rules that guard the architecture fire: Node globals in route code, `.ts` relative
 * imports, `any`. (`npm test` runs the linter over the whole tree; this proves the rules bite.)
 */
import { ESLint } from 'eslint';
import { describe, expect, it } from 'vitest';
import { repo } from '../helpers/host';

const eslint = new ESLint({ cwd: repo });
const lint = async (file: string, text: string) =>
  (await eslint.lintText(text, { filePath: `${repo}/${file}` }))[0].messages.map((m) => m.ruleId);

// the first lint builds the TypeScript program (tens of seconds on a busy 2-core box)
describe('lint rules', { timeout: 180_000 }, () => {
  it('a Buffer or process in a route file fails', async () => {
    expect(
      await lint('handlers/core/errors.ts', "export const b = Buffer.from('x');\nexport const p = process.env;\n"),
    ).toEqual(['no-restricted-globals', 'no-restricted-globals']);
  });

  it('the host may use Buffer', async () => {
    expect(await lint('runtime/config.ts', "export const b = Buffer.from('x');\n")).toEqual([]);
  });

  it('a relative import with .ts and an explicit any fail', async () => {
    expect(await lint('runtime/config.ts', "import { x } from './host.ts';\nexport const y: any = x;\n")).toEqual([
      'no-restricted-syntax',
      '@typescript-eslint/no-explicit-any',
    ]);
  });
});
