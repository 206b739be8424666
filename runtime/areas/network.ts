import { networkSettings, type NetworkSettings } from '../../handlers/network/contract';
import { defineArea } from './types';

/** Network interfaces and bonds: everything runs in the routes; the host checks the settings. */
export default defineArea<NetworkSettings>({
  name: 'network',
  settings: networkSettings,
  paths: {
    networkInterfaces: { default: '/etc/network/interfaces', kind: 'file' },
    networkInterfacesD: { default: '/etc/network/interfaces.d', kind: 'dir' },
  },
  binaries: { ip: '/usr/sbin/ip', ethtool: '/usr/sbin/ethtool' },
});
