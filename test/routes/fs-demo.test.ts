/**
 * The demo appliance (npm start) answers the fs routes from fixtures/demo/fs: every request of
 * fixtures/demo/fs/README.md's table gets the documented answer, so the fixtures match, argv for
 * argv, what the routes run. explore and the checksum reader stay inside the demo root.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ExploreEntry } from '../../handlers/fs/responses';
import availableFs from '../../handlers/fs/routes/available-fs';
import explore from '../../handlers/fs/routes/explore';
import makeDirectory from '../../handlers/fs/routes/make-directory';
import makeFilesystem from '../../handlers/fs/routes/make-filesystem';
import mount from '../../handlers/fs/routes/mount';
import setPermissions from '../../handlers/fs/routes/set-permissions';
import unmount from '../../handlers/fs/routes/unmount';
import xxhash from '../../handlers/fs/routes/xxhash';
import xxhashVerify from '../../handlers/fs/routes/xxhash-verify';
import { makeDemoHost, type TestHost } from '../helpers/host';
import { errorOf } from '../helpers/answers';

const ROUTES = [
  availableFs,
  explore,
  makeDirectory,
  makeFilesystem,
  mount,
  setPermissions,
  unmount,
  xxhash,
  xxhashVerify,
];

let d: TestHost;

beforeAll(async () => {
  d = await makeDemoHost({ routes: ROUTES });
});
afterAll(async () => {
  await d?.close();
});

async function post<T = unknown>(path: string, body: unknown) {
  const r = await d.call<T>('POST', `/api/v2/fs/${path}`, { body });
  return { status: r.status, json: r.json };
}

describe('the demo appliance', () => {
  it('makes filesystems on its blank disk and refuses the mounted and the partitioned ones', async () => {
    const ext4 = await post('make_filesystem', { device: '/dev/sdc', type: 'ext4' });
    expect(ext4.status).toBe(200);
    expect(ext4.json).toMatch(
      /^mke2fs 1\.47\.0 \(5-Feb-2023\)\nDiscarding device blocks: done\nCreating filesystem with 976754646 4k blocks/,
    );
    const xfs = await post('make_filesystem', { device: '/dev/sdc', type: 'xfs', options: ['-L', 'archive'] });
    expect(xfs.json).toMatch(/^meta-data=\/dev\/sdc/);
    const sdb = await post('make_filesystem', { device: '/dev/sdb', type: 'ext4' });
    expect([sdb.status, errorOf(sdb).message]).toEqual([
      409,
      'cannot create a filesystem on /dev/sdb: /dev/sdb is mounted at "/srv/data"',
    ]);
    const sda = await post('make_filesystem', { device: '/dev/sda', type: 'ext4', force: true });
    expect(sda.status).toBe(409);
    expect(errorOf(sda).details).toEqual({ reason: 'in-use' });
  });

  it('mounts, unmounts, makes directories, sets ACLs and hashes files', async () => {
    expect((await post('mount', { device: '/dev/sdc', mountpoint: '/srv/scratch' })).json).toBe(
      'Mounted /dev/sdc on /srv/scratch',
    );
    expect((await post('unmount', { mountpoint: '/srv/data' })).json).toBe('Unmounted /dev/sdb from /srv/data');
    expect((await post('unmount', { mountpoint: '/srv/scratch' })).status).toBe(409);
    expect(
      (await post('make_directory', { destination: '/srv/data/projects', options: ['-m', '2770', '-g', 'staff'] }))
        .json,
    ).toEqual({ destination: '/srv/data/projects' });
    expect((await post('make_directory', { destination: '/srv/scratch' })).json).toEqual({
      destination: '/srv/scratch',
    });
    const acl = { path: '/srv/data/projects', acls: ['u:backup:rwx', 'g:staff:rwx'] };
    expect((await post('set_permissions', acl)).json).toBe(
      'ACL of /srv/data/projects set: user:backup:rwx,group:staff:rwx',
    );
    expect((await post('set_permissions', { ...acl, test: true })).json).toBe(
      '/srv/data/projects: u::rwx,u:backup:rwx,g::rwx,g:staff:rwx,m::rwx,o::---,*\n',
    );
    const files = ['/srv/data/projects/report.pdf', '/srv/data/projects/meeting notes.txt'];
    expect((await post('xxhash', { fileNames: files })).json).toEqual({
      sums: [
        { hash: '8f2c1d9e4b7a6035', fileName: files[0] },
        { hash: '1e5a9c3f7d2b8046', fileName: files[1] },
      ],
    });
    // the seeded checksum file, at /srv/data/projects.xxh as the demo sees it (var/demo/root/srv/data)
    expect((await post('xxhash_verify', { checksumFile: '/srv/data/projects.xxh' })).json).toEqual({
      results: [
        { fileName: files[0], result: 'OK' },
        { fileName: files[1], result: 'FAILED' },
      ],
      verified: false,
    });
  });

  it('explores its own /srv/data (var/demo/root/srv/data), and nothing outside its srv/', async () => {
    const r = await post<{ files: ExploreEntry[] }>('explore', { fs_path: '/srv/data', depth: 2 });
    expect(r.status).toBe(200);
    const projects = r.json.files.find((f) => f.name === 'projects');
    expect(projects?.path).toBe('/srv/data/projects');
    expect(projects?.children.map((c) => [c.name, c.path, c.size]).sort()).toEqual([
      ['meeting notes.txt', '/srv/data/projects/meeting notes.txt', 93],
      ['report.pdf', '/srv/data/projects/report.pdf', 63],
    ]);
    // the demo's /etc exists (var/demo/root/etc) but is outside the read roots; names as requested
    const etc = await post<{ error: { message: string } }>('explore', { fs_path: '/etc' });
    expect([etc.status, etc.json.error.message]).toEqual([
      403,
      '/etc is outside the directories explore may read (settings.fs.readRoots)',
    ]);
    expect((await post('xxhash_verify', { checksumFile: '/etc/krb5.conf' })).status).toBe(403);
    // `..` is refused by the schema; a missing path is named as requested, not as the demo's real path
    expect((await post('explore', { fs_path: '/../../../../etc' })).status).toBe(400);
    const missing = await post<{ error: { message: string } }>('explore', { fs_path: '/srv/data/nosuch' });
    expect([missing.status, missing.json.error.message]).toEqual([404, '/srv/data/nosuch does not exist']);
  });
});
