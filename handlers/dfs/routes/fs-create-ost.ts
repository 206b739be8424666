import { createTargetRoute } from '../create-target';

export default createTargetRoute('ost', [
  {
    summary: 'OST 2 of demofs on the spare pool ostpool, persistent',
    body: { fsName: 'demofs', poolName: 'ostpool', index: '2', mgs_node: '10.10.0.11@tcp', persist: true },
  },
]);
