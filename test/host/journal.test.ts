/**
 * The intent journal (runtime/system/journal.ts) call by call: what begin keeps, what step and
 * end accept, what rollBack does with each kept file and undo command, and in which order.
 * journal-recovery.test.ts runs the whole story through a host killed with SIGKILL.
 */
import { chmodSync, mkdirSync, readFileSync, rmSync, statSync, symlinkSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openDatabase, type SqliteDb } from '../../runtime/db/database';
import { ConfinedFiles } from '../../runtime/system/files';
import { IntentJournal } from '../../runtime/system/journal';
import { privateDir } from '../helpers/tmp';

let dir = '';
let root = '';
let db: SqliteDb;
let journal: IntentJournal;

beforeEach(() => {
  dir = privateDir('journal');
  root = join(dir, 'etc');
  mkdirSync(join(dir, 'ro'), { recursive: true });
  mkdirSync(root);
  const files = new ConfinedFiles(
    [
      { path: root, writable: true },
      { path: join(dir, 'ro'), writable: false },
    ],
    join(dir, 'backups'),
  );
  db = openDatabase(join(dir, 'ballast.db'));
  journal = new IntentJournal(db, files);
});
afterEach(() => db.close());

const rows = () => db.prepare('SELECT id, area, request_id, files, undo FROM intents ORDER BY id').all();
const modeOf = (p: string) => statSync(p).mode & 0o7777;

/** What a call threw, as `code: message` (a refusal that is not a SystemRefusal has no code). */
async function refusal(f: () => unknown): Promise<string> {
  try {
    await f();
  } catch (e) {
    return `${(e as { code?: string }).code}: ${(e as Error).message}`;
  }
  return 'no refusal';
}

describe('begin', () => {
  it('keeps each file as it is (real path, bytes, permission bits) and a missing one as null', async () => {
    writeFileSync(join(root, 'a.conf'), 'old\n');
    chmodSync(join(root, 'a.conf'), 0o2640);
    symlinkSync(root, join(dir, 'link'));
    const before = Date.now();
    expect(await journal.begin('network', [join(dir, 'link', 'a.conf'), join(root, 'b.conf')], 'req-1')).toEqual({
      id: 1,
    });
    expect(await journal.begin('s3', [], undefined)).toEqual({ id: 2 });
    expect(rows()).toEqual([
      {
        id: 1,
        area: 'network',
        request_id: 'req-1',
        files: JSON.stringify([
          { path: join(root, 'a.conf'), content: 'old\n', mode: 0o2640 },
          { path: join(root, 'b.conf'), content: null },
        ]),
        undo: '[]',
      },
      { id: 2, area: 's3', request_id: null, files: '[]', undo: '[]' },
    ]);
    const { at } = db.prepare('SELECT started_at AS at FROM intents WHERE id = 1').get() as { at: number };
    expect(at).toBeGreaterThanOrEqual(before);
    expect(at).toBeLessThanOrEqual(Date.now());
  });

  it('takes an area name only', async () => {
    for (const area of ['a', 'fs', 's3', 'network'])
      expect([area, await refusal(() => journal.begin(area, [], undefined))]).toEqual([area, 'no refusal']);
    for (const area of [5, ['fs'], '', 'Fs', '3s', 'fs-x', 'fs.', ' fs', 'fs\n'])
      expect([area, await refusal(() => journal.begin(area, [], undefined))]).toEqual([
        area,
        'bad_request: journal: area must be an area name',
      ]);
  });

  it('takes a list of paths only, each writable and inside a root', async () => {
    for (const files of ['/etc/a', [join(root, 'a'), 1], [1], null])
      expect(await refusal(() => journal.begin('fs', files, undefined))).toBe(
        'bad_request: journal: files must be a list of paths',
      );
    expect(await refusal(() => journal.begin('fs', [join(dir, 'ro', 'x')], undefined))).toBe(
      `forbidden: path is read-only for this service: ${join(dir, 'ro', 'x')}`,
    );
    expect(await refusal(() => journal.begin('fs', [`${root}2/x`], undefined))).toBe(
      `forbidden: path is outside the locations this service manages: ${root}2/x`,
    );
    expect(rows()).toEqual([]);
  });
});

describe('step and end', () => {
  it('appends each step to its intent; end removes it once', async () => {
    const { id } = await journal.begin('fs', [], 'r');
    const other = (await journal.begin('fs', [], 'r')).id;
    expect(journal.step(id, [['/bin/a', '1'], ['/bin/b']])).toEqual({ recorded: true });
    expect(journal.step(id, [])).toEqual({ recorded: true });
    expect(journal.step(id, [[]])).toEqual({ recorded: true });
    expect(journal.step(other, [['/bin/c']])).toEqual({ recorded: true });
    expect(rows().map((r) => (r as { undo: string }).undo)).toEqual([
      JSON.stringify([[['/bin/a', '1'], ['/bin/b']], [], [[]]]),
      JSON.stringify([[['/bin/c']]]),
    ]);
    expect(journal.end(id)).toEqual({ ended: true });
    expect(journal.end(id)).toEqual({ ended: false });
    expect(rows().map((r) => (r as { id: number }).id)).toEqual([other]);
  });

  it('refuses what is not an id or a list of argv, and an intent that is not open', async () => {
    const { id } = await journal.begin('fs', [], 'r');
    const bad = 'bad_request: journal: undo must be a list of argv';
    expect(await refusal(() => journal.step(String(id), [['/bin/a']]))).toBe(
      'bad_request: journal: id must be a number',
    );
    for (const undo of [null, '/bin/a', ['/bin/a'], [['/bin/a'], '/bin/b'], [['/bin/a', 1]], [[1, 2]]])
      expect([undo, await refusal(() => journal.step(id, undo))]).toEqual([undo, bad]);
    expect(await refusal(() => journal.step(id + 7, [['/bin/a']]))).toBe(
      `not_found: journal: no open intent ${id + 7}`,
    );
    expect(await refusal(() => journal.end(String(id)))).toBe('bad_request: journal: id must be a number');
    expect(rows()).toEqual([{ id, area: 'fs', request_id: 'r', files: '[]', undo: '[]' }]);
  });
});

