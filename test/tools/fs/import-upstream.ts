/**
 * Turns the Debian 12 captures in ../shared/upstream-samples/{xxhsum,getfacl,setfacl}/ into
 * fixtures (fixtures/<tool>/upstream-*.yaml):
 *
 *   npx vite-node test/tools/fs/import-upstream.ts
 *
 * `.out` files are stdout byte for byte. Their argv was not captured with them, so it is
 * reconstructed from the sample's name and content (the fixture's `source` says so); the
 * transcripts (`*.transcript.txt`) give argv, stdout, stderr and rc, and are transcribed here
 * explicitly, invocation by invocation, because their notation differs (`$` line-end markers
 * and a `<SPACES>` placeholder in the xxhsum session; plain lines elsewhere). xxhsum 0.8.1's
 * placeholder stands for its progress-line reset, `\r` + 70 spaces + `\r` (cli/xxhsum.c
 * `"\r%70s\r"`, and the same bytes recorded on this machine).
 *
 * Not imported: the jc lsblk/findmnt/mount samples (text tables; the product parses the JSON
 * forms), and the md5sum newline/backslash sample (md5 hashes would read as XXH128; its
 * escaping is covered by unit tests instead).
 */
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { readFixture, writeFixture, type Fixture } from '../../../runtime/system/fixture-file';

const SAMPLES = resolve(import.meta.dirname, '../../../../shared/upstream-samples');
const FIXTURES = resolve(import.meta.dirname, '../../../fixtures');
const XXHSUM = '/usr/bin/xxhsum';
const GETFACL = '/usr/bin/getfacl';
const SETFACL = '/usr/bin/setfacl';
const RESET = `\r${' '.repeat(70)}\r`;

const CAPTURE = 'captured on Debian 12 (xxhash 0.8.1-1, acl 2.3.1-3, coreutils 9.1-1), locale C';

function write(tool: string, name: string, f: Omit<Fixture, 'source'>, source: string): void {
  const file = join(FIXTURES, tool, `upstream-${name}.yaml`);
  const fixture: Fixture = { source, ...f };
  writeFixture(file, fixture);
  const back = readFixture(file);
  if (back.stdout !== f.stdout || back.stderr !== f.stderr || JSON.stringify(back.argv) !== JSON.stringify(f.argv)) {
    throw new Error(`${file} does not round-trip`);
  }
  console.log(file);
}

function fromOut(tool: string, name: string, sample: string, argv: string[], extra: Partial<Fixture> = {}): void {
  const stdout = readFileSync(join(SAMPLES, sample), 'utf8');
  write(
    tool,
    name,
    { argv, code: 0, stdout, stderr: '', ...extra },
    `upstream-samples/${sample} (${CAPTURE}; stdout byte for byte; argv reconstructed from the sample name and content)`,
  );
}

function fromTranscript(tool: string, name: string, sample: string, f: Omit<Fixture, 'source'>): void {
  write(tool, name, f, `upstream-samples/${sample} (${CAPTURE}; transcribed from the transcript)`);
}

