import { route } from '../../core/route';
import { CHANGE_ROLLBACK_OP, type PendingChange, type RollbackReport } from '../contract';
import { rollbackBody } from '../requests';
import { rollbackAnswer } from '../responses';

export default route({
  method: 'POST',
  path: '/network/rollback',
  permission: 'network:manage',
  examples: [
    {
      summary: 'put back what the configuration of eno5 with a 30 s window changed, now',
      body: {},
      before: [
        {
          method: 'POST',
          path: '/network/interface/configure',
          body: {
            device: 'eno5',
            isdhcp: false,
            address: '192.168.50.10',
            netmask: '255.255.255.0',
            confirmWithin: 30,
          },
        },
      ],
      then: [{ method: 'GET', path: '/network/pending', shows: { pending: null } }],
    },
    { summary: 'nothing is waiting on a fresh demo', body: {}, status: 409 },
  ],
  summary: 'Restore the checkpoint of the pending network change now (files, then addresses, routes, links, ports, tc)',
  body: rollbackBody,
  response: rollbackAnswer,
  async handler({ body, system }) {
    const r = await system.op<{ change: PendingChange; report: RollbackReport }>(
      CHANGE_ROLLBACK_OP,
      body.id === undefined ? {} : { id: body.id },
    );
    const left = r.report.unrestored.length;
    return {
      message: left
        ? `network change ${r.change.id} rolled back; ${left} difference(s) from the checkpoint remain (report.unrestored)`
        : `network change ${r.change.id} rolled back; the checkpoint is restored`,
      ...r,
    };
  },
});
