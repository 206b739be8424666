import * as z from 'zod';
import { route } from '../../core/route';
import { commandFailed } from '../../core/system';
import { exec, lctl } from '../commands';
import { nid } from '../names';
import { parseLctlPing } from '../parse/lctl-ping';
import { pingResult } from '../schemas';

export default route({
  method: 'GET',
  path: '/dfs/lnet/:nid/ping',
  permission: 'dfs:read',
  summary: 'Ping a NID over LNet (lctl ping <nid>): the NIDs the peer answers with; a peer that does not answer is a 200 with the failure in warnings',
  params: z.object({ nid: nid.describe('e.g. 10.10.0.21@tcp') }),
  response: pingResult,
  examples: [{ summary: 'the demo OSS', params: { nid: '10.10.0.21@tcp' } }],
  async handler({ params, system, vars }) {
    // NIDs never start with '-' (validated), and lctl's command parser does not take '--'
    const argv = lctl(vars, 'ping', params.nid);
    const r = await exec(system, vars, argv, 'pingMs');
    const out = parseLctlPing(`${r.stdout}\n${r.code === 0 ? '' : r.stderr}`);
    if (r.code !== 0) {
      if (out.failures.length === 0) throw commandFailed(argv, r);
      return { warnings: out.failures.map((f) => `failed to ping ${f.nid}: ${f.error}`).join('\n'), raw: r.stdout + r.stderr, parsed: out.nids };
    }
    return { warnings: r.stderr.trim(), raw: r.stdout, parsed: out.nids };
  },
});
