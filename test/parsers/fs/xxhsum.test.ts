import { describe, expect, it } from 'vitest';
import {
  checkChecksumFile,
  escapeXxhName,
  parseChecksumFile,
  parseXxhsumCheck,
  parseXxhsumSums,
  unescapeXxhName,
} from '../../../handlers/fs/parse/xxhsum';
import { parseError } from '../../helpers/parse-error';

const H64 = 'e4c191d091bd8853';
const H128 = '6bba86c7e069f56d5a10b435f1c8e49c';

describe('parseXxhsumSums', () => {
  it('reads every hash family in GNU and BSD form', () => {
    const out = [
      `946b5bf9  a`,
      `${H64}  b`,
      `${H128}  c`,
      `XXH3_99fc819aaba2462a  d`, // 0.8.2+ GNU -H3
      `XXH3 (e) = 99fc819aaba2462a`, // 0.8.1 -H3
      `XXH64_LE (f) = 5388bd91d091c1e4`,
    ].join('\n');
    expect(parseXxhsumSums(out + '\n')).toEqual([
      { hash: '946b5bf9', fileName: 'a', algorithm: 'XXH32' },
      { hash: H64, fileName: 'b', algorithm: 'XXH64' },
      { hash: H128, fileName: 'c', algorithm: 'XXH128' },
      { hash: '99fc819aaba2462a', fileName: 'd', algorithm: 'XXH3' },
      { hash: '99fc819aaba2462a', fileName: 'e', algorithm: 'XXH3' },
      { hash: '5388bd91d091c1e4', fileName: 'f', algorithm: 'XXH64', littleEndian: true },
    ]);
  });

  it('unescapes 0.8.2+ / GNU escaped lines (leading backslash)', () => {
    const out = `\\${H64}  new\\nline.txt\n\\XXH64 (back\\\\slash) = ${H64}\n\\${H64}  cr\\r\n`;
    expect(parseXxhsumSums(out).map((s) => s.fileName)).toEqual(['new\nline.txt', 'back\\slash', 'cr\r']);
  });

  it('reads the GNU md5sum escaping sample the same way (32 hex digits read as XXH128)', () => {
    const md5 =
      '\\9dd4e461268c8034f5c8564e155c67a6  new\\nline.txt\n\\92eb5ffee6ae2fec3ad71c777531578f  back\\\\slash.txt\n';
    expect(parseXxhsumSums(md5).map((s) => s.fileName)).toEqual(['new\nline.txt', 'back\\slash.txt']);
  });

  it('keeps names exactly: spaces, leading space, `) = ` inside a BSD name, unicode, tab', () => {
    const out = `${H64}   lead\nXXH64 (a) = b) = ${H64}\n${H64}  ünï\tx\n`;
    expect(parseXxhsumSums(out).map((s) => s.fileName)).toEqual([' lead', 'a) = b', 'ünï\tx']);
  });

  it('with the expected names, a raw newline in a 0.8.1 name is read correctly', () => {
    const out = `${H64}  /d/new\nline\n${H64}  /d/b\n`;
    parseError(() => parseXxhsumSums(out));
    expect(parseXxhsumSums(out, { fileNames: ['/d/new\nline', '/d/gone', '/d/b'] }).map((s) => s.fileName)).toEqual([
      '/d/new\nline',
      '/d/b',
    ]);
  });

  it('with the expected names, 0.8.2+ escaped output is matched too', () => {
    const out = `\\${H64}  /d/new\\nline\n\\XXH64 (/d/back\\\\slash) = ${H64}\n`;
    expect(parseXxhsumSums(out, { fileNames: ['/d/new\nline', '/d/back\\slash'] }).map((s) => s.fileName)).toEqual([
      '/d/new\nline',
      '/d/back\\slash',
    ]);
  });

  it('refuses output naming a file it was not asked about, naming the line', () => {
    const e = parseError(() => parseXxhsumSums(`${H64}  /a\n${H64}  /other\n`, { fileNames: ['/a', '/b'] }));
    expect(e.line).toBe(2);
    expect(e.message).toMatch(/line 2/);
  });

  it('refuses garbage and names the line', () => {
    expect(parseError(() => parseXxhsumSums(`${H64}  a\nnot a checksum\n`)).line).toBe(2);
    expect(parseError(() => parseXxhsumSums('zzzzzzzzzzzzzzzz  a\n')).line).toBe(1);
    expect(parseError(() => parseXxhsumSums(`${H64.slice(0, 12)}  a\n`)).line).toBe(1); // 12 hex: no algorithm
    expect(parseError(() => parseXxhsumSums(`XXH64 (a) = ${H64.slice(0, 8)}\n`)).line).toBe(1); // length vs algorithm
    expect(parseError(() => parseXxhsumSums(`\\${H64}  bad\\q\n`)).message).toMatch(/escape/);
    expect(parseError(() => parseXxhsumSums(`${H64} a\n`)).line).toBe(1); // one space
  });

  it('refuses truncated output (no final newline)', () => {
    expect(parseError(() => parseXxhsumSums(`${H64}  a\n${H64.slice(0, 8)}`)).message).toMatch(/truncated/);
  });

  it('empty output is no sums', () => {
    expect(parseXxhsumSums('')).toEqual([]);
  });

  it('escape helpers are inverse', () => {
    for (const n of ['a', 'new\nline', 'back\\slash', 'cr\r', '\\n literally'])
      expect(unescapeXxhName(escapeXxhName(n))).toBe(n);
    expect(unescapeXxhName('trailing\\')).toBeNull();
  });
});

