import { route } from '../../core/route';
import { validationFailed } from '../../core/errors';
import type { SystemClient } from '../../core/system';
import { bin, path, type Vars } from '../../core/vars';
import { RESOLVE_OP, type PodSettings, type ResolveResult } from '../contract';
import { parseBlkidExport, parseFindmntOne, parseLsblkOne } from '../parse/block';
import { podSettings } from '../pod';
import { upsertFstab, type NewFstabEntry } from '../render/fstab';
import { ConfigBody } from '../requests';
import { PodConfigResultSchema } from '../schemas';

const DEFAULT_DATA_ROOT = '/var/lib/docker';

type Fs = { kind: 'block'; spec: string; fstype: string } | { kind: 'mount'; target: string };

const under = (p: string, root: string) => p === root || p.startsWith(root.endsWith('/') ? root : `${root}/`);

/** A block device with a filesystem (lsblk), or a mount point under settings.pod.mountRoots (findmnt). */
async function checkFs(system: SystemClient, vars: Vars, s: PodSettings, field: string, p: string): Promise<Fs> {
  if (p.startsWith('/dev/')) {
    const r = await system.exec([bin(vars, 'lsblk'), '-J', '-d', '-o', 'PATH,TYPE,FSTYPE,UUID', '--', p]);
    if (r.code !== 0) throw validationFailed(`body.${field}`, `${p} is not a block device`);
    const b = parseLsblkOne(r.stdout);
    let { fstype, uuid } = b;
    if (!fstype) {
      // lsblk reads udev's database; without udev (containers, early boot) only a probe knows
      const probe = await system.exec([bin(vars, 'blkid'), '-p', '-o', 'export', '--', p]);
      const k = probe.code === 0 ? parseBlkidExport(probe.stdout) : {};
      if (k.USAGE === 'filesystem' && k.TYPE) {
        fstype = k.TYPE;
        uuid = k.UUID ?? null;
      }
    }
    if (!fstype)
      throw validationFailed(`body.${field}`, `${p} has no filesystem (make one with POST /fs/make_filesystem)`);
    // both end up in an fstab line: one plain word each
    if (!/^[A-Za-z0-9_.+-]{1,32}$/.test(fstype))
      throw validationFailed(`body.${field}`, `${p}: unexpected filesystem type ${JSON.stringify(fstype)}`);
    const spec = uuid && /^[A-Za-z0-9-]{1,64}$/.test(uuid) ? `UUID=${uuid}` : b.path;
    if (!/^\/dev\/[A-Za-z0-9_./:-]+$/.test(spec) && !spec.startsWith('UUID='))
      throw validationFailed(`body.${field}`, `${p}: unexpected device path ${JSON.stringify(b.path)}`);
    return { kind: 'block', spec, fstype };
  }
  // resolved by the host (symlinks followed) and checked before any command sees it
  const { real } = await system.op<ResolveResult>(RESOLVE_OP, { path: p });
  const notUnder = (t: string) =>
    validationFailed(`body.${field}`, `${t} is not under the mount roots (${s.mountRoots.join(', ')})`);
  if (!s.mountRoots.some((root) => under(real, root) && real !== root)) throw notUnder(real);
  const r = await system.exec([bin(vars, 'findmnt'), '-J', '-o', 'TARGET,SOURCE,FSTYPE', '--mountpoint', real]);
  if (r.code !== 0)
    throw validationFailed(`body.${field}`, `${p} is neither a block device (/dev/…) nor a mount point`);
  const m = parseFindmntOne(r.stdout);
  if (!s.mountRoots.some((root) => under(m.target, root) && m.target !== root)) throw notUnder(m.target);
  return { kind: 'mount', target: m.target };
}

