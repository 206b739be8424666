import * as z from 'zod';
import { route } from '../../core/route';
import { commandFailed } from '../../core/system';
import { exec, lctl } from '../commands';
import { nid } from '../names';
import { parseLctlPing } from '../parse/lctl-ping';
import { pingResult } from '../responses';

export default route({
  method: 'GET',
  path: '/dfs/lnet/:nid/ping',
  permission: 'dfs:read',
  summary:
    'Ping a NID over LNet (lctl ping <nid>): the NIDs the peer answers with; a peer that does not answer is a 200 with the failure in warnings',
  params: z.object({ nid: nid.describe('e.g. 10.10.0.21@tcp') }),
  response: pingResult,
  examples: [{ summary: 'the demo OSS', params: { nid: '10.10.0.21@tcp' } }],
  async handler({ params, system, vars }) {
    // NIDs never start with '-' (validated), and lctl's command parser does not take '--'
    const argv = lctl(vars, 'ping', params.nid);
    const r = await exec(system, vars, argv, 'pingMs');
    if (r.code !== 0) {
      // "failed to ping <nid>: <strerror>": stdout on the netlink path (2.15+), stderr on the ioctl path
      const failures = `${r.stdout}\n${r.stderr}`
        .split('\n')
        .filter((l) => /^failed to ping \S+: /.test(l.trim()))
        .map((l) => l.trim());
      if (failures.length === 0) throw commandFailed(argv, r);
      return { warnings: failures.join('\n'), raw: r.stdout + r.stderr, parsed: [] };
    }
    return { warnings: r.stderr.trim(), raw: r.stdout, parsed: parseLctlPing(r.stdout).nids };
  },
});
