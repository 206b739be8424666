import { describe, expect, it } from 'vitest';
import { checkMkfsOptions, MKFS_OPTIONS, mkfsOptions } from '../../../handlers/fs/mkfs-options';

describe('checkMkfsOptions', () => {
  it('returns the pieces unchanged when every option is whitelisted', () => {
    const ext4 = [
      '-L',
      'data',
      '-m',
      '1',
      '-b',
      '4096',
      '-O',
      '^has_journal,metadata_csum',
      '-E',
      'lazy_itable_init=0,nodiscard',
      '-q',
    ];
    expect(checkMkfsOptions('ext4', ext4)).toEqual({ ok: true, argv: ext4 });
    const xfs = ['-L', 'scratch', '-m', 'crc=1,reflink=1', '-d', 'agcount=4,su=64k,sw=2'];
    expect(checkMkfsOptions('xfs', xfs)).toEqual({ ok: true, argv: xfs });
    expect(checkMkfsOptions('vfat', ['-n', 'USBKEY', '-F', '32'])).toEqual({
      ok: true,
      argv: ['-n', 'USBKEY', '-F', '32'],
    });
    expect(checkMkfsOptions('ext4', undefined)).toEqual({ ok: true, argv: [] });
    expect(checkMkfsOptions('ext4', [])).toEqual({ ok: true, argv: [] });
  });

  it.each([
    ['ext4', ['-F'], /option "-F" is not allowed for ext4/],
    ['ext4', ['-d', '/etc'], /option "-d" is not allowed/],
    ['ext4', ['-l', '/tmp/badblocks'], /option "-l" is not allowed/],
    ['ext4', ['-z', '/tmp/undo'], /option "-z" is not allowed/],
    ['ext4', ['-S'], /option "-S" is not allowed/],
    ['ext4', ['-n'], /option "-n" is not allowed/],
    ['ext4', ['-t', 'xfs'], /option "-t" is not allowed/],
    ['ext4', ['-E', 'offset=4096'], /option "-E": value "offset=4096" is not valid/],
    ['ext4', ['-E', 'root_owner=0:0,test_fs'], /value "root_owner=0:0,test_fs"/],
    ['ext4', ['-J', 'device=/dev/sda'], /option "-J": value "device=\/dev\/sda"/],
    ['ext4', ['-m', '51'], /percentage/],
    ['ext4', ['-m', '50.5'], /percentage/],
    ['ext4', ['-b', '3000'], /option "-b": value "3000"/],
    ['ext4', ['-L', 'a-label-that-is-too-long'], /1-16 characters/],
    ['ext4', ['-L', 'bad\nlabel'], /option "-L": value/],
    ['ext4', ['-L', '-q'], /value "-q" is not valid/],
    ['ext4', ['-L'], /option "-L" needs a value/],
    ['ext4', ['-O', 'has_journal,../x'], /option "-O": value/],
    ['ext4', ['-Ldata'], /two elements, e.g. \["-L", "data"\]/],
    ['ext4', ['-L data'], /two elements/],
    ['ext4', ['--label=data'], /not allowed/],
    ['ext4', ['-qv'], /not allowed/],
    ['ext4', ['-q', '-q'], /given twice/],
    ['ext4', ['-L', 'a', '-L', 'b'], /given twice/],
    ['ext4', ['/dev/sdb'], /"\/dev\/sdb" is not allowed/],
    ['ext4', [42], /options\[0\] must be a string/],
    ['xfs', ['-f'], /option "-f" is not allowed for xfs/],
    ['xfs', ['-p', '/etc/protofile'], /not allowed/],
    ['xfs', ['-l', 'logdev=/dev/sdb'], /value "logdev=\/dev\/sdb"/],
    ['xfs', ['-d', 'file,name=/tmp/x'], /value "file,name=\/tmp\/x"/],
    ['xfs', ['-r', 'rtdev=/dev/sdb'], /not allowed/],
    ['xfs', ['-L', 'thirteen-char'], /1-12 characters/],
    ['vfat', ['-I'], /not allowed for vfat/],
    ['vfat', ['-C'], /not allowed/],
    ['vfat', ['-F', '64'], /one of 12, 16, 32/],
    ['vfat', ['-n', 'TWELVE CHARS'], /1-11 characters/],
    ['exfat', ['-L', 'x'], /"exfat" accepts no options/],
    ['__proto__', ['-L', 'x'], /accepts no options/],
    ['constructor', ['-L', 'x'], /accepts no options/],
  ] as const)('%s %j is refused: %s', (type, options, message) => {
    const r = checkMkfsOptions(type, options);
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.message).toMatch(message);
  });

  it('types without a table take an empty array', () => {
    expect(checkMkfsOptions('minix', [])).toEqual({ ok: true, argv: [] });
  });

  it('caps the number of elements', () => {
    expect(
      checkMkfsOptions(
        'ext4',
        Array.from({ length: 40 }, () => '-q'),
      ).ok,
    ).toBe(false);
    expect(mkfsOptions.safeParse(Array.from({ length: 33 }, () => '-q')).success).toBe(false);
    expect(mkfsOptions.safeParse(['-L', 'x']).success).toBe(true);
  });

  it('every table example passes its own check (the system test runs them against the tools)', () => {
    for (const [type, specs] of Object.entries(MKFS_OPTIONS)) {
      for (const s of specs) {
        const options = s.value ? [s.flag, s.value.example] : [s.flag];
        expect(checkMkfsOptions(type, options), `${type} ${options.join(' ')}`).toEqual({ ok: true, argv: options });
        expect(s.flag).toMatch(/^-[A-Za-z]$/);
      }
    }
  });
});
