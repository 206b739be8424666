import { route } from '../../core/route';
import { S3_STYLE } from '../../core/http';
import { conflict, notFound } from '../../core/errors';
import { bin } from '../../core/vars';
import { beginIntent, endIntent, undoUpdate, withRollback } from '../journal';
import { envPath, envPrevPath, serviceName, unitPath } from '../names';
import { renderEnvFile } from '../render/env-file';
import { credentialWarnings } from '../credentials';
import { shareParams, updateBody } from '../requests';
import { shareChangedAnswer } from '../responses';
import { settleFirst } from '../settle-op';
import { readEnv } from '../shares';
import { areaSettings } from '../../core/settings';
import { s3Settings } from '../contract';

export default route({
  method: 'POST',
  path: '/s3/:share_name/update',
  permission: 's3:manage',
  long: { budgetS: 300, phases: ['write', 'restart'] },
  summary:
    'Change the root user and/or root password of an S3 share: rewrite its environment file (0600) and restart its service if it runs (a stopped share stays stopped)',
  style: S3_STYLE,
  params: shareParams,
  body: updateBody,
  response: shareChangedAnswer,
  lock: 's3',
  examples: [
    {
      summary: 'new secret key for the demo share backup',
      params: { share_name: 'backup' },
      body: { rootPassword: 'N3w-Backup-Secret' },
    },
    { summary: 'an unknown share', params: { share_name: 'nosuch' }, body: { rootUser: 'someone' }, status: 404 },
  ],
  async handler({ params, body, system, vars, db, events, requestId }) {
    const settings = areaSettings(vars, 's3', s3Settings);
    const name = params.share_name;
    const svc = serviceName(name);
    await settleFirst(system, name);
    if ((await system.stat(unitPath(vars, name))) === null) throw notFound(`no S3 share ${name}`);
    const old = await readEnv({ system, vars }, settings, name);
    if (!old)
      throw conflict(`S3 share ${name} has no environment file (${envPath(vars, name)}); delete and create it again`, {
        shareName: name,
      });
    const rootUser = body.rootUser ?? old.values.rootUser;
    const rootPassword = body.rootPassword ?? old.values.rootPassword;
    const envText = renderEnvFile({
      shareName: name,
      rootUser,
      rootPassword,
      path: old.values.path,
      port: old.values.port,
      env: settings.env,
    });

    // nothing is pending (settleFirst): a previous version still here is stale and must not be restored by this update
    await system.removeFile(envPrevPath(vars, name));
    if (!(await beginIntent(db, name, 'update', requestId))) {
      throw conflict(`another change of S3 share ${name} is in progress`, {
        shareName: name,
      });
    }
    try {
      await system.progress({ phase: 'write', step: 1, steps: 2, message: `writing the settings of ${svc}` });
      await system.writeFile(envPrevPath(vars, name), old.text, { mode: 0o600 });
      await system.writeFile(envPath(vars, name), envText, { mode: 0o600 });
      // try-restart: a share an operator stopped stays stopped and reads the new file at its next start
      await system.progress({ phase: 'restart', step: 2, steps: 2, message: `restarting ${svc}` });
      await system.run([bin(vars, 'systemctl'), 'try-restart', '--', svc]);
    } catch (e) {
      const undo = await undoUpdate(system, vars, name);
      if (undo.complete) await endIntent(db, name);
      throw withRollback(
        e,
        `update of S3 share ${name}`,
        undo,
        'the previous environment file was put back (the service restarted if it runs)',
      );
    }
    await system.removeFile(envPrevPath(vars, name));
    await endIntent(db, name);
    const changed = (['rootUser', 'rootPassword'] as const).filter((k) => body[k] !== undefined);
    await events.send({ kind: 's3.share.updated', data: { shareName: name, changed } });
    const warnings = credentialWarnings(rootUser, rootPassword);
    return {
      shareName: name,
      serviceName: svc,
      raw: envText,
      ...(warnings.length ? { warnings: warnings.join('\n') } : {}),
    };
  },
});
