import { route } from '../../core/route';
import { S3_STYLE } from '../../core/http';
import { ApiError, conflict, forbidden, validationFailed } from '../../core/errors';
import { areaSettings } from '../../core/settings';
import { bin } from '../../core/vars';
import { beginIntent, endIntent, undoCreate, withRollback, type CreateProgress } from '../journal';
import { envPath, serviceName, unitPath } from '../names';
import { renderEnvFile } from '../render/env-file';
import { renderUnit } from '../render/unit';
import { RESOLVE_PATH_OP, s3Settings, type ResolvePathResult } from '../contract';
import { credentialWarnings } from '../credentials';
import { createBody } from '../requests';
import { shareChangedAnswer } from '../responses';
import { settleFirst } from '../settle-op';
import { checkPortFree } from '../shares';

export default route({
  method: 'POST',
  path: '/s3/create',
  permission: 's3:manage',
  long: { budgetS: 300, phases: ['write', 'start'] },
  summary:
    'Create an S3 share: its environment file (0600) and unit s3-<shareName>.service, then daemon-reload, enable and start',
  style: S3_STYLE,
  body: createBody,
  response: shareChangedAnswer,
  lock: 's3',
  examples: [
    {
      summary: 'share /srv/projects on port 9200',
      body: {
        shareName: 'projects',
        path: '/srv/projects',
        port: '9200',
        rootUser: 'projects-admin',
        rootPassword: 'Sup3r-Secret-Key',
      },
      then: [
        {
          method: 'GET',
          path: '/s3/list',
          shows: { projects: { shareName: 'projects', path: '/srv/projects', port: '9200', enabled: true } },
        },
      ],
    },
    {
      summary: 'weak credentials: created, with warnings that the service will not start',
      body: { shareName: 'lab', path: '/srv/lab', port: '9300', rootUser: 'ab', rootPassword: 'short' },
    },
    {
      summary: "port 9000 is the media share's",
      body: {
        shareName: 'other',
        path: '/srv/projects',
        port: '9000',
        rootUser: 'other-admin',
        rootPassword: 'Other-Secret-Key',
      },
      status: 409,
    },
  ],
  async handler({ body, system, vars, db, events, requestId }) {
    const c = { system, vars };
    const settings = areaSettings(vars, 's3', s3Settings);
    const name = body.shareName;
    const svc = serviceName(name);
    const unitFile = unitPath(vars, name);
    const envFile = envPath(vars, name);
    await settleFirst(system, name);
    if ((await system.stat(unitFile)) !== null) throw conflict(`S3 share ${name} already exists`, { shareName: name });
    if ((await system.stat(envFile)) !== null)
      throw conflict(`S3 share ${name}: an environment file ${envFile} already exists`, { shareName: name });

    const resolved = await system.op<ResolvePathResult>(RESOLVE_PATH_OP, { path: body.path });
    if (!resolved.ok) {
      if (resolved.reason === 'missing') throw validationFailed('body.path', `${body.path} does not exist`);
      if (resolved.reason === 'not-directory') throw validationFailed('body.path', `${body.path} is not a directory`);
      throw forbidden(
        `${body.path} is outside the directories shares may be made of (settings.s3.shareRoots: ${settings.shareRoots.join(', ')})`,
      );
    }
    await checkPortFree(c, settings, body.port);

    const envText = renderEnvFile({
      shareName: name,
      rootUser: body.rootUser,
      rootPassword: body.rootPassword,
      path: resolved.path,
      port: body.port,
      env: settings.env,
    });
    const unitText = renderUnit({ shareName: name, envFile, settings });
    const systemctl = bin(vars, 'systemctl');

    if (!(await beginIntent(db, name, 'create', requestId))) {
      throw conflict(`another change of S3 share ${name} is in progress`, {
        shareName: name,
      });
    }
    const progress: CreateProgress = { envWritten: false, unitWritten: false, enabled: false, started: false };
    try {
      await system.progress({ phase: 'write', step: 1, steps: 2, message: `writing the unit of ${svc}` });
      await system.writeFile(envFile, envText, { mode: 0o600, exclusive: true });
      progress.envWritten = true;
      await system.writeFile(unitFile, unitText, { mode: 0o644, exclusive: true });
      progress.unitWritten = true;
      await system.progress({ phase: 'start', step: 2, steps: 2, message: `starting ${svc}` });
      await system.run([systemctl, 'daemon-reload']);
      await system.run([systemctl, 'enable', '--', svc]);
      progress.enabled = true;
      await system.run([systemctl, 'start', '--', svc]);
      progress.started = true;
    } catch (e) {
      if (e instanceof ApiError && e.status === 409 && !progress.envWritten) {
        await endIntent(db, name);
        throw conflict(`S3 share ${name} already exists`, { shareName: name });
      }
      const undo = await undoCreate(system, vars, name, progress);
      if (undo.complete) await endIntent(db, name);
      throw withRollback(e, `create of S3 share ${name}`, undo, 'files removed, daemon reloaded');
    }
    await endIntent(db, name);
    await events.send({ kind: 's3.share.created', data: { shareName: name, path: resolved.path, port: body.port } });
    const warnings = credentialWarnings(body.rootUser, body.rootPassword);
    return {
      shareName: name,
      serviceName: svc,
      raw: unitText,
      ...(warnings.length ? { warnings: warnings.join('\n') } : {}),
    };
  },
});