describe('rollBack (recover at start, rollBackRequest for a cancelled job)', () => {
  it('newest intent first; its files first, then its steps newest first, each step in order', async () => {
    const a = join(root, 'a.conf');
    const b = join(root, 'b.conf');
    writeFileSync(a, 'old\n', { mode: 0o640 });
    const one = (await journal.begin('fs', [a], 'r1')).id;
    journal.step(one, [
      ['/u', '1a'],
      ['/u', '1b'],
    ]);
    journal.step(one, [['/u', '2']]);
    writeFileSync(a, 'mid\n');
    chmodSync(a, 0o600);
    const two = (await journal.begin('network', [a, b], 'r2')).id;
    journal.step(two, [['/u', '3']]);
    writeFileSync(a, 'new\n');
    writeFileSync(b, 'made\n');
    // what the files hold when each command runs: restored before the commands of their intent
    const ran: string[] = [];
    const got = await new IntentJournal(db, new ConfinedFiles([{ path: root, writable: true }], dir)).recover(
      async (argv) => {
        ran.push(`${argv[1]} ${readFileSync(a, 'utf8').trim()}`);
        return { code: 0, stderr: '' };
      },
    );
    expect(ran).toEqual(['3 mid', '2 old', '1a old', '1b old']);
    expect(got).toEqual([
      { id: two, area: 'network', requestId: 'r2', files: [a, b], undone: [['/u', '3']], failed: [] },
      {
        id: one,
        area: 'fs',
        requestId: 'r1',
        files: [a],
        undone: [
          ['/u', '2'],
          ['/u', '1a'],
          ['/u', '1b'],
        ],
        failed: [],
      },
    ]);
    expect([readFileSync(a, 'utf8'), modeOf(a)]).toEqual(['old\n', 0o640]);
    expect(() => statSync(b)).toThrow(/ENOENT/);
    expect(rows()).toEqual([]);
    expect(await journal.recover(async () => ({ code: 0, stderr: '' }))).toEqual([]);
  });

  it('a step that fails or throws, and a file that cannot be put back, are reported; the rest goes on', async () => {
    const a = join(root, 'a.conf');
    const gone = join(root, 'gone.conf');
    writeFileSync(a, 'old\n');
    const { id } = await journal.begin('fs', [a, gone, join(root, 'b.conf')], 'r');
    journal.step(id, [
      ['/u', 'ok'],
      ['/u', 'fails'],
      ['/u', 'quiet'],
      ['/u', 'throws'],
      ['/u', 'throws-text'],
    ]);
    unlinkSync(a);
    mkdirSync(a);
    mkdirSync(gone);
    writeFileSync(join(root, 'b.conf'), 'made\n');
    const [rec] = await journal.recover(async (argv) => {
      if (argv[1] === 'throws') throw new Error('spawn failed');
      if (argv[1] === 'throws-text') throw 'not an error';
      if (argv[1] === 'fails') return { code: 2, stderr: '\n  rmdir: no such directory\nmore\n' };
      if (argv[1] === 'quiet') return { code: 1, stderr: '' };
      return { code: 0, stderr: '' };
    });
    expect(rec).toEqual({
      id,
      area: 'fs',
      requestId: 'r',
      files: [join(root, 'b.conf')],
      undone: [['/u', 'ok']],
      failed: [
        { step: `restore ${a}`, error: `is a directory: ${a}` },
        { step: `restore ${gone}`, error: `is a directory: ${gone}` },
        { step: '/u fails', error: 'rmdir: no such directory' },
        { step: '/u quiet', error: '' },
        { step: '/u throws', error: 'spawn failed' },
        { step: '/u throws-text', error: 'not an error' },
      ],
    });
    expect(rows()).toEqual([]);
    rmSync(a, { recursive: true });
  });

  it("rollBackRequest takes back only that request's intents, newest first", async () => {
    const a = join(root, 'a.conf');
    writeFileSync(a, 'v0\n');
    const ids: number[] = [];
    for (const [i, req] of ['job-1', 'job-2', 'job-1'].entries()) {
      const { id } = await journal.begin('fs', [a], req);
      journal.step(id, [['/u', String(id)]]);
      writeFileSync(a, `v${i + 1}\n`);
      ids.push(id);
    }
    const ran: string[] = [];
    const got = await journal.rollBackRequest('job-1', async (argv) => {
      ran.push(argv[1]);
      return { code: 0, stderr: '' };
    });
    expect(ran).toEqual([String(ids[2]), String(ids[0])]);
    expect(got.map((r) => [r.id, r.requestId])).toEqual([
      [ids[2], 'job-1'],
      [ids[0], 'job-1'],
    ]);
    // job-1's first intent kept v0, its last v2: v0 is put back last
    expect(readFileSync(a, 'utf8')).toBe('v0\n');
    expect(rows().map((r) => (r as { id: number }).id)).toEqual([ids[1]]);
    expect(await journal.rollBackRequest('job-3', async () => ({ code: 0, stderr: '' }))).toEqual([]);
  });
});
