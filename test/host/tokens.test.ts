/**
 * Token rules (README "Auth"): a permission names an area some route declares, or is `*`; an
 * expiry is at most MAX_TOKEN_DAYS ahead; `token list` shows every stored row, whatever it holds.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { writeFileSync } from 'node:fs';
import { stringify } from 'yaml';
import { openDatabase, type SqliteDb } from '../../runtime/db/database';
import { readManifest } from '../../runtime/host';
import { createToken, listTokens, MAX_TOKEN_DAYS, parseExpiry, permissionAreas } from '../../runtime/tokens';
import { distDir, repo } from '../helpers/host';
import { privateDir } from '../helpers/tmp';

const cli = join(repo, 'dist/host/cli.mjs');
const DAY = 86_400_000;
const AREAS = [
  'audit',
  'certificate',
  'dfs',
  'fs',
  'kerberos',
  'keys',
  'metrics',
  'network',
  'notification',
  'pod',
  's3',
  'tokens',
];

let db: SqliteDb | undefined;
afterEach(() => {
  db?.close();
  db = undefined;
});
const freshDb = () => (db = openDatabase(':memory:'));

function run(args: string[]) {
  const dir = privateDir('ballast-tokens');
  const cfg = join(dir, 'config.yaml');
  writeFileSync(cfg, stringify({ stateDir: dir }));
  const r = (more: string[]) =>
    spawnSync(process.execPath, [cli, 'token', ...more, '--config', cfg], { encoding: 'utf8' });
  return { first: r(args), again: r, dbFile: join(dir, 'ballast.db') };
}

describe('permission areas', () => {
  it('are the areas the built routes declare permissions for', () => {
    expect(permissionAreas(readManifest(distDir))).toEqual(AREAS);
    expect(permissionAreas([{ permission: 'b:read' }, { permission: 'a:manage' }, { permission: 'b:manage' }])).toEqual(
      ['a', 'b'],
    );
  });

  it.each([['nosucharea:read'], ['traffic:manage'], ['fsx:read'], ['f:read']])(
    'createToken with the areas refuses %s, naming the areas',
    async (perm) => {
      await expect(createToken(freshDb(), 'x', [perm], null, AREAS)).rejects.toThrow(
        `bad permission ${perm}: no route has area ${perm.split(':')[0]} (areas: ${AREAS.join(', ')})`,
      );
      expect(listTokens(db!)).toEqual([]);
    },
  );

  it.each([['*'], ['fs:read'], ['s3:manage'], ['certificate:read']])(
    'createToken with the areas takes %s',
    async (p) => {
      await createToken(freshDb(), 'x', [p], null, AREAS);
      expect(listTokens(db!)[0].permissions).toEqual([p]);
    },
  );

  it.each([['fs:write'], ['fs'], ['*:read'], ['fs:read:x'], ['FS:read'], ['']])(
    '%j is no permission at all',
    async (p) => {
      await expect(createToken(freshDb(), 'x', [p], null, AREAS)).rejects.toThrow(
        `bad permission ${p}: use <area>:read`,
      );
    },
  );
});

describe('token expiry', () => {
  it(`is at most ${MAX_TOKEN_DAYS} days ahead`, async () => {
    expect(MAX_TOKEN_DAYS).toBe(3650);
    const now = Date.now();
    await createToken(freshDb(), 'edge', ['*'], parseExpiry(`${MAX_TOKEN_DAYS}d`));
    const at = Date.parse(listTokens(db!)[0].expiresAt!);
    expect(at - now).toBeGreaterThanOrEqual(MAX_TOKEN_DAYS * DAY);
    expect(at - now).toBeLessThan(MAX_TOKEN_DAYS * DAY + 60_000);
    for (const expiry of [
      parseExpiry(`${MAX_TOKEN_DAYS + 1}d`),
      Date.now() + MAX_TOKEN_DAYS * DAY + 60_000,
      parseExpiry('99999999d'),
      parseExpiry('9'.repeat(400) + 'd'), // Infinity
      Number.NaN,
      parseExpiry('+275760-09-13T00:00:00.000Z'),
    ])
      await expect(createToken(db!, 'far', ['*'], expiry), String(expiry)).rejects.toThrow(
        `expiry must be at most ${MAX_TOKEN_DAYS} days (10 years) ahead`,
      );
    await expect(createToken(db!, 'past', ['*'], Date.now() - 1)).rejects.toThrow('expiry must be in the future');
    expect(listTokens(db!).map((t) => t.name)).toEqual(['edge']);
  });
});

describe('token list', () => {
  it('shows every row, a row whose values no Date or JSON can hold as "invalid (raw)"', async () => {
    const d = freshDb();
    await createToken(d, 'good', ['fs:read'], parseExpiry('30d'));
    await createToken(d, 'bad', ['*']);
    // what `--expires 99999999d` stored before expiries were bounded, and rows edited by hand
    d.prepare('UPDATE api_tokens SET expires_at = ?, last_used_at = ?, revoked_at = ? WHERE name = ?').run(
      Date.now() + 99_999_999 * DAY,
      8.64e15 + 1,
      'yesterday',
      'bad',
    );
    await createToken(d, 'worse', ['*']);
    d.prepare("UPDATE api_tokens SET permissions = '{nope', created_at = -9e15 WHERE name = 'worse'").run();
    const rows = listTokens(d);
    expect(rows.map((t) => t.name)).toEqual(['worse', 'good', 'bad']);
    const [worse, good, bad] = rows;
    expect(good.permissions).toEqual(['fs:read']);
    expect(Date.parse(good.expiresAt!)).toBeGreaterThan(Date.now());
    expect(bad).toMatchObject({
      permissions: ['*'],
      expiresAt: expect.stringMatching(/^invalid \(86\d{14}\)$/),
      lastUsedAt: 'invalid (8640000000000001)',
      revokedAt: 'invalid (yesterday)',
    });
    expect(worse).toMatchObject({ permissions: ['invalid ({nope)'], createdAt: 'invalid (-9000000000000000)' });
  });
});

describe('ballast token (the CLI)', () => {
  it('refuses a permission naming no route area, and creates nothing', () => {
    const { first, again } = run(['create', 'ui', '--perm', 'fs:read', '--perm', 'nosucharea:read']);
    expect(first.status).toBe(1);
    expect(first.stderr).toBe(
      `ballast: bad permission nosucharea:read: no route has area nosucharea (areas: ${AREAS.join(', ')})\n`,
    );
    expect(JSON.parse(again(['list', '--json']).stdout)).toEqual([]);
  });

  it('refuses an expiry past 10 years; list still works', () => {
    const { first, again } = run(['create', 'ui', '--perm', '*', '--expires', '99999999d']);
    expect(first.status).toBe(1);
    expect(first.stderr).toBe(`ballast: expiry must be at most ${MAX_TOKEN_DAYS} days (10 years) ahead\n`);
    expect(again(['create', 'ok', '--perm', 'pod:manage', '--expires', `${MAX_TOKEN_DAYS}d`]).status).toBe(0);
    const list = again(['list']);
    expect(list.status).toBe(0);
    expect(list.stdout).toMatch(
      /^[0-9a-f]{12} {2}ok {2}pod:manage {2}created \S+Z {2}expires \S+Z {2}last used never\n$/,
    );
  });

  it('lists a row with an unrepresentable expiry (stored by an older version) next to the others', () => {
    const { first, again, dbFile } = run(['create', 'old', '--perm', '*']);
    expect(first.status).toBe(0);
    expect(again(['create', 'new', '--perm', 'fs:read']).status).toBe(0);
    const d = openDatabase(dbFile);
    d.prepare("UPDATE api_tokens SET expires_at = 8640000000000001 WHERE name = 'old'").run();
    d.close();
    const text = again(['list']);
    expect(text.stderr).toBe('');
    expect(text.status).toBe(0);
    expect(text.stdout.split('\n')[0]).toContain('  old  *  created ');
    expect(text.stdout.split('\n')[0]).toContain('  expires invalid (8640000000000001)  ');
    expect(text.stdout.split('\n')[1]).toContain('  new  fs:read  created ');
    const json = again(['list', '--json']);
    expect(json.status).toBe(0);
    expect(
      (JSON.parse(json.stdout) as { name: string; expiresAt: string }[]).map((t) => [t.name, t.expiresAt]),
    ).toEqual([
      ['old', 'invalid (8640000000000001)'],
      ['new', null],
    ]);
  });
});
