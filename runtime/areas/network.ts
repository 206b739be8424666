import { networkSettings, type NetworkSettings } from '../../handlers/network/contract';
import { defineArea } from './types';
import { ChangeManager } from './network/changes';
import { changeOps } from './network/ops';

/**
 * Network interfaces and bonds: the changes run in the routes; the host checks the settings and
 * keeps the confirmed-change checkpoint (network/changes.ts) with its deadline, for the network
 * and the traffic routes alike.
 */
export default defineArea<NetworkSettings>({
  name: 'network',
  settings: networkSettings,
  paths: {
    networkInterfaces: { default: '/etc/network/interfaces', kind: 'file' },
    networkInterfacesD: { default: '/etc/network/interfaces.d', kind: 'dir' },
  },
  binaries: { ip: '/usr/sbin/ip', ethtool: '/usr/sbin/ethtool' },
  setup(host) {
    const bins = host.config.system.binaries;
    const changes = new ChangeManager({
      db: host.db,
      system: host.system,
      events: host.events,
      env: host.env,
      vars: host.vars,
      ip: bins.ip ?? '/usr/sbin/ip',
      tc: bins.tc ?? '/usr/sbin/tc',
      log: host.log,
    });
    // queued before any op can run (ops wait behind it): a window that ran out while the host
    // was down is restored first, a running one gets its timer back
    void changes
      .recover()
      .catch((e) =>
        host.log(`network: could not recover the pending change: ${e instanceof Error ? e.message : String(e)}`),
      );
    return { ops: changeOps(changes), onStop: () => changes.stop() };
  },
});
