import { describe, expect, it } from 'vitest';
import { parseGroup, parsePasswd } from '../../../handlers/keys/parse/getent';
import { parseError } from '../../helpers/parse-error';

describe('getent', () => {
  it('reads a passwd line (Debian 12 format)', () => {
    expect(parsePasswd('root:x:0:0:root:/root:/bin/bash\n')).toEqual({
      name: 'root',
      uid: 0,
      gid: 0,
      home: '/root',
      shell: '/bin/bash',
    });
    expect(parsePasswd('alice:x:1000:1000:Alice Example,,,:/home/alice:/bin/bash\n').home).toBe('/home/alice');
  });

  it('reads a group line with and without members', () => {
    expect(parseGroup('ballast-keys:x:995:alice,bob\n')).toEqual({
      name: 'ballast-keys',
      gid: 995,
      members: ['alice', 'bob'],
    });
    expect(parseGroup('ballast-keys:x:995:\n').members).toEqual([]);
  });

  it('refuses garbage and truncated lines', () => {
    expect(parseError(() => parsePasswd('')).message).toBe('getent passwd: expected one line, got 0');
    expect(parseError(() => parsePasswd('root:x:0:0:root:/root')).message).toBe(
      'getent passwd: line 1: expected 7 fields, got 6',
    );
    expect(parseError(() => parsePasswd('root:x:zero:0:root:/root:/bin/sh')).message).toBe(
      'getent passwd: line 1: uid "zero" is not a number',
    );
    expect(parseError(() => parsePasswd('root:x:0:0:root:root:/bin/sh')).message).toBe(
      'getent passwd: line 1: home "root" is not an absolute path',
    );
    expect(parseError(() => parsePasswd('a:x:1:1::/a:/bin/sh\nb:x:2:2::/b:/bin/sh\n')).message).toBe(
      'getent passwd: expected one line, got 2',
    );
    expect(parseError(() => parseGroup('staff:x:50')).message).toBe('getent group: line 1: expected 4 fields, got 3');
  });
});
