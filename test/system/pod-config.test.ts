/**
 * System tier: POST/GET /pod/config with the real lsblk, blkid and findmnt on loop devices (a
 * blank-mounted ext4 image for the engine's images, a mounted ext4 for pod data under a private
 * mount root). systemctl is a recording stub: the engine restart is checked by argv, never run
 * against the machine's systemd. The fstab and daemon.json are the host's private copies.
 */
import { chmodSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHost, type Host } from '../../runtime/host';
import { createToken } from '../../runtime/tokens';
import { errorOf, issuePaths, jsonOf } from '../helpers/answers';
import { distDir, makeTestConfig } from '../helpers/host';
import { privateDir } from '../helpers/tmp';
import { POD_ROUTES } from '../routes/pod-helpers';
import { createLoopDevice, exec, requireRoot, requireTools, type LoopDevice } from './helpers/loop';

let images: LoopDevice | undefined;
let data: LoopDevice | undefined;
let host: Host | undefined;
let token: string;
let calls: string;
let fstab: string;
let daemonJson: string;
let uuid: string;

async function call(method: string, path: string, body?: unknown) {
  const res = await host!.app.fetch(
    new Request(`http://ballast.local/api/v2${path}`, {
      method,
      headers: { token, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    }),
    host!.env,
  );
  return { status: res.status, json: await jsonOf(res) };
}

beforeAll(async () => {
  requireRoot();
  requireTools('/usr/bin/lsblk', '/usr/sbin/blkid', '/usr/bin/findmnt', '/usr/sbin/mkfs.ext4');
  images = await createLoopDevice({ sizeMiB: 64, fsType: 'ext4' });
  data = await createLoopDevice({ sizeMiB: 64, fsType: 'ext4', mount: 'mnt' });
  uuid = (await exec(['/usr/sbin/blkid', '-p', '-s', 'UUID', '-o', 'value', '--', images.device])).stdout.trim();
  expect(uuid).toMatch(/^[0-9a-f-]{36}$/);
  const tmp = privateDir('pod-config');
  calls = join(tmp, 'systemctl.calls');
  const stub = join(tmp, 'systemctl');
  writeFileSync(stub, `#!/bin/sh\nprintf '%s\\n' "$*" >> ${calls}\nexit 0\n`);
  chmodSync(stub, 0o755);
  symlinkSync('/', join(data.dir, 'rootlink'));
  const made = makeTestConfig();
  const config = {
    ...made.config,
    system: {
      ...made.config.system,
      mode: 'live' as const,
      binaries: { ...made.config.system.binaries, systemctl: stub },
    },
    settings: { pod: { mountRoots: [data.dir] } },
  };
  fstab = config.paths.fstab;
  daemonJson = config.paths.dockerDaemonJson;
  mkdirSync(join(made.root, 'etc'), { recursive: true });
  writeFileSync(fstab, '# static\n/dev/vda1 / ext4 errors=remount-ro 0 1\n');
  host = await createHost({ config, distDir, routes: POD_ROUTES, log: () => undefined });
  token = (await createToken(host.db, 'admin', ['*'])).token;
}, 120_000);

afterAll(async () => {
  try {
    await host?.close();
  } finally {
    await data?.cleanup();
    await images?.cleanup();
  }
});

describe('the container system configuration on real devices', () => {
  it('refuses what is neither a device with a filesystem nor a mount point under the roots', async () => {
    const post = (podImageFs: string, podDataFs: string) =>
      call('POST', '/pod/config', { configJson: {}, podImageFs, podDataFs });
    const msg = async (a: string, b: string) => {
      const r = await post(a, b);
      return [r.status, issuePaths(r)[0], errorOf(r).message];
    };
    expect(await msg('/dev/null', data!.mountpoint!)).toEqual([
      400,
      'body.podImageFs',
      'invalid body.podImageFs: /dev/null is not a block device',
    ]);
    expect((await msg(images!.device, '/'))[2]).toBe(
      'invalid body.podDataFs: / is not under the mount roots (' + data!.dir + ')',
    );
    // resolved by the host before anything else: outside the roots whatever it is
    expect((await msg(images!.device, '/etc'))[2]).toBe(
      'invalid body.podDataFs: /etc is not under the mount roots (' + data!.dir + ')',
    );
    // the root itself is not below the root; a plain directory below it is no filesystem
    expect((await msg(images!.device, data!.dir))[2]).toBe(
      'invalid body.podDataFs: ' + data!.dir + ' is not under the mount roots (' + data!.dir + ')',
    );
    mkdirSync(join(data!.dir, 'plain'), { recursive: true });
    expect((await msg(images!.device, join(data!.dir, 'plain')))[2]).toMatch(/is neither a block device/);
    // a symlink under the mount root that leads to /: findmnt resolves it, and / is outside
    expect((await msg(images!.device, join(data!.dir, 'rootlink')))[2]).toBe(
      'invalid body.podDataFs: / is not under the mount roots (' + data!.dir + ')',
    );
    expect(readFileSync(fstab, 'utf8')).toBe('# static\n/dev/vda1 / ext4 errors=remount-ro 0 1\n');
  });

  it('writes daemon.json and fstab, restarts the engine, and reads them back', async () => {
    const r = await call('POST', '/pod/config', {
      configJson: { 'storage-driver': 'overlay2', 'log-opts': { 'max-size': '10m' } },
      podImageFs: images!.device,
      podDataFs: data!.mountpoint,
    });
    expect(r).toEqual({ status: 200, json: { podImageFs: images!.device, podDataFs: data!.mountpoint } });
    expect(readFileSync(fstab, 'utf8')).toBe(
      `# static\n/dev/vda1 / ext4 errors=remount-ro 0 1\nUUID=${uuid} /var/lib/docker ext4 defaults,nofail 0 2 # ballast:pod-images\n${data!.mountpoint} /srv/pods none bind,nofail 0 0 # ballast:pod-data\n`,
    );
    expect(JSON.parse(readFileSync(daemonJson, 'utf8'))).toEqual({
      'storage-driver': 'overlay2',
      'log-opts': { 'max-size': '10m' },
    });
    expect(readFileSync(calls, 'utf8')).toBe('daemon-reload\nrestart -- docker.service\n');
    const got = await call('GET', '/pod/config');
    expect(got.json).toEqual({
      daemonJson: { 'storage-driver': 'overlay2', 'log-opts': { 'max-size': '10m' } },
      podDataMount: {
        source: data!.mountpoint,
        mountpoint: '/srv/pods',
        type: 'none',
        options: { rw: true, mand: false, noatime: false, xattr: false, posixacl: false },
        fs_freq: 0,
        fs_passno: 0,
      },
    });
    // again with the roles swapped: our two lines are replaced, not added
    const again = await call('POST', '/pod/config', {
      configJson: {},
      podImageFs: data!.mountpoint,
      podDataFs: images!.device,
    });
    expect(again.status).toBe(200);
    expect(readFileSync(fstab, 'utf8')).toBe(
      `# static\n/dev/vda1 / ext4 errors=remount-ro 0 1\nUUID=${uuid} /srv/pods ext4 defaults,nofail 0 2 # ballast:pod-data\n`,
    );
    expect(JSON.parse(readFileSync(daemonJson, 'utf8'))).toEqual({ 'data-root': data!.mountpoint });
  });

  it('refuses a device that is mounted elsewhere (409 naming where) and writes nothing (#31 item 3)', async () => {
    const before = readFileSync(fstab, 'utf8');
    const daemonBefore = readFileSync(daemonJson, 'utf8');
    const callsBefore = readFileSync(calls, 'utf8');
    const r = await call('POST', '/pod/config', { podImageFs: data!.device });
    expect([r.status, errorOf(r).message]).toEqual([
      409,
      `${data!.device} is in use: mounted at ${data!.mountpoint}; the next boot would mount it twice: unmount it first (POST /fs/unmount), or send that mount point instead of the device`,
    ]);
    // the mount point itself is what may be used: as data-root, no fstab line for the device
    expect((await call('POST', '/pod/config', { podImageFs: data!.mountpoint })).status).toBe(200);
    expect(JSON.parse(readFileSync(daemonJson, 'utf8'))).toEqual(JSON.parse(daemonBefore));
    expect(readFileSync(fstab, 'utf8')).toBe(before);
    expect(readFileSync(calls, 'utf8')).toBe(`${callsBefore}daemon-reload\nrestart -- docker.service\n`);
  });
});
