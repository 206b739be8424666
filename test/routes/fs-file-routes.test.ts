/**
 * Route tier: explore (the real host operation over a private tree), set_permissions, xxhash
 * and xxhash_verify (replayed commands, recorded outputs where they exist). Asserts answers
 * value by value, the exact argv, what went to stdin, and events.
 */
import { lstatSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync, type Stats } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { exploreAnswer, type ExploreAnswer, type ExploreEntry } from '../../handlers/fs/responses';
import explore from '../../handlers/fs/routes/explore';
import setPermissions from '../../handlers/fs/routes/set-permissions';
import xxhash from '../../handlers/fs/routes/xxhash';
import xxhashVerify from '../../handlers/fs/routes/xxhash-verify';
import { parseXxhsumSums } from '../../handlers/fs/parse/xxhsum';
import { readFixture, type Fixture } from '../../runtime/system/fixture-file';
import { fixture, makeTestHost, type TestHost } from '../helpers/host';
import { SwitchableReplay } from './fs-helpers';
import { errorOf } from '../helpers/answers';

/** POST /fs/xxhash answers (the route's response schema) */
interface XxhashAnswer {
  sums: { hash: string; fileName: string }[];
}

const FIXTURES = resolve(import.meta.dirname, '../../fixtures');
const recorded = (tool: string, name: string): Fixture => readFixture(join(FIXTURES, tool, `${name}.yaml`));

let t: TestHost;
const backend = new SwitchableReplay();
/** explore and the checksum reader may read only below this (settings.fs.readRoots) */
let base: string;
let tree: string;

beforeAll(async () => {
  base = mkdtempSync(join(tmpdir(), 'ballast-fs-routes-'));
  tree = join(base, 'tree');
  mkdirSync(join(tree, 'sub', 'deeper'), { recursive: true });
  mkdirSync(join(tree, 'empty'));
  writeFileSync(join(tree, 'a.txt'), 'hello');
  writeFileSync(join(tree, 'sub', 'b.txt'), 'bb');
  writeFileSync(join(tree, 'sub', 'deeper', 'c.txt'), 'c');
  writeFileSync(join(tree, 'odd name ✓'), '');
  symlinkSync('/etc', join(tree, 'link-out')); // a way out of the tree: must never be entered
  symlinkSync('sub', join(tree, 'link-in'));
  symlinkSync('/etc', join(base, 'escape')); // fs_path itself pointing outside the roots
  t = await makeTestHost({
    routes: [explore, setPermissions, xxhash, xxhashVerify],
    backend,
    // the recorded fixtures name files under /tmp/ballast-fixtures and /data
    config: {
      settings: {
        fs: {
          readRoots: [base, '/tmp/ballast-fixtures', '/data'],
          writeRoots: ['/srv', '/mnt', '/tmp/ballast-fixtures'],
          exploreMaxEntries: 1000,
        },
      },
    },
  });
});
afterAll(async () => {
  await t.close();
  rmSync(base, { recursive: true, force: true });
});

const use = (...fixtures: Fixture[]) => backend.use(fixtures);
const argvs = () => backend.calls().map((c) => c.argv);
const newEvents = () =>
  // the route's events (the job layer's own jobs.job.finished is not the route's)
  t.host.db.prepare("SELECT kind, data FROM events WHERE kind NOT LIKE 'jobs.%' ORDER BY seq").all() as {
    kind: string;
    data: string;
  }[];

// ---- explore -------------------------------------------------------------------------------------

/** What the entry must say, from lstat of the same path (the reference the route is compared to). */
function expectedFields(path: string): Omit<ExploreEntry, 'children' | 'file_num' | 'truncated'> {
  const s: Stats = lstatSync(path);
  const iso = (ms: number) => new Date(ms).toISOString();
  return {
    dev: s.dev,
    mode: s.mode,
    nlink: s.nlink,
    uid: s.uid,
    gid: s.gid,
    rdev: s.rdev,
    blksize: s.blksize,
    ino: s.ino,
    size: s.size,
    blocks: s.blocks,
    atimeMs: s.atimeMs,
    mtimeMs: s.mtimeMs,
    ctimeMs: s.ctimeMs,
    birthtimeMs: s.birthtimeMs,
    atime: iso(s.atimeMs),
    mtime: iso(s.mtimeMs),
    ctime: iso(s.ctimeMs),
    birthtime: iso(s.birthtimeMs),
    name: path.slice(path.lastIndexOf('/') + 1),
    path,
    isSymbolicLink: s.isSymbolicLink(),
    isBlockDevice: s.isBlockDevice(),
    isDirectory: s.isDirectory(),
    isFile: s.isFile(),
  };
}

