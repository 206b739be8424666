/**
 * Route tier: one owner per path (runtime/system/owners.ts). On the default layout moved under a
 * private root (fs and S3 roots `<root>/srv` and `<root>/mnt`, pod data `<root>/srv/pods`), the
 * fs routes, an S3 share and a keys home never reach another area's managed paths or the host's
 * own: 403 naming the owner, nothing run; a sibling that only shares a prefix is not refused; the
 * host logs each root that reaches another owner's path at start.
 */
import { mkdirSync, readFileSync, realpathSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { RouteModule } from '../../handlers/core/route';
import explore from '../../handlers/fs/routes/explore';
import mount from '../../handlers/fs/routes/mount';
import setPermissions from '../../handlers/fs/routes/set-permissions';
import unmount from '../../handlers/fs/routes/unmount';
import pub from '../../handlers/keys/routes/pub';
import s3Create from '../../handlers/s3/routes/create';
import { areaPaths } from '../../runtime/areas/index';
import { ManagedPaths } from '../../runtime/system/owners';
import { errorOf } from '../helpers/answers';
import { fixture, makeTestHost, repo, type TestHost } from '../helpers/host';
import { SwitchableReplay } from './fs-helpers';

const ROUTES: RouteModule[] = [setPermissions, mount, unmount, explore, s3Create, pub];
const SETFACL = '/usr/bin/setfacl';
const GETENT = '/usr/bin/getent';

let t: TestHost;
const backend = new SwitchableReplay();
const logLines: string[] = [];
/** real paths: <state>/root/srv, its pod data, and the state directory */
let srv: string;
let pods: string;
let state: string;

beforeAll(async () => {
  t = await makeTestHost({
    routes: ROUTES,
    backend,
    log: (l) => logLines.push(l),
    configure: (config, root) => {
      const roots = [join(root, 'srv'), join(root, 'mnt')];
      config.settings = {
        ...config.settings,
        // mounts anywhere in the private root: a mount on <root>/srv would hide the pod data
        fs: { mountRoots: [root], writeRoots: [...roots, config.stateDir], readRoots: roots },
        // share paths are seen from the private root, as the demo does: `/srv/pods` is <root>/srv/pods
        s3: { pathRoot: root },
        keys: { apiUser: 'svc', group: null, homeRoots: [join(root, 'home'), join(root, 'srv')] },
      };
      for (const d of ['srv/pods/ballast-pod-web', 'srv/pods2', 'srv/pod', 'srv/data', 'mnt', 'home'])
        mkdirSync(join(root, d), { recursive: true });
      writeFileSync(join(root, 'srv/pods/ballast-pod-web/compose.json'), '{}');
    },
  });
  srv = realpathSync(join(t.root, 'srv'));
  pods = realpathSync(t.config.paths.podData);
  state = realpathSync(t.config.stateDir);
});
afterAll(() => t.close());
beforeEach(() => backend.use([]));

const post = (path: string, body: unknown) => t.call('POST', `/api/v2${path}`, { body });
const ran = () => backend.calls().map((c) => c.argv);

/** a 403 whose message names the owner, with nothing run */
async function expectRefused(path: string, body: unknown, message: RegExp) {
  const r = await post(path, body);
  expect(r.status, r.text).toBe(403);
  const e = errorOf(r);
  expect(e.code).toBe('forbidden');
  expect(e.message).toMatch(message);
  expect(ran()).toEqual([]);
}

describe('fs routes never reach another area', () => {
  it('refuses an ACL on a pod file, naming the pod area', async () => {
    const file = join(pods, 'ballast-pod-web/compose.json');
    await expectRefused(
      '/fs/set_permissions',
      { path: file, acls: ['u:nobody:rwx'] },
      new RegExp(`^${file} belongs to the pod area \\(paths\\.podData\\); the fs area may not touch it$`),
    );
  });

  it('refuses a mount onto the pod data directory', async () => {
    await expectRefused(
      '/fs/mount',
      { device: '/dev/sdc', mountpoint: pods },
      /belongs to the pod area \(paths\.podData\); the fs area may not touch it/,
    );
  });

  it('refuses a mount or an unmount on a directory that holds pod data (a mount hides the tree)', async () => {
    const message = new RegExp(`^${srv} contains ${pods}, which belongs to the pod area \\(paths\\.podData\\)`);
    await expectRefused('/fs/mount', { device: '/dev/sdc', mountpoint: srv }, message);
    await expectRefused('/fs/unmount', { mountpoint: srv }, message);
  });

  it('refuses a recursive ACL on an ancestor that holds pod data', async () => {
    await expectRefused(
      '/fs/set_permissions',
      { path: srv, acls: ['u:nobody:rwx'], recursive: true },
      new RegExp(`^${srv} contains ${pods}, which belongs to the pod area \\(paths\\.podData\\)`),
    );
  });

  it('refuses a walk of a tree holding pod data, and one of the pod data itself', async () => {
    const r = await post('/fs/explore', { fs_path: srv });
    expect(r.status, r.text).toBe(403);
    expect(errorOf(r).message).toMatch(/contains .*srv\/pods, which belongs to the pod area/);
    const p = await post('/fs/explore', { fs_path: pods });
    expect(p.status, p.text).toBe(403);
    expect(errorOf(p).message).toMatch(/belongs to the pod area/);
    const ok = await post('/fs/explore', { fs_path: join(srv, 'data') });
    expect(ok.status, ok.text).toBe(200);
  });

  it("refuses the host's own files even where a root reaches them (a root equal to the state directory)", async () => {
    await expectRefused(
      '/fs/set_permissions',
      { path: join(state, 'backups'), acls: ['u:nobody:rwx'] },
      /belongs to the host \(stateDir\); the fs area may not touch it/,
    );
    await expectRefused(
      '/fs/set_permissions',
      { path: join(state, 'ballast.db'), acls: ['u:nobody:rwx'] },
      /belongs to the host \(the database\)/,
    );
  });

  it('does not refuse a sibling sharing a prefix (/srv/pods2, /srv/pod against /srv/pods)', async () => {
    const sibling = join(srv, 'pods2');
    const prefix = join(srv, 'pod');
    backend.use([
      fixture([SETFACL, '-m', 'user:nobody:rwx', '--', sibling], ''),
      fixture([SETFACL, '-R', '-m', 'user:nobody:rwx', '--', prefix], ''),
    ]);
    const a = await post('/fs/set_permissions', { path: sibling, acls: ['u:nobody:rwx'] });
    expect(a.status, a.text).toBe(200);
    const b = await post('/fs/set_permissions', { path: prefix, acls: ['u:nobody:rwx'], recursive: true });
    expect(b.status, b.text).toBe(200);
    expect(ran()).toEqual([
      [SETFACL, '-m', 'user:nobody:rwx', '--', sibling],
      [SETFACL, '-R', '-m', 'user:nobody:rwx', '--', prefix],
    ]);
  });

  it('lets a root strictly inside a host directory reach below it (the private root under the state dir)', async () => {
    const data = join(srv, 'data');
    backend.use([fixture([SETFACL, '-R', '-m', 'user:nobody:rwx', '--', data], '')]);
    const r = await post('/fs/set_permissions', { path: data, acls: ['u:nobody:rwx'], recursive: true });
    expect(r.status, r.text).toBe(200);
  });
});

describe('S3 shares and keys homes never reach another area', () => {
  const share = (path: string) => ({
    shareName: 'pods',
    path,
    port: '9000',
    rootUser: 'pods-admin',
    rootPassword: 'Pods-Secret-2026',
  });

  it('refuses a share of the pod data directory, naming the pod area', async () => {
    const r = await post('/s3/create', share('/srv/pods'));
    expect(r.status, r.text).toBe(403);
    expect(errorOf(r).message).toBe('/srv/pods belongs to the pod area (paths.podData); the s3 area may not touch it');
    expect(ran()).toEqual([]);
  });

  it('refuses a share of a tree holding pod data, and one inside it', async () => {
    const r = await post('/s3/create', share('/srv'));
    expect(r.status, r.text).toBe(403);
    expect(errorOf(r).message).toMatch(/^\/srv contains \/srv\/pods, which belongs to the pod area/);
    const inside = await post('/s3/create', share('/srv/pods/ballast-pod-web'));
    expect(inside.status, inside.text).toBe(403);
    expect(errorOf(inside).message).toMatch(/^\/srv\/pods\/ballast-pod-web belongs to the pod area/);
    expect(ran()).toEqual([]);
  });

  it("refuses a user's home inside the pod data (what keys writes is ~/.ssh)", async () => {
    const home = join(pods, 'ballast-pod-web');
    backend.use([fixture([GETENT, 'passwd', '--', 'svc'], `svc:x:999:999::${home}:/bin/false\n`)]);
    const r = await t.call('GET', '/api/v2/system/keys/pub?user=svc');
    expect(r.status, r.text).toBe(403);
    expect(errorOf(r).message).toBe(
      `${home}/.ssh belongs to the pod area (paths.podData); the keys area may not touch it`,
    );
  });
});

describe('start-up report and ownership table', () => {
  it('logs each root that reaches another owner’s path, once per (kind, path)', () => {
    const lines = logLines.filter((l) => l.startsWith('confinement: '));
    const pod = `contains ${pods}, which belongs to the pod area (paths.podData): operands at or under it are refused`;
    for (const kind of ['fs.write', 'fs.read']) expect(lines).toContain(`confinement: ${kind} root ${srv} ${pod}`);
    expect(lines).toContain(`confinement: fs.mount root ${realpathSync(t.root)} ${pod}`);
    expect(lines).toContain(`confinement: s3.share root ${srv} ${pod}`);
    expect(lines).toContain(`confinement: keys.home root ${srv} ${pod}`);
    // the fs.write root equal to the state directory holds the host's own paths
    expect(lines).toContain(
      `confinement: fs.write root ${state} contains ${state}, which belongs to the host (stateDir): operands at or under it are refused`,
    );
    expect(new Set(lines).size).toBe(lines.length);
  });

  it('decides by the most specific managed path; shared keys have every declaring area as owner', () => {
    const m = new ManagedPaths([
      { path: '/etc/ballast', owner: 'host', key: 'the config file directory' },
      { path: '/etc/ballast/s3', owner: 's3', key: 'paths.s3EnvDir' },
      { path: '/etc/systemd/system', owner: 'pod', key: 'paths.podUnitDir' },
      { path: '/etc/systemd/system', owner: 's3', key: 'paths.s3UnitDir' },
    ]);
    expect(m.ownerOf('/etc/ballast/s3/media.env')?.owners).toEqual(['s3']);
    expect(m.ownerOf('/etc/ballast/config.yaml')?.owners).toEqual(['host']);
    expect(m.ownerOf('/etc/ballastx')).toBeNull();
    expect(m.ownerOf('/etc/systemd/system/x.service')?.owners).toEqual(['pod', 's3']);
    expect(m.refusal('/etc/systemd/system/x.service', { area: 's3', roots: [] })).toBeNull();
    expect(m.containedIn('/etc').map((e) => e.path)).toEqual([
      '/etc/ballast',
      '/etc/ballast/s3',
      '/etc/systemd/system',
    ]);
    expect(m.containedIn('/etc/ballast').map((e) => e.path)).toEqual(['/etc/ballast/s3']);
    // a root inside the host's directory is handed to its area; one inside an area's is not
    const keytabs = { area: 'kerberos', roots: ['/etc/ballast/keytabs'] };
    expect(m.refusal('/etc/ballast/keytabs/k.keytab', keytabs)).toBeNull();
    expect(m.refusal('/etc/ballast/config.yaml', keytabs)).toMatch(/belongs to the host/);
    expect(m.refusal('/etc/ballast/s3/x', { area: 'fs', roots: ['/etc/ballast/s3'] })).toMatch(/s3 area/);
  });

  it('docs/security.md lists every managed path with its area, key, default and kind', () => {
    const readme = readFileSync(join(repo, 'docs/security.md'), 'utf8');
    const rows = new Set(readme.split('\n').filter((l) => l.startsWith('| ')));
    for (const [key, p] of Object.entries(areaPaths())) {
      expect(rows, `README row for paths.${key}`).toContain(
        `| ${p.areas.join(', ')} | \`paths.${key}\` | \`${p.default}\` | ${p.kind}${p.readOnly ? ' (read only)' : ''} |`,
      );
    }
    for (const host of ['`stateDir`', 'config file directory', 'database'])
      expect(
        [...rows].some((l) => l.startsWith('| host |') && l.includes(host)),
        host,
      ).toBe(true);
  });
});
