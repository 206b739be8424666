import { ApiError } from '../../core/errors';
import { route } from '../../core/route';
import { commandFailed } from '../../core/system';
import { bin } from '../../core/vars';
import { dfsPath, exec } from '../commands';
import { normaliseDir, renderFlrConfig } from '../flr';
import { flrServiceMissing, requireFlrService, unitNotFound } from '../flr-service';
import { flrConfigBody } from '../requests';
import { flrConfig } from '../responses';

/**
 * The update the spec leaves open: write the whole configuration atomically (previous version
 * kept) and restart the synchronisation service; a failed restart puts the previous file back.
 * The service is the site's (README, "FLR synchronisation"): without its unit this is a 501.
 */
export default route({
  method: 'POST',
  path: '/dfs/flr/update',
  permission: 'dfs:manage',
  summary:
    'Replace the FLR synchronisation configuration (atomic write of paths.dfsFlrConfig) and restart its service (systemctl restart <settings.dfs.flrService>); answers the new configuration; 501 when that unit does not exist',
  body: flrConfigBody,
  response: flrConfig,
  lock: 'dfs-flr',
  examples: [
    {
      summary: 'sync two project trees every 10 minutes',
      body: {
        max_history_size: 2000,
        run_interval: 600,
        directories: ['/mnt/lustre/demofs/projects', '/mnt/lustre/demofs/shared'],
      },
    },
  ],
  async handler({ body, system, vars, events }) {
    // The directories are written for the service, never opened here: absolute, no `..`, normalised.
    const dirs = body.directories.map((d) => normaliseDir(d));
    if (new Set(dirs).size !== dirs.length)
      throw new ApiError('validation_failed', 'directories repeat once normalised', {
        issues: [{ path: 'body.directories', message: 'must not repeat' }],
      });
    const unit = await requireFlrService(system, vars);
    const cfg = { max_history_size: body.max_history_size, run_interval: body.run_interval, directories: dirs };
    const file = dfsPath(vars, 'flrConfig');
    const w = await system.writeFile(file, renderFlrConfig(cfg), { mode: 0o644, backup: true });
    const argv = [bin(vars, 'systemctl'), 'restart', '--', unit];
    const r = await exec(system, vars, argv, 'systemctlMs').catch(async (e: unknown) => {
      if (w.backupPath) await system.restoreFile(file);
      else await system.removeFile(file);
      throw e;
    });
    if (r.code !== 0) {
      if (w.backupPath) await system.restoreFile(file);
      else await system.removeFile(file);
      // the unit went away between the check and the restart
      if (unitNotFound(r)) throw flrServiceMissing(unit);
      throw commandFailed(
        argv,
        r,
        `the FLR service did not restart (previous configuration restored): ${r.stderr.trim().split('\n')[0] ?? ''}`,
      );
    }
    await events.send({
      kind: 'dfs.flr.updated',
      data: {
        maxHistorySize: cfg.max_history_size,
        runInterval: cfg.run_interval,
        directories: cfg.directories.length,
      },
    });
    return cfg;
  },
});
