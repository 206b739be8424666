import { podSettings, type PodSettings } from '../../handlers/pod/contract';
import { podOps } from './pod/ops';
import { verifyCommand } from './pod/verify';
import { defineArea } from './types';

/**
 * Containerization: pods are compose projects run by systemd units. The host admits compose
 * files (ajv over the Compose Specification schema, which route isolates cannot compile, the
 * admission policy, and the compose tool's own resolved model) and removes pod directories.
 */
export default defineArea<PodSettings>({
  name: 'pod',
  settings: podSettings,
  paths: {
    /** the pod data mount location: one directory per pod with the data its containers bind */
    podData: { default: '/srv/pods', kind: 'dir' },
    /** one directory per pod with its compose file: root's, outside every root a container may bind */
    podFiles: { default: '/var/lib/ballast/pods', kind: 'dir' },
    /** where the pods' systemd units are written */
    podUnitDir: { default: '/etc/systemd/system', kind: 'dir' },
    dockerDaemonJson: { default: '/etc/docker/daemon.json', kind: 'file' },
    fstab: { default: '/etc/fstab', kind: 'file' },
  },
  binaries: {
    systemctl: '/usr/bin/systemctl',
    journalctl: '/usr/bin/journalctl',
    docker: '/usr/bin/docker',
    dockerCompose: '/usr/bin/docker-compose',
    podmanCompose: '/usr/bin/podman-compose',
    lsblk: '/usr/bin/lsblk',
    findmnt: '/usr/bin/findmnt',
    blkid: '/usr/sbin/blkid',
  },
  commands: { verify: verifyCommand },
  setup: (host) => {
    // compose commands pass settings.pod.env; the host refuses names missing from system.envAllow
    const refused = Object.keys(host.settings.env).filter((k) => !host.config.system.envAllow.includes(k));
    if (refused.length)
      host.log(
        `pod: settings.pod.env names ${refused.join(', ')}, which system.envAllow lacks: every compose command will be refused (403)`,
      );
    return {
      ops: podOps({
        settings: host.settings,
        db: host.db,
        podData: host.config.paths.podData,
        podFiles: host.config.paths.podFiles,
        podUnitDir: host.config.paths.podUnitDir,
        systemctl: host.vars.bin.systemctl,
        handle: (op, payload, requestId) => host.system.handle(op, payload, requestId),
      }),
    };
  },
});
