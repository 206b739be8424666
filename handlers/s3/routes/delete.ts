import { route } from '../../core/route';
import { S3_STYLE } from '../../core/http';
import { ApiError, conflict, notFound } from '../../core/errors';
import { commandFailed } from '../../core/system';
import { bin } from '../../core/vars';
import { beginIntent, endIntent, finishDelete, RETRIED_BY, unfinishedText } from '../journal';
import { envPath, envPrevPath, serviceName, unitPath } from '../names';
import { emptyObject } from '../../core/schemas';
import { deleteParams } from '../requests';
import { settleFirst } from '../settle-op';
import { deletedAnswer } from '../responses';

/** `systemctl stop` exit 5: the unit is not loaded (never reloaded, broken): nothing runs, go on. */
const STOP_NOT_LOADED = 5;

export default route({
  method: 'POST',
  path: '/api/:version/s3/:share_name/delete',
  permission: 's3:manage',
  summary:
    'Delete an S3 share: stop and disable its service, remove the unit and the environment file, daemon-reload; the exported directory is untouched. Only version v2 exists',
  style: S3_STYLE,
  params: deleteParams,
  body: emptyObject,
  response: deletedAnswer,
  lock: 's3',
  examples: [
    {
      summary: 'delete the demo share media',
      params: { version: 'v2', share_name: 'media' },
      then: [{ method: 'GET', path: '/s3/media/details', status: 404, shows: { error: { code: 'not_found' } } }],
    },
    { summary: 'version v1 does not exist', params: { version: 'v1', share_name: 'backup' }, status: 404 },
  ],
  async handler({ params, system, vars, db, events, requestId }) {
    if (params.version !== 'v2') {
      throw new ApiError(
        'route_not_found',
        `no route POST /api/${params.version}/s3/${params.share_name}/delete (the only API version is v2)`,
      );
    }
    const name = params.share_name;
    const svc = serviceName(name);
    await settleFirst(system, name);
    if ((await system.stat(unitPath(vars, name))) === null) throw notFound(`no S3 share ${name}`);
    if (!(await beginIntent(db, name, 'delete', requestId))) {
      throw conflict(`another change of S3 share ${name} is in progress`, {
        shareName: name,
      });
    }
    const systemctl = bin(vars, 'systemctl');
    try {
      const stopArgv = [systemctl, 'stop', '--', svc];
      const stop = await system.exec(stopArgv);
      if (stop.code !== 0 && stop.code !== STOP_NOT_LOADED) throw commandFailed(stopArgv, stop);
      await system.run([systemctl, 'disable', '--', svc]);
    } catch (e) {
      // nothing removed yet: the share still exists (its service may be stopped)
      await endIntent(db, name);
      if (e instanceof ApiError)
        throw new ApiError(e.code, `delete of S3 share ${name} failed: ${e.message}; the share still exists`, {
          details: e.details,
        });
      throw e;
    }
    try {
      await system.removeFile(envPath(vars, name));
      await system.removeFile(envPrevPath(vars, name));
      await system.removeFile(unitPath(vars, name));
      await system.run([systemctl, 'daemon-reload']);
    } catch (e) {
      const again = await finishDelete(system, vars, name);
      if (!again.complete) {
        if (e instanceof ApiError) {
          throw new ApiError(
            e.code,
            `delete of S3 share ${name} failed part way: ${e.message}; the share is partly deleted: ${unfinishedText(again.steps)} (${RETRIED_BY})`,
            { details: { ...(e.details ?? {}), steps: again.steps } },
          );
        }
        throw e;
      }
    }
    await endIntent(db, name);
    await events.send({ kind: 's3.share.deleted', data: { shareName: name } });
    return `S3 share ${name} deleted: service ${svc} stopped, disabled and removed (the exported directory is unchanged)`;
  },
});
