import { ApiError } from '../../core/errors';
import { baseHeaders } from '../../core/http';
import { route } from '../../core/route';
import { areaSettings } from '../../core/settings';
import { REGENERATE_OP, certificateSettings, type RegenerateResult } from '../contract';
import { restartUnits, type Restarts } from '../restart';
import { regenerateAnswer } from '../responses';

export default route({
  method: 'POST',
  path: '/certificate/regenerate',
  permission: 'certificate:manage',
  summary:
    'New self-signed server certificate and key (root and intermediate removed; a pending ingest is superseded), TLS reloaded, the running modules of settings.certificate.restartUnits restarted; 204',
  response: regenerateAnswer,
  examples: [{ summary: 'a fresh self-signed certificate', status: 204 }],
  async handler({ system, vars, events, requestId }) {
    const r = await system.op<RegenerateResult>(REGENERATE_OP, {});
    if (!r.ok)
      throw new ApiError('command_failed', r.failure.message, {
        details: { command: r.failure.command, exitCode: r.failure.exitCode, stderr: r.failure.stderr },
      });
    const units = areaSettings(vars, 'certificate', certificateSettings).restartUnits;
    const regenerated = (x: Restarts) =>
      events.send({
        kind: 'certificate.tls.regenerated',
        data: { subject: r.subject, keyType: r.keyType, notAfter: r.notAfter, ...x, endedWindow: r.endedWindow },
      });
    let restarts: Restarts;
    try {
      restarts = await restartUnits(system, vars, units);
    } catch (e) {
      // the certificate is in place: the event says so, with nothing restarted
      await regenerated({ restarted: [], notRunning: [], notInstalled: [] });
      if (e instanceof ApiError)
        throw new ApiError(
          e.code,
          `the certificate was regenerated, but restarting ${units.join(', ')} failed: ${e.message}`,
          { details: e.details },
        );
      throw e;
    }
    await regenerated(restarts);
    // a 204 has no content, so nothing for a Content-Type to describe (RFC 9110 §8.3, §15.3.5)
    const { 'content-type': _none, ...headers } = baseHeaders(vars, requestId);
    return new Response(null, { status: 204, headers });
  },
});
