import { route } from '../../core/route';
import { CHANGE_CONFIRM_OP, type PendingChange } from '../contract';
import { confirmBody } from '../requests';
import { confirmAnswer } from '../responses';

export default route({
  method: 'POST',
  path: '/network/confirm',
  permission: 'network:manage',
  examples: [
    {
      summary: 'keep the configuration of eno5 made with a 30 s window (change 1 on a fresh demo)',
      body: { id: 1 },
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
    { summary: 'nothing is waiting on a fresh demo', body: { id: 1 }, status: 409 },
  ],
  summary: 'Keep a network change made with confirmWithin: its checkpoint is dropped and no rollback comes',
  body: confirmBody,
  response: confirmAnswer,
  async handler({ body, system }) {
    const change = await system.op<PendingChange>(CHANGE_CONFIRM_OP, { id: body.id });
    return { message: `network change ${change.id} (${change.change}) confirmed`, change };
  },
});