// ---- xxhsum .out ------------------------------------------------------------------------------
fromOut('xxhsum', 'default-h1', 'xxhsum/debian12-xxhash-0.8.1-xxhsum-default-H1.out', [
  XXHSUM,
  'a.txt',
  'file with spaces.txt',
]);
fromOut('xxhsum', 'h0', 'xxhsum/debian12-xxhash-0.8.1-xxhsum-H0.out', [XXHSUM, '-H0', 'a.txt']);
fromOut('xxhsum', 'h2', 'xxhsum/debian12-xxhash-0.8.1-xxhsum-H2.out', [XXHSUM, '-H2', 'a.txt']);
fromOut('xxhsum', 'h3', 'xxhsum/debian12-xxhash-0.8.1-xxhsum-H3.out', [XXHSUM, '-H3', 'a.txt']);
fromOut('xxhsum', 'tag-h1', 'xxhsum/debian12-xxhash-0.8.1-xxhsum-tag-H1.out', [XXHSUM, '-H1', '--tag', 'a.txt']);
fromOut('xxhsum', 'newline-backslash-names', 'xxhsum/debian12-xxhash-0.8.1-xxhsum-newline-backslash-names.out', [
  XXHSUM,
  'new\nline.txt',
  'back\\slash.txt',
]);
fromOut('xxhsum', 'c-all-ok', 'xxhsum/debian12-xxhash-0.8.1-xxhsum-c-all-ok.out', [XXHSUM, '-c', 'sums.xxh64']);
fromOut(
  'xxhsum',
  'c-one-failed',
  'xxhsum/debian12-xxhash-0.8.1-xxhsum-c-one-failed.out',
  [XXHSUM, '-c', 'sums.xxh64'],
  {
    code: 1,
    scenario: 'xxhsum-one-failed', // same argv as c-all-ok
  },
);
fromOut('xxhsum', 'c-improper-line', 'xxhsum/debian12-xxhash-0.8.1-xxhsum-c-improper-line.out', [
  XXHSUM,
  '-c',
  'bad.xxh',
]);
fromOut(
  'xxhsum',
  'c-missing-file',
  'xxhsum/debian12-xxhash-0.8.1-xxhsum-c-missing-file.out',
  [XXHSUM, '-c', 'miss.xxh'],
  { code: 1 },
);

// ---- xxhsum session transcript (only invocations not already covered by a .out) ----------------
const SESSION = 'xxhsum/debian12-xxhash-0.8.1-xxhsum-session.transcript.txt';
fromTranscript('xxhsum', 'session-h1', SESSION, {
  argv: [XXHSUM, 'a.txt'],
  code: 0,
  stdout: 'e4c191d091bd8853  a.txt\n',
  stderr: RESET,
});
fromTranscript('xxhsum', 'session-c-quiet', SESSION, {
  argv: [XXHSUM, '-q', '-c', 'sums.xxh64'],
  code: 1,
  stdout: 'file with spaces.txt: FAILED\n1 computed checksum did NOT match\n',
  stderr: '',
});
fromTranscript('xxhsum', 'session-c-status', SESSION, {
  argv: [XXHSUM, '--status', '-c', 'sums.xxh64'],
  code: 1,
  stdout: '',
  stderr: '',
});
fromTranscript('xxhsum', 'session-c-strict', SESSION, {
  argv: [XXHSUM, '--strict', '-c', 'bad.xxh'],
  code: 1,
  stdout: 'a.txt: OK\n1 line is improperly formatted\n',
  stderr: '',
});
fromTranscript('xxhsum', 'session-nonexist', SESSION, {
  argv: [XXHSUM, 'nonexist.txt'],
  code: 1,
  stdout: '',
  stderr: `Error: Could not open 'nonexist.txt': No such file or directory. \n${RESET}`,
});

// GNU md5sum -c: the `FAILED open or read` wording and WARNING lines on stderr (not xxhsum's)
fromTranscript(
  'xxhsum',
  'md5sum-c-failed-and-missing',
  'xxhsum/debian12-coreutils-9.1-md5sum-c-failed-and-missing.transcript.txt',
  {
    argv: ['/usr/bin/md5sum', '-c', 'm.md5'],
    code: 1,
    stdout: 'a.txt: OK\nfile with spaces.txt: FAILED\ngone.txt: FAILED open or read\n',
    stderr:
      'md5sum: gone.txt: No such file or directory\nmd5sum: WARNING: 1 listed file could not be read\nmd5sum: WARNING: 1 computed checksum did NOT match\n',
  },
);

