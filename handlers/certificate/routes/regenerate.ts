import { ApiError } from '../../core/errors';
import { baseHeaders } from '../../core/http';
import { route } from '../../core/route';
import { bin } from '../../core/vars';
import { REGENERATE_OP, certificateSettings, type RegenerateResult } from '../contract';
import { RegenerateResponse } from '../schemas';

export default route({
  method: 'POST',
  path: '/certificate/regenerate',
  permission: 'certificate:manage',
  summary:
    'New self-signed server certificate and key (root and intermediate removed; a pending ingest is superseded), TLS reloaded, the configured units restarted; 204',
  response: RegenerateResponse,
  examples: [{ summary: 'a fresh self-signed certificate', status: 204 }],
  async handler({ system, vars, events, requestId }) {
    const r = await system.op<RegenerateResult>(REGENERATE_OP, {});
    if (!r.ok)
      throw new ApiError('command_failed', r.failure.message, {
        details: { command: r.failure.command, exitCode: r.failure.exitCode, stderr: r.failure.stderr },
      });
    const units = certificateSettings(vars.settings).restartUnits;
    const restarted: string[] = [];
    if (units.length) {
      try {
        await system.run([bin(vars, 'systemctl'), 'restart', '--', ...units]);
        restarted.push(...units);
      } catch (e) {
        await events.send({
          kind: 'certificate.regenerated',
          data: { subject: r.subject, keyType: r.keyType, notAfter: r.notAfter, restarted, endedWindow: r.endedWindow },
        });
        if (e instanceof ApiError)
          throw new ApiError(
            e.code,
            `the certificate was regenerated, but restarting ${units.join(', ')} failed: ${e.message}`,
            { details: e.details },
          );
        throw e;
      }
    }
    await events.send({
      kind: 'certificate.regenerated',
      data: { subject: r.subject, keyType: r.keyType, notAfter: r.notAfter, restarted, endedWindow: r.endedWindow },
    });
    return new Response(null, { status: 204, headers: baseHeaders(vars, requestId) });
  },
});
