import { join } from 'node:path';
import { s3Settings, type S3Settings } from '../../handlers/s3/contract';
import { s3Ops } from './s3/ops';
import { intentsNow, settleAtStart, settleOp } from './s3/settle';
import { defineArea } from './types';

/** S3 shares: one systemd service per share; the host resolves share paths and settles unfinished changes. */
export default defineArea<S3Settings>({
  name: 's3',
  settings: s3Settings,
  paths: {
    s3UnitDir: { default: '/etc/systemd/system', kind: 'dir' },
    s3EnvDir: { default: '/etc/ballast/s3', kind: 'dir' },
  },
  binaries: { ss: '/usr/bin/ss', systemctl: '/usr/bin/systemctl' },
  setup: (host) => {
    // read before the server listens: the start-up task settles only what an earlier process left
    const leftOver = intentsNow(host);
    return {
      ops: {
        ...s3Ops({
          settings: host.settings,
          db: host.db,
          checkOwner: (real, o) => host.checkOwner(real, 's3.share', o),
        }),
        ...settleOp(host),
      },
      // no command takes these: the kind makes the host check share paths for other owners' files
      // and report share roots that reach them at start
      confine: { roots: { 's3.share': host.settings.shareRoots.map((r) => join(host.settings.pathRoot, r)) } },
      // unfinished creates and updates rolled back, deletes completed; logged, `s3.share.recovered`
      onStart: async () => {
        await settleAtStart(host, leftOver);
      },
    };
  },
});
