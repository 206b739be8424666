/** "Did you mean" for a config key: what counts as a typo, and what is left without a guess. */
import { describe, expect, it } from 'vitest';
import { closestKey } from '../../runtime/config-hints';

describe('closestKey', () => {
  const known = ['port', 'host', 'bodyBytes', 'requestTimeoutMs', 'kinitTimeoutMs'];

  it('one or two edits away is a typo; the nearest wins', () => {
    expect(closestKey('prot', known)).toBe('port');
    expect(closestKey('hots', known)).toBe('host');
    expect(closestKey('bodybytes', known)).toBe('bodyBytes');
    expect(closestKey('kinitTimoutMs', known)).toBe('kinitTimeoutMs');
    expect(closestKey('hostx', ['host', 'hosts'])).toBe('host'); // a tie: the first known key
  });

  it('three edits away is not, unless one key starts the other', () => {
    expect(closestKey('pxyz', known)).toBeUndefined();
    expect(closestKey('requestTimeout', known)).toBe('requestTimeoutMs');
    expect(closestKey('re', known)).toBeUndefined();
    expect(closestKey('nope', known)).toBeUndefined();
  });
});