describe('parseXxhsumCheck', () => {
  it('reads results, summaries and stderr (with the progress-line noise)', () => {
    const stdout = [
      '/d/a: OK',
      '/d/b: FAILED',
      "/s.xxh:3: Could not open or read '/d/gone': No such file or directory.",
      '1 line is improperly formatted',
      '1 listed file could not be read',
      '1 computed checksum did NOT match',
    ].join('\n');
    const stderr = `/s.xxh:4: Error: Improperly formatted checksum line.\n\r${' '.repeat(70)}\r`;
    expect(parseXxhsumCheck(stdout + '\n', stderr)).toEqual({
      results: [
        { fileName: '/d/a', result: 'OK' },
        { fileName: '/d/b', result: 'FAILED' },
        { fileName: '/d/gone', result: 'FAILED open or read', line: 3, reason: 'No such file or directory' },
      ],
      counts: { ok: 1, failed: 1, unreadable: 1, improperlyFormatted: 1 },
      noProperlyFormattedLines: false,
      improperLines: [4],
      errors: [],
    });
  });

  it('names ending in result words and holding quotes or `: ` stay whole', () => {
    const out =
      "/d/x: OK: FAILED\n/s:1: Could not open or read '/d/it's: here': Permission denied.\n1 listed file could not be read\n1 computed checksum did NOT match\n";
    const r = parseXxhsumCheck(out);
    expect(r.results.map((x) => x.fileName)).toEqual(['/d/x: OK', "/d/it's: here"]);
  });

  it('a newline in a name of an open failure is joined back', () => {
    const out =
      "/s:1: Could not open or read '/d/new\nline': No such file or directory.\n1 listed file could not be read\n";
    expect(parseXxhsumCheck(out).results[0].fileName).toBe('/d/new\nline');
  });

  it('tells a 0.8.2+ escaped name from a 0.8.1 raw name starting with a backslash, given the names', () => {
    expect(parseXxhsumCheck('\\/d/new\\nline: OK\n', '', { fileNames: ['/d/new\nline'] }).results[0].fileName).toBe(
      '/d/new\nline',
    );
    expect(parseXxhsumCheck('\\weird: OK\n', '', { fileNames: ['\\weird'] }).results[0].fileName).toBe('\\weird');
    expect(parseXxhsumCheck('\\weird: OK\n').results[0].fileName).toBe('\\weird'); // 0.8.1: raw
    parseError(() => parseXxhsumCheck('\\x: OK\n', '', { fileNames: ['/a'] }));
  });

  it('refuses summaries that disagree with the lines read', () => {
    expect(() => parseXxhsumCheck('/a: OK\n2 computed checksums did NOT match\n')).toThrow(/summary says 2/);
  });

  it('refuses garbage and truncation, naming the line', () => {
    expect(parseError(() => parseXxhsumCheck('/a: OK\nsomething else\n')).line).toBe(2);
    expect(parseError(() => parseXxhsumCheck('/a: OK\n/b: FAI')).message).toMatch(/truncated/);
    expect(parseError(() => parseXxhsumCheck("/s:1: Could not open or read '/x\n")).message).toMatch(/unterminated/);
  });
});