// ---- getfacl .out -------------------------------------------------------------------------------
const G = 'getfacl/debian12-acl-2.3.1-getfacl-';
fromOut('getfacl', 'R-absolute', `${G}R-absolute.out`, [GETFACL, '-R', '/tmp/research/scratch/acl2/share'], {
  stderr: readFileSync(join(SAMPLES, `${G}R-absolute.stderr.txt`), 'utf8'),
});
fromOut('getfacl', 'R-relative', `${G}R-relative.out`, [GETFACL, '-R', 'share']);
fromOut('getfacl', 'c-omit-header', `${G}c-omit-header.out`, [GETFACL, '-c', 'share']);
fromOut('getfacl', 'e-all-effective', `${G}e-all-effective.out`, [GETFACL, '-e', 'share']);
// four samples share `getfacl share`: with-default-entries is the base, the others are scenarios
fromOut('getfacl', 'effective-rights-comment', `${G}effective-rights-comment.out`, [GETFACL, 'share'], {
  scenario: 'getfacl-effective-rights',
});
fromOut('getfacl', 'escaped-names', `${G}escaped-names.out`, [
  GETFACL,
  'share/new\nline',
  'share/back\\slash',
  'share/name with space.txt',
]);
fromOut('getfacl', 'flags-setgid-sticky', `${G}flags-setgid-sticky.out`, [GETFACL, 'flagged']);
fromOut('getfacl', 'n-numeric', `${G}n-numeric.out`, [GETFACL, '-n', 'share']);
fromOut('getfacl', 'named-entries', `${G}named-entries.out`, [GETFACL, 'share'], { scenario: 'getfacl-named-entries' });
fromOut('getfacl', 'plain-dir', `${G}plain-dir.out`, [GETFACL, 'share'], { scenario: 'getfacl-plain-dir' });
fromOut('getfacl', 't-tabular', `${G}t-tabular.out`, [GETFACL, '-t', 'share']);
fromOut('getfacl', 'with-default-entries', `${G}with-default-entries.out`, [GETFACL, 'share']);

// ---- setfacl --test .out and the errors transcript ---------------------------------------------
const S = 'setfacl/debian12-acl-2.3.1-setfacl-';
fromOut('setfacl', 'test-R-m', `${S}test-R-m.out`, [SETFACL, '--test', '-R', '-m', 'g:users:rwX', 'share']);
fromOut('setfacl', 'test-d-m', `${S}test-d-m.out`, [SETFACL, '--test', '-d', '-m', 'g:users:rwx', 'share']);
fromOut('setfacl', 'test-m', `${S}test-m.out`, [SETFACL, '--test', '-m', 'u:daemon:rw', 'share/file.txt']);

const ERRORS = `${S}errors.transcript.txt`;
const err = (name: string, argv: string[], code: number, stderr: string) =>
  fromTranscript('setfacl', name, ERRORS, { argv, code, stdout: '', stderr });
err(
  'error-unknown-user',
  [SETFACL, '-m', 'u:nosuchuser:rwx', 'share'],
  2,
  'setfacl: Option -m: Invalid argument near character 3\n',
);
err(
  'error-bad-perms',
  [SETFACL, '-m', 'u:nobody:rwz', 'share'],
  2,
  'setfacl: Option -m: Invalid argument near character 12\n',
);
err('error-incomplete', [SETFACL, '-m', 'u:nobody', 'share'], 2, 'setfacl: Option -m incomplete\n');
err('error-missing-file', [SETFACL, '-m', 'u:nobody:r', 'missing'], 1, 'setfacl: missing: No such file or directory\n');
err('remove-entry', [SETFACL, '-x', 'u:nobody', 'share'], 0, '');
err('remove-all', [SETFACL, '-b', 'share/file.txt'], 0, '');
err('remove-default', [SETFACL, '-k', 'share'], 0, '');
fromTranscript('getfacl', 'missing', ERRORS, {
  argv: [GETFACL, 'missing'],
  code: 1,
  stdout: '',
  stderr: 'getfacl: missing: No such file or directory\n',
});
