/**
 * Route tier: POST /pod/config with replayed lsblk/findmnt (#31 items 3 and 7). A device already
 * mounted elsewhere, active as swap, or named by another fstab line is a 409 that writes nothing;
 * each field is optional (at least one), and a part not sent is kept as it is.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { Fixture } from '../../runtime/system/fixture-file';
import { errorOf, issuePaths } from '../helpers/answers';
import { fixture, makeTestHost, type TestHost } from '../helpers/host';
import { POD_ROUTES } from './pod-helpers';

const SC = '/usr/bin/systemctl';
const lsblk = (dev: string, mountpoints: (string | null)[] = [null], uuid = 'u-1') =>
  fixture(
    ['/usr/bin/lsblk', '-J', '-d', '-o', 'PATH,TYPE,FSTYPE,UUID,MOUNTPOINTS', '--', dev],
    JSON.stringify({ blockdevices: [{ path: dev, type: 'disk', fstype: 'xfs', uuid, mountpoints }] }),
  );
const findmnt = (p: string) =>
  fixture(
    ['/usr/bin/findmnt', '-J', '-o', 'TARGET,SOURCE,FSTYPE', '--mountpoint', p],
    `{"filesystems":[{"target":"${p}","source":"/dev/sdb","fstype":"xfs"}]}`,
  );
const engine: Fixture[] = [fixture([SC, 'daemon-reload'], ''), fixture([SC, 'restart', '--', 'docker.service'], '')];

const ROOT_LINE = '/dev/sda1 / ext4 defaults 0 1\n';
const IMAGES_LINE = 'UUID=u-9 /var/lib/docker xfs defaults,nofail 0 2 # ballast:pod-images\n';
const DATA_LINE = '/srv/data /srv/pods none bind,nofail 0 0 # ballast:pod-data\n';

let t: TestHost;
afterEach(async () => t?.close());

async function host(fixtures: Fixture[], fstab = ROOT_LINE, daemon?: string): Promise<TestHost> {
  t = await makeTestHost({
    routes: POD_ROUTES,
    fixtures: [...fixtures, ...engine],
    config: { settings: { pod: { checkHostPorts: false } } },
  });
  writeFileSync(t.config.paths.fstab, fstab);
  if (daemon !== undefined) {
    mkdirSync(dirname(t.config.paths.dockerDaemonJson), { recursive: true });
    writeFileSync(t.config.paths.dockerDaemonJson, daemon);
  }
  return t;
}
const post = (body: unknown) => t.call('POST', '/api/v2/pod/config', { body });
const fstab = () => readFileSync(t.config.paths.fstab, 'utf8');
const daemon = () => readFileSync(t.config.paths.dockerDaemonJson, 'utf8');
const argvs = () => t.replay!.calls.map((c) => c.argv);
const ran = () => argvs().filter((a) => a[0] === SC);
const events = () =>
  (
    t.host.db.prepare("SELECT data FROM events WHERE kind = 'pod.config.updated' ORDER BY seq").all() as {
      data: string;
    }[]
  ).map((e) => JSON.parse(e.data) as unknown);

describe('a device that is already in use (item 3)', () => {
  it('mounted elsewhere: 409 naming where, nothing written, nothing restarted', async () => {
    await host([lsblk('/dev/sdc', ['/mnt/usb', '/srv/x/sub']), findmnt('/srv/data')]);
    const r = await post({ configJson: {}, podImageFs: '/dev/sdc', podDataFs: '/srv/data' });
    expect([r.status, errorOf(r).message]).toEqual([
      409,
      '/dev/sdc is in use: mounted at /mnt/usb, /srv/x/sub; the next boot would mount it twice: unmount it first (POST /fs/unmount), or send that mount point instead of the device',
    ]);
    expect(errorOf(r).details).toMatchObject({ field: 'body.podImageFs', mountpoints: ['/mnt/usb', '/srv/x/sub'] });
    expect(fstab()).toBe(ROOT_LINE);
    expect(existsSync(t.config.paths.dockerDaemonJson)).toBe(false);
    expect(ran()).toEqual([]);
    expect(events()).toEqual([]);
  });

  it('active swap: 409', async () => {
    await host([lsblk('/dev/sdd', ['[SWAP]']), findmnt('/srv/img')]);
    const r = await post({ configJson: {}, podImageFs: '/srv/img', podDataFs: '/dev/sdd' });
    expect([r.status, errorOf(r).message]).toEqual([
      409,
      '/dev/sdd is in use: mounted at swap; the next boot would mount it twice: unmount it first (POST /fs/unmount), or send that mount point instead of the device',
    ]);
    expect(ran()).toEqual([]);
  });

  it('mounted where its entry mounts it is the same configuration again: 200; there and elsewhere: 409 naming elsewhere', async () => {
    await host([lsblk('/dev/sdd', ['/srv/pods']), lsblk('/dev/sde', ['/srv/pods', '/mnt/also'], 'u-2')]);
    expect((await post({ podDataFs: '/dev/sdd' })).status).toBe(200);
    expect(fstab()).toBe(`${ROOT_LINE}UUID=u-1 /srv/pods xfs defaults,nofail 0 2 # ballast:pod-data\n`);
    const r = await post({ podDataFs: '/dev/sde' });
    expect([r.status, errorOf(r).message]).toEqual([
      409,
      '/dev/sde is in use: mounted at /mnt/also; the next boot would mount it twice: unmount it first (POST /fs/unmount), or send that mount point instead of the device',
    ]);
  });

  it('named by another fstab line (by UUID, by-uuid link or path): 409 naming the line', async () => {
    for (const [other, line] of [
      ['UUID=u-1 /mnt/backup xfs defaults 0 2\n', 2],
      ['/dev/disk/by-uuid/u-1 /mnt/backup xfs defaults 0 2\n', 2],
      ['/dev/sdc /mnt/backup xfs defaults 0 2\n', 2],
    ] as const) {
      await host([lsblk('/dev/sdc'), findmnt('/srv/data')], ROOT_LINE + other);
      const r = await post({ configJson: {}, podImageFs: '/dev/sdc', podDataFs: '/srv/data' });
      expect([r.status, errorOf(r).message]).toEqual([
        409,
        `/dev/sdc is already in fstab (${other.split(' ')[0]} on /mnt/backup, line ${line}); the next boot would mount it twice`,
      ]);
      expect(fstab()).toBe(ROOT_LINE + other);
      expect(ran()).toEqual([]);
      await t.close();
    }
  });

  it('the data device is the images device that stays: 409', async () => {
    await host([lsblk('/dev/sdc', [null], 'u-9')], ROOT_LINE + IMAGES_LINE + DATA_LINE);
    const r = await post({ podDataFs: '/dev/sdc' });
    expect([r.status, errorOf(r).message]).toEqual([
      409,
      '/dev/sdc is already in fstab (UUID=u-9 on /var/lib/docker, line 2); the next boot would mount it twice',
    ]);
  });
});

describe('each field optional, a part not sent kept (item 7)', () => {
  it('an empty body is a 400; podDataFs is needed until the system is configured', async () => {
    await host([lsblk('/dev/sdc')]);
    const empty = await post({});
    expect([empty.status, errorOf(empty).message]).toEqual([
      400,
      'invalid body: body: send at least one of configJson, podImageFs, podDataFs',
    ]);
    const first = await post({ configJson: {}, podImageFs: '/dev/sdc' });
    expect([first.status, issuePaths(first)]).toEqual([400, ['body.podDataFs']]);
    expect(ran()).toEqual([]);
  });

  it('configJson alone: daemon.json replaced, data-root and fstab kept, engine restarted', async () => {
    const fs = ROOT_LINE + 'UUID=u-9 /srv/engine xfs defaults,nofail 0 2 # ballast:pod-images\n' + DATA_LINE;
    await host([], fs, '{"data-root":"/srv/engine","log-driver":"json-file"}\n');
    const r = await post({ configJson: { 'log-driver': 'journald' } });
    expect(r.json).toEqual({ podImageFs: 'UUID=u-9', podDataFs: '/srv/data' });
    expect(JSON.parse(daemon())).toEqual({ 'log-driver': 'journald', 'data-root': '/srv/engine' });
    expect(fstab()).toBe(fs);
    expect(ran()).toEqual([
      [SC, 'daemon-reload'],
      [SC, 'restart', '--', 'docker.service'],
    ]);
    expect(events()).toEqual([{ podImageFs: 'UUID=u-9', podDataFs: '/srv/data' }]);
    // data-root goes with the images device of fstab: moving it needs podImageFs
    const moved = await post({ configJson: { 'data-root': '/srv/other' } });
    expect([moved.status, issuePaths(moved)]).toEqual([400, ['body.configJson.data-root']]);
    expect(errorOf(moved).message).toMatch(/mounted at \/srv\/engine \(fstab\): data-root stays there/);
  });

  it('configJson alone without an images entry: the default stays the default, a new data-root is checked', async () => {
    await host([], ROOT_LINE + DATA_LINE);
    expect((await post({ configJson: { 'live-restore': true } })).json).toEqual({
      podImageFs: '/var/lib/docker',
      podDataFs: '/srv/data',
    });
    expect(JSON.parse(daemon())).toEqual({ 'live-restore': true });
    const etc = await post({ configJson: { 'data-root': '/etc' } });
    expect([etc.status, issuePaths(etc)]).toEqual([400, ['body.configJson.data-root']]);
  });

  it('podDataFs alone: daemon.json and the images line untouched', async () => {
    const before = '{\n  "log-driver": "journald"\n}\n';
    await host([findmnt('/srv/new')], ROOT_LINE + IMAGES_LINE + DATA_LINE, before);
    const r = await post({ podDataFs: '/srv/new' });
    expect(r.json).toEqual({ podImageFs: 'UUID=u-9', podDataFs: '/srv/new' });
    expect(daemon()).toBe(before);
    expect(fstab()).toBe(`${ROOT_LINE}${IMAGES_LINE}/srv/new /srv/pods none bind,nofail 0 0 # ballast:pod-data\n`);
  });

  it('podImageFs alone: a device goes to /var/lib/docker, the rest of daemon.json and the data line stay', async () => {
    await host([lsblk('/dev/sdc')], ROOT_LINE + DATA_LINE, '{"data-root":"/srv/img","debug":true}\n');
    const r = await post({ podImageFs: '/dev/sdc' });
    expect(r.json).toEqual({ podImageFs: '/dev/sdc', podDataFs: '/srv/data' });
    expect(JSON.parse(daemon())).toEqual({ debug: true });
    expect(fstab()).toBe(
      `${ROOT_LINE}${DATA_LINE}UUID=u-1 /var/lib/docker xfs defaults,nofail 0 2 # ballast:pod-images\n`,
    );
  });
});
