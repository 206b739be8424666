import { route } from '../../core/route';
import { areaSettings } from '../../core/settings';
import { podSettings } from '../contract';
import { validationFailed } from '../../core/errors';
import { bin, path } from '../../core/vars';
import {
  checkApartFromPods,
  checkDataRoot,
  checkFs,
  DEFAULT_DATA_ROOT,
  readDaemonJson,
  refuseListedElsewhere,
  refuseMountedElsewhere,
  resolved,
} from '../config-fs';
import { parseFstab, type FstabEntry } from '../../tools/fstab';
import { upsertFstab, type NewFstabEntry } from '../render/fstab';
import { configBody } from '../requests';
import { configSetAnswer } from '../responses';

/** The fstab entry on the line that carries our marker (`# ballast:<marker>`). */
function ofMarker(text: string, entries: FstabEntry[], marker: NewFstabEntry['marker']): FstabEntry | undefined {
  const at = text.split('\n').findIndex((l) => l.trimEnd().endsWith(`# ballast:${marker}`));
  return at < 0 ? undefined : entries.find((e) => e.line === at);
}

export default route({
  method: 'POST',
  path: '/pod/config',
  permission: 'pod:manage',
  long: { budgetS: 1200, phases: ['restart'] },
  summary:
    "Configure the container system: write the engine's daemon.json and the fstab entries of the image and pod data filesystems, then restart the engine; a part not sent is kept, a device mounted elsewhere is a 409",
  body: configBody,
  response: configSetAnswer,
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
      summary: 'only the engine settings: both filesystems stay as they are',
      body: { configJson: { 'log-driver': 'journald', 'live-restore': true } },
    },
    {
      summary: 'an engine API socket in daemon.json (hosts is refused: whoever reaches it is root)',
      body: { configJson: { hosts: ['tcp://0.0.0.0:2375'] }, podImageFs: '/dev/sdc', podDataFs: '/srv/data' },
      status: 400,
    },
  ],
  async handler({ body, system, vars, events }) {
    const s = areaSettings(vars, 'pod', podSettings);
    const { configJson, podImageFs, podDataFs } = body;
    if (podImageFs !== undefined && podImageFs === podDataFs)
      throw validationFailed('body.podDataFs', 'must differ from podImageFs');
    const daemonFile = path(vars, 'dockerDaemonJson');
    const fstabFile = path(vars, 'fstab');
    const fstabText = (await system.readFile(fstabFile)) ?? '';
    const fstabNow = parseFstab(fstabText);
    const dataNow = fstabNow.find((e) => e.fs_file === s.dataMountpoint);
    if (podDataFs === undefined && !dataNow)
      throw validationFailed(
        'body.podDataFs',
        'required until the container system is configured (no pod data entry in fstab yet)',
      );
    const image = podImageFs === undefined ? undefined : await checkFs(system, vars, s, 'podImageFs', podImageFs);
    const data = podDataFs === undefined ? undefined : await checkFs(system, vars, s, 'podDataFs', podDataFs);

    // a part not sent is kept: daemon.json as it is, the fstab line of a filesystem as it is
    const daemonNow = configJson ? undefined : await readDaemonJson(system, daemonFile);
    const daemon: Record<string, unknown> = { ...(configJson ?? daemonNow) };
    const given = configJson?.['data-root'];
    // the pods' data the engine must stay apart from: the new mount, or the bind source that stays
    const dataPaths = data
      ? data.kind === 'mount'
        ? [data.target]
        : []
      : dataNow?.fs_mntops.includes('bind')
        ? [dataNow.fs_spec]
        : [];
    const entries: NewFstabEntry[] = [];
    let imagesAt = '';
    let imagesNow = '';
    if (image?.kind === 'mount') {
      if (given !== undefined && (await resolved(system, given)) !== image.target) {
        throw validationFailed(
          'body.configJson.data-root',
          `differs from podImageFs ${image.target}, which becomes data-root`,
        );
      }
      await checkApartFromPods(system, vars, s, dataPaths, 'body.podImageFs', image.target);
      daemon['data-root'] = image.target;
    } else if (image) {
      const root = await checkDataRoot(system, s, given ?? DEFAULT_DATA_ROOT);
      await checkApartFromPods(system, vars, s, dataPaths, 'body.configJson.data-root', root);
      // the engine and the fstab line name the place that was checked, not a link to it
      if (given !== undefined) daemon['data-root'] = root;
      else delete daemon['data-root'];
      imagesAt = root;
      entries.push({
        marker: 'pod-images',
        fs_spec: image.spec,
        fs_file: root,
        fs_vfstype: image.fstype,
        fs_mntops: ['defaults', 'nofail'],
        fs_freq: 0,
        fs_passno: 2,
      });
    } else {
      // images stay where they are: data-root belongs to podImageFs, so a configJson without one keeps it
      const line = ofMarker(fstabText, fstabNow, 'pod-images');
      // the data-root in force now (a daemon.json no longer readable is being replaced: the line or the default)
      const current =
        daemonNow ?? (await readDaemonJson(system, daemonFile).catch(() => ({}) as Record<string, unknown>));
      const before = typeof current['data-root'] === 'string' ? current['data-root'] : undefined;
      const kept = given ?? before ?? line?.fs_file ?? DEFAULT_DATA_ROOT;
      const real = given !== undefined ? await checkDataRoot(system, s, given) : await resolved(system, kept);
      if (line && line.fs_file !== real) {
        throw validationFailed(
          'body.configJson.data-root',
          `the images filesystem ${line.fs_spec} is mounted at ${line.fs_file} (fstab): data-root stays there unless podImageFs is sent too`,
        );
      }
      await checkApartFromPods(
        system,
        vars,
        s,
        dataPaths,
        data && given === undefined ? 'body.podDataFs' : 'body.configJson.data-root',
        real,
      );
      if (kept !== DEFAULT_DATA_ROOT || given !== undefined) daemon['data-root'] = real;
      imagesNow = line?.fs_spec ?? real;
    }
    if (data?.kind === 'block') {
      entries.push({
        marker: 'pod-data',
        fs_spec: data.spec,
        fs_file: s.dataMountpoint,
        fs_vfstype: data.fstype,
        fs_mntops: ['defaults', 'nofail'],
        fs_freq: 0,
        fs_passno: 2,
      });
    } else if (data) {
      entries.push({
        marker: 'pod-data',
        fs_spec: data.target,
        fs_file: s.dataMountpoint,
        fs_vfstype: 'none',
        fs_mntops: ['bind', 'nofail'],
        fs_freq: 0,
        fs_passno: 0,
      });
    }

    const fstab = upsertFstab(fstabText, entries, image?.kind === 'mount' ? ['pod-images'] : []);
    // a device is mounted once: not now elsewhere, not by another fstab line after the change
    const fstabAfter = parseFstab(fstab);
    if (image && podImageFs !== undefined) {
      refuseMountedElsewhere('podImageFs', podImageFs, image, imagesAt);
      refuseListedElsewhere('podImageFs', podImageFs, image, imagesAt, fstabAfter);
    }
    if (data && podDataFs !== undefined) {
      refuseMountedElsewhere('podDataFs', podDataFs, data, s.dataMountpoint);
      refuseListedElsewhere('podDataFs', podDataFs, data, s.dataMountpoint, fstabAfter);
    }

    const systemctl = bin(vars, 'systemctl');
    const hadDaemon = (await system.readFile(daemonFile)) !== null;
    await system.writeFile(daemonFile, `${JSON.stringify(daemon, null, 2)}\n`, { backup: true, mode: 0o644 });
    let fstabWritten = false;
    try {
      await system.writeFile(fstabFile, fstab, { backup: true });
      fstabWritten = true;
      await system.progress({ phase: 'restart', message: `restarting ${s.engineUnit}` });
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
    // both filesystems as configured now: the one sent, or the source of what stays
    const answer = {
      podImageFs: podImageFs ?? imagesNow,
      podDataFs: podDataFs ?? (dataNow as FstabEntry).fs_spec,
    };
    await events.send({ kind: 'pod.config.updated', data: answer });
    return answer;
  },
});