export default route({
  method: 'POST',
  path: '/pod/config',
  permission: 'pod:manage',
  summary:
    "Configure the container system: write the engine's daemon.json and the fstab entries of the image and pod data filesystems, then restart the engine",
  body: ConfigBody,
  response: PodConfigResultSchema,
  lock: 'pod',
  examples: [
    {
      summary: 'images on a dedicated disk, pod data on a mounted filesystem',
      body: {
        configJson: {
          'storage-driver': 'overlay2',
          'log-driver': 'json-file',
          'log-opts': { 'max-size': '10m' },
          'live-restore': true,
        },
        podImageFs: '/dev/sdc',
        podDataFs: '/srv/data',
      },
    },
    {
      summary: 'an unknown daemon.json key',
      body: { configJson: { hosts: ['tcp://0.0.0.0:2375'] }, podImageFs: '/dev/sdc', podDataFs: '/srv/data' },
      status: 400,
    },
  ],
  async handler({ body, system, vars, events }) {
    const s = podSettings(vars);
    if (body.podImageFs === body.podDataFs) throw validationFailed('body.podDataFs', 'must differ from podImageFs');
    const image = await checkFs(system, vars, s, 'podImageFs', body.podImageFs);
    const data = await checkFs(system, vars, s, 'podDataFs', body.podDataFs);

    const daemon: Record<string, unknown> = { ...body.configJson };
    const entries: NewFstabEntry[] = [];
    if (image.kind === 'mount') {
      if (daemon['data-root'] !== undefined && daemon['data-root'] !== image.target) {
        throw validationFailed(
          'body.configJson.data-root',
          `differs from podImageFs ${image.target}, which becomes data-root`,
        );
      }
      daemon['data-root'] = image.target;
    } else {
      const root = (daemon['data-root'] as string | undefined) ?? DEFAULT_DATA_ROOT;
      // the device gets mounted there at boot: the engine's default place, or under the mount roots
      const real = (await system.op<ResolveResult>(RESOLVE_OP, { path: root })).real;
      if (real !== DEFAULT_DATA_ROOT && !s.mountRoots.some((r) => under(real, r) && real !== r)) {
        throw validationFailed(
          'body.configJson.data-root',
          `${root} resolves to ${real}: a device for images is mounted at ${DEFAULT_DATA_ROOT} or under the mount roots (${s.mountRoots.join(', ')})`,
        );
      }
      entries.push({
        marker: 'pod-images',
        fs_spec: image.spec,
        fs_file: root,
        fs_vfstype: image.fstype,
        fs_mntops: ['defaults', 'nofail'],
        fs_freq: 0,
        fs_passno: 2,
      });
    }
    entries.push(
      data.kind === 'block'
        ? {
            marker: 'pod-data',
            fs_spec: data.spec,
            fs_file: s.dataMountpoint,
            fs_vfstype: data.fstype,
            fs_mntops: ['defaults', 'nofail'],
            fs_freq: 0,
            fs_passno: 2,
          }
        : {
            marker: 'pod-data',
            fs_spec: data.target,
            fs_file: s.dataMountpoint,
            fs_vfstype: 'none',
            fs_mntops: ['bind', 'nofail'],
            fs_freq: 0,
            fs_passno: 0,
          },
    );

    const daemonFile = path(vars, 'dockerDaemonJson');
    const fstabFile = path(vars, 'fstab');
    const fstab = upsertFstab(
      (await system.readFile(fstabFile)) ?? '',
      entries,
      image.kind === 'mount' ? ['pod-images'] : [],
    );
    const systemctl = bin(vars, 'systemctl');
    const hadDaemon = (await system.readFile(daemonFile)) !== null;
    await system.writeFile(daemonFile, `${JSON.stringify(daemon, null, 2)}\n`, { backup: true, mode: 0o644 });
    let fstabWritten = false;
    try {
      await system.writeFile(fstabFile, fstab, { backup: true });
      fstabWritten = true;
      await system.run([systemctl, 'daemon-reload']);
      await system.run([systemctl, 'restart', '--', s.engineUnit], { timeoutMs: s.composeTimeoutMs });
    } catch (e) {
      // the engine refused the new daemon.json (or a write failed): the old files, and the engine back on them
      if (hadDaemon) await system.restoreFile(daemonFile);
      else await system.removeFile(daemonFile);
      if (fstabWritten) await system.restoreFile(fstabFile);
      await system.exec([systemctl, 'daemon-reload']);
      await system.exec([systemctl, 'restart', '--', s.engineUnit], { timeoutMs: s.composeTimeoutMs });
      throw e;
    }
    await events.send({ kind: 'pod.config.updated', data: { podImageFs: body.podImageFs, podDataFs: body.podDataFs } });
    return { podImageFs: body.podImageFs, podDataFs: body.podDataFs };
  },
});
