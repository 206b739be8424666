import { createTargetRoute } from '../create-target';

export default createTargetRoute('mdt', [
  {
    summary: 'MDT 1 of demofs on mdtpool',
    body: { fsName: 'demofs', poolName: 'mdtpool', index: '1', mgs_node: '10.10.0.11@tcp', persist: false },
  },
]);
