import { describe, expect, it } from 'vitest';
import { checkXxhsumOptions } from '../../../handlers/fs/xxhsum-options';

describe('checkXxhsumOptions', () => {
  it('accepts the whitelisted flags', () => {
    expect(checkXxhsumOptions('generate', ['-H2', '--tag'])).toEqual({ ok: true, argv: ['-H2', '--tag'] });
    expect(checkXxhsumOptions('verify', ['--strict', '--warn', '-q'])).toEqual({
      ok: true,
      argv: ['--strict', '--warn', '-q'],
    });
    expect(checkXxhsumOptions('generate', undefined)).toEqual({ ok: true, argv: [] });
  });

  it.each([
    ['generate', ['-c'], /"-c" is not allowed/],
    ['generate', ['--files-from', '/etc/shadow'], /"--files-from" is not allowed/],
    ['generate', ['-b'], /not allowed/],
    ['generate', ['-H2', '-H3'], /only one algorithm/],
    ['generate', ['--tag', '--tag'], /given twice/],
    ['generate', ['-H 2'], /not allowed/],
    ['generate', ['--status'], /not allowed for generate/],
    ['verify', ['-H1'], /not allowed for verify/],
    ['verify', ['--', '/etc/passwd'], /not allowed/],
    ['verify', [1], /must be a string/],
  ] as const)('%s %j is refused', (mode, options, message) => {
    const r = checkXxhsumOptions(mode, options);
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.message).toMatch(message);
  });
});