describe('parseChecksumFile (the way xxhsum -c reads it)', () => {
  const text = [
    `${H64}  /d/a`, // 1 GNU
    '# comment', // 2
    '', // 3 blank: improper
    `XXH3 (/d/b) = 99fc819aaba2462a`, // 4 BSD
    `${H64} */d/c`, // 5 binary marker
    `${H64} x/d/d`, // 6 any one character after the space is skipped
    `\\${H64}  /d/new\\nline`, // 7 escaped (0.8.2+)
    `${H64.toUpperCase()}  /d/e`, // 8 upper case hex
    `${H64}  /d/f\r`, // 9 CR stays in the name
    `FOO (/d/g) = ${H64}`, // 10 unknown algorithm word: xxhsum's default XXH64
    `XXH3_99fc819aaba2462a  /d/h`, // 11 0.8.2+ GNU XXH3
    `XXH32 (/d/i) = ${H64}`, // 12 length does not fit: improper
    `${H64}  relative`, // 13 relative
    `${H64} `, // 14 nothing after the space: improper
    `\\${H64}  /d/bad\\q`, // 15 bad escape: improper
    `XXH64 (/d/x) = b) = ${H64}`, // 16 BSD name holding `) = `
  ].join('\n');
  const parsed = parseChecksumFile(text + '\n');

  it('finds the names xxhsum would open, with their line numbers', () => {
    expect(parsed.entries.map((e) => [e.line, e.fileName, e.algorithm])).toEqual([
      [1, '/d/a', 'XXH64'],
      [4, '/d/b', 'XXH3'],
      [5, '/d/c', 'XXH64'],
      [6, '/d/d', 'XXH64'],
      [7, '/d/new\nline', 'XXH64'],
      [8, '/d/e', 'XXH64'],
      [9, '/d/f\r', 'XXH64'],
      [10, '/d/g', 'XXH64'],
      [11, '/d/h', 'XXH3'],
      [13, 'relative', 'XXH64'],
      [16, '/d/x) = b', 'XXH64'],
    ]);
    expect(parsed.entries.find((e) => e.line === 7)).toMatchObject({ escaped: true, style: 'gnu' });
    expect(parsed.improper.map((i) => i.line)).toEqual([3, 12, 14, 15]);
    expect(parsed.comments).toEqual([2]);
  });

  it('refuses a relative name, naming the first offending line', () => {
    expect(checkChecksumFile(parsed, { allowImproperLines: true })).toEqual({
      ok: false,
      code: 'relative-file-name',
      reason: 'line 13: file name "relative" is not an absolute path',
    });
    // by default an improper line is refused too, and it comes first here
    expect(checkChecksumFile(parsed)).toMatchObject({
      ok: false,
      code: 'improper-line',
      reason: expect.stringMatching(/^line 3:/),
    });
  });

  it('catches relative names hidden by the format quirks', () => {
    for (const line of [`${H64} *rel`, `\\${H64}  rel\\nx`, `ANY (rel) = ${H64}`, `${H64}  ./x`, `${H64}  `]) {
      const r = checkChecksumFile(parseChecksumFile(line + '\n'));
      expect(r, line).toMatchObject({ ok: false, code: 'relative-file-name' });
    }
    expect(checkChecksumFile(parseChecksumFile(`${H64} x/abs\n`))).toEqual({ ok: true });
  });

  it('accepts a clean file and refuses an empty one', () => {
    expect(checkChecksumFile(parseChecksumFile(`${H64}  /d/a\n# c\n`))).toEqual({ ok: true });
    expect(checkChecksumFile(parseChecksumFile('# only a comment\n'))).toMatchObject({ ok: false, code: 'no-entries' });
    expect(checkChecksumFile(parseChecksumFile(''))).toMatchObject({ ok: false, code: 'no-entries' });
  });

  it('a last line without newline still counts (xxhsum reads it)', () => {
    expect(parseChecksumFile(`${H64}  /d/a`).entries).toHaveLength(1);
  });
});
