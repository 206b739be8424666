import { keysSettings, type KeysSettings } from '../../handlers/keys/contract';
import { keysOps } from './keys/ops';
import { defineArea } from './types';

/**
 * System keys: the API user's key pair and users' authorized_keys. Homes are not configured
 * paths (they come from the user database), so every file goes through the area's host ops,
 * confined to settings.keys.homeRoots.
 */
export default defineArea<KeysSettings>({
  name: 'keys',
  settings: keysSettings,
  binaries: { getent: '/usr/bin/getent', runuser: '/usr/sbin/runuser', sshKeygen: '/usr/bin/ssh-keygen' },
  setup: (host) => ({
    ops: keysOps({
      settings: host.settings,
      db: host.db,
      system: host.system,
      bin: host.config.system.binaries,
      replay: host.config.system.mode === 'replay',
      checkOwner: (real, o) => host.checkOwner(real, 'keys.home', o),
    }),
    // no command takes these: the kind makes the host check homes for other owners' files and
    // report home roots that reach them at start
    confine: { roots: { 'keys.home': host.settings.homeRoots } },
  }),
});
