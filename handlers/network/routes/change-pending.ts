import { route } from '../../core/route';
import { API_BASE } from '../../core/route-module';
import { CHANGE_PENDING_OP, type PendingChange } from '../contract';
import { pendingAnswer } from '../responses';

export default route({
  method: 'GET',
  path: '/network/pending',
  permission: 'network:read',
  examples: [
    {
      summary: 'eno5 was configured with a 30 s window: the change, its deadline and how to confirm it',
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
    },
    { summary: 'a fresh demo: nothing is waiting' },
  ],
  summary:
    'The network change waiting for its confirmation (null when none): what it changed, its deadline, how to confirm',
  response: pendingAnswer,
  async handler({ system, vars }) {
    const { pending } = await system.op<{ pending: PendingChange | null }>(CHANGE_PENDING_OP, {});
    return {
      pending,
      confirm: pending
        ? { method: 'POST' as const, path: `${vars?.basePath ?? API_BASE}/network/confirm`, body: { id: pending.id } }
        : null,
    };
  },
});