const byName = (list: ExploreEntry[]) => Object.fromEntries(list.map((e) => [e.name, e]));

describe('POST /fs/explore', () => {
  it('lists every entry with the stat fields of lstat, recursive children, file_num and total', async () => {
    // Reading a directory the first time after its creation moves its atime (relatime); walk
    // once so the lstat reference below and the answer see the same atime.
    await t.call<ExploreAnswer>('POST', '/api/v2/fs/explore', { body: { fs_path: tree } });
    const r = await t.call<ExploreAnswer>('POST', '/api/v2/fs/explore', { body: { fs_path: tree } });
    expect(r.status, r.text).toBe(200);
    expect(exploreAnswer.safeParse(r.json).success).toBe(true);
    const files = r.json.files;
    expect(files.map((f) => f.name)).toEqual(['a.txt', 'empty', 'link-in', 'link-out', 'odd name ✓', 'sub']);
    const top = byName(files);
    for (const name of Object.keys(top)) {
      const { children, file_num, truncated, ...fields } = top[name];
      expect(fields, name).toEqual(expectedFields(join(tree, name)));
      expect(truncated, name).toBeUndefined();
      if (!top[name].isDirectory) expect({ children, file_num }, name).toEqual({ children: [], file_num: 0 });
    }
    expect(top['a.txt']).toMatchObject({ size: 5, isFile: true });
    expect(top.empty).toMatchObject({ isDirectory: true, children: [], file_num: 0 });
    // symbolic links are entries, never followed: /etc's contents do not appear
    expect(top['link-out']).toMatchObject({ isSymbolicLink: true, isDirectory: false, children: [] });
    expect(top['link-in']).toMatchObject({ isSymbolicLink: true, children: [] });

    const sub = top.sub;
    expect(sub.file_num).toBe(2);
    expect(sub.children.map((c) => c.path)).toEqual([join(tree, 'sub/b.txt'), join(tree, 'sub/deeper')]);
    const deeper = byName(sub.children).deeper;
    expect(deeper.file_num).toBe(1);
    const { children: _c, file_num: _f, ...cFields } = deeper.children[0];
    expect(cFields).toEqual(expectedFields(join(tree, 'sub/deeper/c.txt')));

    expect(r.json.total).toBe(9);
    expect(r.json).toMatchObject({
      truncated: false,
      truncatedBy: [],
      errors: [],
      limits: { depth: 32, maxEntries: 1000, oneFileSystem: true },
    });
  });

  it('depth limits the levels listed; directories not entered say truncated', async () => {
    const r = await t.call<ExploreAnswer>('POST', '/api/v2/fs/explore', { body: { fs_path: tree, depth: 1 } });
    expect(r.status).toBe(200);
    expect(r.json.total).toBe(6);
    expect(r.json).toMatchObject({ truncated: true, truncatedBy: ['depth'], limits: { depth: 1 } });
    const top = byName(r.json.files);
    expect(top.sub).toMatchObject({ children: [], file_num: 0, truncated: true });
    expect(top.empty.truncated).toBe(true); // not read, so not known to be empty
    expect(top['a.txt'].truncated).toBeUndefined();
    expect(top['link-out'].truncated).toBeUndefined();

    const two = await t.call<ExploreAnswer>('POST', '/api/v2/fs/explore', { body: { fs_path: tree, depth: 2 } });
    expect(byName(byName(two.json.files).sub.children).deeper).toMatchObject({ children: [], truncated: true });
    expect(two.json.total).toBe(8);
  });

  it('maxEntries caps the whole tree and says so', async () => {
    const r = await t.call<ExploreAnswer>('POST', '/api/v2/fs/explore', { body: { fs_path: tree, maxEntries: 7 } });
    expect(r.status).toBe(200);
    expect(r.json.total).toBe(7);
    expect(r.json).toMatchObject({ truncated: true, truncatedBy: ['entries'], limits: { maxEntries: 7 } });
    const count = (l: ExploreEntry[]): number => l.reduce((n, e) => n + 1 + count(e.children), 0);
    expect(count(r.json.files)).toBe(7);
  });

  it('a trailing slash or a symlinked fs_path inside the roots lists the same tree under the given path', async () => {
    const r = await t.call<ExploreAnswer>('POST', '/api/v2/fs/explore', { body: { fs_path: `${tree}/sub/` } });
    expect(r.json.files.map((f: ExploreEntry) => f.path)).toEqual([join(tree, 'sub/b.txt'), join(tree, 'sub/deeper')]);
    const viaLink = await t.call<ExploreAnswer>('POST', '/api/v2/fs/explore', {
      body: { fs_path: join(tree, 'link-in') },
    });
    expect(viaLink.json.files.map((f: ExploreEntry) => f.path)).toEqual([
      join(tree, 'link-in/b.txt'),
      join(tree, 'link-in/deeper'),
    ]);
  });

  it('refuses: outside the read roots 403 (also through a symlink), missing 404, a file 400, over the ceiling 400, bad input 400', async () => {
    const call = (body: unknown) => t.call<ExploreAnswer>('POST', '/api/v2/fs/explore', { body });
    const outside = await call({ fs_path: '/etc' });
    expect(outside.status).toBe(403);
    expect(errorOf(outside).message).toBe('/etc is outside the directories explore may read (settings.fs.readRoots)');
    expect((await call({ fs_path: join(base, 'escape') })).status).toBe(403);
    const missing = await call({ fs_path: join(tree, 'nope') });
    expect(missing.status).toBe(404);
    expect(errorOf(missing).message).toBe(`${join(tree, 'nope')} does not exist`);
    const file = await call({ fs_path: join(tree, 'a.txt') });
    expect(file.status).toBe(400);
    expect(errorOf(file).message).toBe(`${join(tree, 'a.txt')} is not a directory`);
    const ceiling = await call({ fs_path: tree, maxEntries: 5000 });
    expect(ceiling.status).toBe(400);
    expect(errorOf(ceiling).message).toBe(
      "maxEntries 5000 is above this host's ceiling of 1000 (settings.fs.exploreMaxEntries)",
    );
    expect(errorOf(await call({ fs_path: 'tree' })).issues).toEqual([
      { path: 'body.fs_path', message: 'must be an absolute path' },
    ]);
    expect(errorOf(await call({ fs_path: tree, depth: 0 })).issues![0].path).toBe('body.depth');
    expect((await call({ fs_path: tree, follow: true })).status).toBe(400);
  });

  it('needs only fs:read, runs no command, emits nothing and audits the walk', async () => {
    use();
    const before = newEvents().length;
    const tok = await t.token(['fs:read']);
    const r = await t.call<ExploreAnswer>('POST', '/api/v2/fs/explore', {
      body: { fs_path: tree, depth: 1 },
      token: tok,
    });
    expect(r.status).toBe(200);
    expect(argvs()).toEqual([]);
    expect(newEvents().length).toBe(before);
    const audit = t.host.db
      .prepare("SELECT argv, note FROM audit_log WHERE kind = 'fs/explore' ORDER BY id DESC LIMIT 1")
      .get() as { argv: string; note: string };
    expect(audit).toEqual({ argv: JSON.stringify([tree]), note: '6 entries, truncated by depth' });
    expect(
      (
        await t.call<ExploreAnswer>('POST', '/api/v2/fs/explore', {
          body: { fs_path: tree },
          token: await t.token(['network:manage']),
        })
      ).status,
    ).toBe(403);
  });
});

