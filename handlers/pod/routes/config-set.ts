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

/** realpath on the host (of the longest existing prefix): where a mount or the engine would land. */
const resolved = async (system: SystemClient, p: string) =>
  (await system.op<ResolveResult>(RESOLVE_OP, { path: p })).real;

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
  const real = await resolved(system, p);
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

/**
 * The engine's data-root holds every container's configuration, which the engine trusts at its
 * next start: no pod may reach it. It may not contain, or lie inside, the pods' data (the pod
 * data location, its mount, the bind roots).
 */
async function checkApartFromPods(
  system: SystemClient,
  vars: Vars,
  s: PodSettings,
  data: Fs,
  field: string,
  root: string,
): Promise<void> {
  const pods = [path(vars, 'podData'), s.dataMountpoint, ...s.bindRoots];
  if (data.kind === 'mount') pods.push(data.target);
  for (const p of pods) {
    const real = await resolved(system, p);
    if (under(root, real) || under(real, root))
      throw validationFailed(
        field,
        `data-root ${root} and the pods' data ${real} contain one another: containers could rewrite the engine's own files`,
      );
  }
}

/** A data-root a device for images is mounted on at boot: /var/lib/docker or strictly under a mount root. */
async function checkDataRoot(
  system: SystemClient,
  vars: Vars,
  s: PodSettings,
  data: Fs,
  root: string,
): Promise<string> {
  const field = 'body.configJson.data-root';
  // resolved by the host: a link that leads elsewhere is judged where it leads
  const real = await resolved(system, root);
  if (real !== DEFAULT_DATA_ROOT && !s.mountRoots.some((r) => under(real, r) && real !== r)) {
    throw validationFailed(
      field,
      `${root} resolves to ${real}: data-root is ${DEFAULT_DATA_ROOT} or a directory strictly under the mount roots (${s.mountRoots.join(', ')}), never a system directory`,
    );
  }
  await checkApartFromPods(system, vars, s, data, field, real);
  return real;
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
      summary: 'an engine API socket in daemon.json (hosts is refused: whoever reaches it is root)',
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
    const given = body.configJson['data-root'];
    const entries: NewFstabEntry[] = [];
    if (image.kind === 'mount') {
      if (given !== undefined && (await resolved(system, given)) !== image.target) {
        throw validationFailed(
          'body.configJson.data-root',
          `differs from podImageFs ${image.target}, which becomes data-root`,
        );
      }
      await checkApartFromPods(system, vars, s, data, 'body.podImageFs', image.target);
      daemon['data-root'] = image.target;
    } else {
      const root = await checkDataRoot(system, vars, s, data, given ?? DEFAULT_DATA_ROOT);
      // the engine and the fstab line name the place that was checked, not a link to it
      if (given !== undefined) daemon['data-root'] = root;
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
