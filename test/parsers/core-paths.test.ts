/** The one path predicate (handlers/core/paths.ts): the edges a one-character change would move. */
import { describe, expect, it } from 'vitest';
import { isUnder } from '../../handlers/core/paths';

describe('isUnder', () => {
  it('is the root itself or below it, never a sibling that shares its prefix', () => {
    expect(isUnder('/srv/data', '/srv/data')).toBe(true);
    expect(isUnder('/srv/data/x', '/srv/data')).toBe(true);
    expect(isUnder('/srv/data2', '/srv/data')).toBe(false);
    expect(isUnder('/srv/dat', '/srv/data')).toBe(false);
    expect(isUnder('/mnt2', '/mnt')).toBe(false);
    expect(isUnder('/srv', '/srv/data')).toBe(false);
  });
  it('strictly: below only', () => {
    expect(isUnder('/srv/data', '/srv/data', true)).toBe(false);
    expect(isUnder('/srv/data/x', '/srv/data', true)).toBe(true);
    expect(isUnder('/', '/', true)).toBe(false);
    expect(isUnder('/etc', '/', true)).toBe(true);
    expect(isUnder('/', '/')).toBe(true);
  });
  it('a root written with a trailing slash is the same root', () => {
    expect(isUnder('/srv/data/x', '/srv/data/')).toBe(true);
    expect(isUnder('/srv/data', '/srv/data/')).toBe(true);
    expect(isUnder('/srv/data2', '/srv/data/')).toBe(false);
  });
});