// ---- set_permissions -----------------------------------------------------------------------------

describe('POST /fs/set_permissions', () => {
  const SETFACL = '/usr/bin/setfacl';

  it('runs setfacl -m with the validated entries (canonical) -- path, and emits fs.acl.updated', async () => {
    const argv = [SETFACL, '-m', 'user:backup:rwx,group:staff:r-x,mask::rwx', '--', '/srv/share'];
    use(fixture(argv, ''));
    const r = await t.call('POST', '/api/v2/fs/set_permissions', {
      body: { path: '/srv/share', acls: ['u:backup:rwx', 'g:staff:r-x', 'm::rwx'] },
    });
    expect(r.status, r.text).toBe(200);
    expect(r.json).toBe('ACL of /srv/share set: user:backup:rwx,group:staff:r-x,mask::rwx');
    expect(argvs()).toEqual([argv]);
    const last = newEvents().at(-1)!;
    expect({ kind: last.kind, data: JSON.parse(last.data) }).toEqual({
      kind: 'fs.acl.updated',
      data: { path: '/srv/share', defaults: false },
    });
  });

  it('accepts the spec example key acl, and defaults/recursive become -R -d', async () => {
    const argv = [SETFACL, '-R', '-d', '-m', 'user:nobody:r-x', '--', '/srv/share'];
    use(fixture(argv, ''));
    const r = await t.call('POST', '/api/v2/fs/set_permissions', {
      body: { path: '/srv/share', acl: ['u:nobody:r-x'], defaults: true, recursive: true },
    });
    expect(r.status, r.text).toBe(200);
    expect(r.json).toBe('ACL of /srv/share set: user:nobody:r-x (default ACL), recursively');
    expect(argvs()).toEqual([argv]);
    expect(JSON.parse(newEvents().at(-1)!.data)).toEqual({ path: '/srv/share', defaults: true });
  });

  it('test: runs setfacl --test and answers its listing; nothing changes, no event', async () => {
    // recorded relative (cwd /tmp/ballast-fixtures); the same records with the absolute path
    const rec = recorded('setfacl', 'test-R-m');
    const stdout = rec.stdout.replace(/^share/gm, '/tmp/ballast-fixtures/share');
    const argv = [SETFACL, '--test', '-R', '-m', 'group:users:rwX', '--', '/tmp/ballast-fixtures/share'];
    use(fixture(argv, stdout));
    const before = newEvents().length;
    const r = await t.call('POST', '/api/v2/fs/set_permissions', {
      body: { path: '/tmp/ballast-fixtures/share', acls: ['g:users:rwX'], recursive: true, test: true },
    });
    expect(r.status, r.text).toBe(200);
    expect(r.json).toBe(stdout);
    expect(r.json).toContain('/tmp/ballast-fixtures/share/new\nline: u::rw-');
    expect(argvs()).toEqual([argv]);
    expect(newEvents().length).toBe(before);
  });

  it('test without acls lists the current ACLs (getfacl -p -- path); nothing changes, no event (issue 12 item 5)', async () => {
    const rec = recorded('getfacl', 'dir-with-defaults');
    const stdout = rec.stdout.replace(/^# file: share/m, '# file: /tmp/ballast-fixtures/share');
    const argv = ['/usr/bin/getfacl', '-p', '--', '/tmp/ballast-fixtures/share'];
    use(fixture(argv, stdout));
    const before = newEvents().length;
    const r = await t.call('POST', '/api/v2/fs/set_permissions', {
      body: { path: '/tmp/ballast-fixtures/share', test: true },
    });
    expect(r.status, r.text).toBe(200);
    expect(r.json as unknown).toBe(stdout);
    expect(argvs()).toEqual([argv]);
    expect(newEvents().length).toBe(before);
    // recursive and defaults pass on as getfacl's -R and -d
    const rd = ['/usr/bin/getfacl', '-p', '-R', '-d', '--', '/tmp/ballast-fixtures/share'];
    use(fixture(rd, stdout));
    const r2 = await t.call('POST', '/api/v2/fs/set_permissions', {
      body: { path: '/tmp/ballast-fixtures/share', test: true, recursive: true, defaults: true },
    });
    expect([r2.status, argvs()]).toEqual([200, [rd]]);
  });

  it('an entry cannot smuggle an option or a second entry; acls and acl together, or neither, are refused', async () => {
    use();
    const issues = async (body: unknown) =>
      errorOf(await t.call('POST', '/api/v2/fs/set_permissions', { body })).issues!;
    expect(await issues({ path: '/srv', acls: ['u:a:rwx,u:b:rwx'] })).toEqual([
      { path: 'body.acls.0', message: 'ACL entry "u:a:rwx,u:b:rwx": must be a single entry (no ",")' },
    ]);
    expect((await issues({ path: '/srv', acls: ['--set=u::rwx'] }))[0]).toEqual({
      path: 'body.acls.0',
      message: 'ACL entry "--set=u::rwx": must not start with "-"',
    });
    expect((await issues({ path: '/srv', acls: ['u:a:rwx\n-b'] }))[0].message).toMatch(/whitespace/);
    expect((await issues({ path: '/srv', acls: ['u:a'] }))[0].message).toMatch(/permissions are missing/);
    expect(await issues({ path: '/srv', acls: ['u:a:r'], acl: ['u:a:r'] })).toEqual([
      { path: 'body.acl', message: 'give either acls or acl, not both' },
    ]);
    expect(await issues({ path: '/srv' })).toEqual([
      {
        path: 'body.acls',
        message:
          'at least one ACL entry is required to change ACLs (send test: true without acls to list the current ones)',
      },
    ]);
    expect((await issues({ path: 'srv', acls: ['u::rwx'] }))[0].path).toBe('body.path');
    expect(argvs()).toEqual([]);
  });

  it('setfacl refusals: an unknown user is a 400 naming the entry, a missing path 404, no ACL support 409, defaults on a file 400', async () => {
    const unknown = [SETFACL, '-m', 'user:backup:rwx,user:nosuchuser:rwx', '--', '/srv/share'];
    // the recorded message, pointing into the second entry of the joined argument
    use(fixture(unknown, '', { code: 2, stderr: 'setfacl: Option -m: Invalid argument near character 20\n' }));
    const r = await t.call('POST', '/api/v2/fs/set_permissions', {
      body: { path: '/srv/share', acls: ['u:backup:rwx', 'u:nosuchuser:rwx'] },
    });
    expect(r.status).toBe(400);
    expect(errorOf(r).message).toBe('ACL entry "u:nosuchuser:rwx" was refused by setfacl (unknown user or group?)');

    const missing = recorded('setfacl', 'error-missing-file');
    use(
      fixture([SETFACL, '-m', 'user:nobody:rwx', '--', '/srv/missing'], '', {
        code: 1,
        stderr: 'setfacl: /srv/missing: No such file or directory\n',
      }),
    );
    expect(missing.stderr).toMatch(/: No such file or directory\n$/); // the shape the route reads, as recorded
    const nf = await t.call('POST', '/api/v2/fs/set_permissions', {
      body: { path: '/srv/missing', acls: ['u:nobody:rwx'] },
    });
    expect(nf.status).toBe(404);
    expect(errorOf(nf).message).toBe('/srv/missing does not exist');

    use(
      fixture([SETFACL, '-m', 'user:nobody:rwx', '--', '/mnt/fat'], '', {
        code: 1,
        stderr: 'setfacl: /mnt/fat: Operation not supported\n',
      }),
    );
    const fat = await t.call('POST', '/api/v2/fs/set_permissions', {
      body: { path: '/mnt/fat', acls: ['u:nobody:rwx'] },
    });
    expect(fat.status).toBe(409);

    // recorded on a file (relative there): the same message for the absolute path
    const onFile = recorded('setfacl', 'error-default-on-file');
    use(
      fixture([SETFACL, '-d', '-m', 'user:nobody:r', '--', '/srv/file.txt'], '', {
        code: onFile.code,
        stderr: onFile.stderr.replace('share/file.txt', '/srv/file.txt'),
      }),
    );
    const file = await t.call('POST', '/api/v2/fs/set_permissions', {
      body: { path: '/srv/file.txt', acls: ['u:nobody:r'], defaults: true },
    });
    expect(file.status).toBe(400);
    expect(errorOf(file).message).toBe(
      '/srv/file.txt is not a directory: only directories have a default ACL (drop "defaults")',
    );
  });
});

// ---- xxhash --------------------------------------------------------------------------------------

describe('POST /fs/xxhash', () => {
  it('hashes the files named, odd names (space, tab, backslash, unicode, `: `, `) = `, leading dash or space) exactly', async () => {
    // The recorded run also hashed names with a newline and a CR; paths with line breaks are
    // refused by every route (core absolutePath), so this replays the same run without those
    // two (xxhsum hashes each file on its own: the other lines are unchanged).
    const rec = recorded('xxhsum', 'odd-names-h1');
    const all = rec.argv.slice(2);
    const files = all.filter((f) => !/[\r\n]/.test(f));
    const sums = parseXxhsumSums(rec.stdout, { fileNames: all }).filter((x) => files.includes(x.fileName));
    const argv = ['/usr/bin/xxhsum', '--', ...files];
    use(fixture(argv, sums.map((x) => `${x.hash}  ${x.fileName}\n`).join(''), { stderr: rec.stderr }));
    const r = await t.call<XxhashAnswer>('POST', '/api/v2/fs/xxhash', { body: { filenames: files } });
    expect(r.status, r.text).toBe(200);
    expect(argvs()).toEqual([argv]);
    expect(r.json.sums.map((x: { fileName: string }) => x.fileName)).toEqual(files);
    expect(r.json.sums).toContainEqual({ hash: 'e4c191d091bd8853', fileName: '/tmp/ballast-fixtures/data/a.txt' });
    expect(r.json.sums).toContainEqual({
      hash: '5cd4f70adc8ca228',
      fileName: '/tmp/ballast-fixtures/data/paren) = x.txt',
    });
    expect(r.json.sums).toContainEqual({ hash: '77b663aa899d65d0', fileName: '/tmp/ballast-fixtures/data/ lead.txt' });
  });

  it('a name with a line break is refused before anything runs', async () => {
    use();
    const r = await t.call<XxhashAnswer>('POST', '/api/v2/fs/xxhash', { body: { filenames: ['/data/new\nline.txt'] } });
    expect(errorOf(r).issues).toEqual([{ path: 'body.filenames.0', message: 'must not contain a line break' }]);
    expect(argvs()).toEqual([]);
  });

  it('fileNames (the spec example key) and an algorithm option', async () => {
    const rec = recorded('xxhsum', 'h2-two-files');
    use(rec);
    const files = rec.argv.slice(rec.argv.indexOf('--') + 1);
    const r = await t.call<XxhashAnswer>('POST', '/api/v2/fs/xxhash', { body: { fileNames: files, options: ['-H2'] } });
    expect(r.status, r.text).toBe(200);
    expect(argvs()).toEqual([rec.argv]);
    expect(r.json.sums).toHaveLength(2);
    expect(r.json.sums.every((s: { hash: string }) => /^[0-9a-f]{32}$/.test(s.hash))).toBe(true);
  });

  it('a missing file is a 404 naming it (not a 5xx); a directory is a 400', async () => {
    const gone = recorded('xxhsum', 'missing-file');
    use(gone);
    const r = await t.call<XxhashAnswer>('POST', '/api/v2/fs/xxhash', { body: { filenames: gone.argv.slice(2) } });
    expect(r.status).toBe(404);
    expect(errorOf(r).message).toBe('cannot hash /tmp/ballast-fixtures/data/gone.txt (No such file or directory)');
    expect(errorOf(r).details).toEqual({
      files: [{ fileName: '/tmp/ballast-fixtures/data/gone.txt', reason: 'No such file or directory' }],
    });

    const dir = recorded('xxhsum', 'directory');
    use(dir);
    const d = await t.call<XxhashAnswer>('POST', '/api/v2/fs/xxhash', {
      body: { filenames: ['/tmp/ballast-fixtures/data'] },
    });
    expect(d.status).toBe(400);
    expect(errorOf(d).message).toBe('cannot hash /tmp/ballast-fixtures/data (Is a directory)');
  });

  it('refuses relative names, unknown options, two algorithms, both keys', async () => {
    use();
    const issues = async (body: unknown) =>
      errorOf(await t.call<XxhashAnswer>('POST', '/api/v2/fs/xxhash', { body })).issues!;
    expect((await issues({ filenames: ['a.txt'] }))[0]).toEqual({
      path: 'body.filenames.0',
      message: 'must be an absolute path',
    });
    expect((await issues({ filenames: ['/a'], options: ['--files-from'] }))[0].message).toMatch(
      /^option "--files-from" is not allowed for generate/,
    );
    expect((await issues({ filenames: ['/a'], options: ['-H0', '-H2'] }))[0].message).toBe(
      'option "-H2": only one algorithm (-H) may be given',
    );
    expect((await issues({ filenames: ['/a'], fileNames: ['/a'] }))[0].message).toBe(
      'give either filenames or fileNames, not both',
    );
    expect((await issues({}))[0]).toEqual({ path: 'body.filenames', message: 'required' });
    expect(argvs()).toEqual([]);
  });
});

// ---- xxhash_verify -------------------------------------------------------------------------------

describe('POST /fs/xxhash_verify', () => {
  const CHECK = ['/usr/bin/xxhsum', '-c'];

  it('reads the checksum file, hands exactly its text to xxhsum -c on stdin, answers per-file results', async () => {
    const text =
      'e4c191d091bd8853  /data/a.txt\n0000000000000000  /data/file with spaces.txt\ne4c191d091bd8853  /data/gone.txt\n';
    const sums = join(base, 'check.xxh');
    writeFileSync(sums, text);
    // xxhsum 0.8.1 output for this list read from stdin (it names stdin `stdin`)
    use(
      fixture(
        CHECK,
        "/data/a.txt: OK\n/data/file with spaces.txt: FAILED\nstdin:3: Could not open or read '/data/gone.txt': No such file or directory.\n1 listed file could not be read\n1 computed checksum did NOT match\n",
        {
          code: 1,
        },
      ),
    );
    const r = await t.call('POST', '/api/v2/fs/xxhash_verify', { body: { checksumFile: sums } });
    expect(r.status, r.text).toBe(200);
    expect(r.json).toEqual({
      results: [
        { fileName: '/data/a.txt', result: 'OK' },
        { fileName: '/data/file with spaces.txt', result: 'FAILED' },
        { fileName: '/data/gone.txt', result: 'FAILED open or read' },
      ],
      verified: false,
    });
    expect(argvs()).toEqual([CHECK]);
    expect(backend.stdins).toEqual([text]);
  });

  it('verified is true when every line is OK; verify options go before the list', async () => {
    const sums = join(base, 'ok.xxh');
    writeFileSync(sums, 'e4c191d091bd8853  /data/a.txt\n');
    use(fixture([...CHECK, '--strict'], '/data/a.txt: OK\n'));
    const r = await t.call('POST', '/api/v2/fs/xxhash_verify', { body: { checksumFile: sums, options: ['--strict'] } });
    expect(r.json).toEqual({ results: [{ fileName: '/data/a.txt', result: 'OK' }], verified: true });
  });

  it('a relative name is a 400 naming its line, and xxhsum never runs', async () => {
    const sums = join(base, 'relative.xxh');
    writeFileSync(sums, 'e4c191d091bd8853  /data/a.txt\nd356afc314dae2a8  data/b.txt\n');
    use();
    const r = await t.call('POST', '/api/v2/fs/xxhash_verify', { body: { checksumFile: sums } });
    expect(r.status).toBe(400);
    expect(errorOf(r).message).toBe(`checksum file ${sums}: line 2: file name "data/b.txt" is not an absolute path`);
    expect(errorOf(r).details).toEqual({ reason: 'relative-file-name' });
    expect(argvs()).toEqual([]);
  });

  it('the checksum file: missing 404, outside the read roots 403, a directory 400; options whitelisted', async () => {
    use();
    const call = (body: unknown) => t.call('POST', '/api/v2/fs/xxhash_verify', { body });
    expect((await call({ checksumFile: join(base, 'nope.xxh') })).status).toBe(404);
    expect((await call({ checksumFile: '/etc/passwd' })).status).toBe(403);
    expect((await call({ checksumFile: tree })).status).toBe(400);
    expect(errorOf(await call({ checksumFile: join(base, 'ok.xxh'), options: ['-H2'] })).issues![0].message).toMatch(
      /not allowed for verify/,
    );
    expect(argvs()).toEqual([]);
  });
});
