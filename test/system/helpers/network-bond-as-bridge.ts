/**
 * The host's `ip` where a test needs a bond on this kernel, which has no bonding module
 * (network-kill.test.ts, network-confirm.test.ts): a wrapper that creates a bridge for
 * `type bond` and shows bridges and their ports as a bond and bond ports in `ip -j` output.
 */
import { IP } from './netns';

/**
 * The host's `ip` for the bond loop: bridge for bond (see the header). CommonJS, run by this
 * node. With the file `<hold>.on` present, `link del` (the last step of unbind) does its work,
 * creates `<hold>.done` and then waits, so a test can kill the host exactly between the delete
 * and the end of the change.
 */
export const bondAsBridge = (hold: string) => `#!${process.execPath}
// Ballast network kill test: stands in for a bond on a kernel without the bonding module.
'use strict';
const { spawnSync } = require('node:child_process');
const a = process.argv.slice(2);
let argv = a;
// ip link add name X type bond <bond options>  ->  ip link add name X type bridge
if (a[0] === 'link' && a[1] === 'add' && a[2] === 'name' && a[4] === 'type' && a[5] === 'bond')
  argv = ['link', 'add', 'name', a[3], 'type', 'bridge'];
const r = spawnSync('${IP}', argv, { encoding: 'utf8' });
let out = r.stdout;
if (r.status === 0 && a[0] === '-j' && out.trim() !== '') {
  const recs = JSON.parse(out);
  for (const rec of recs) {
    const li = rec.linkinfo;
    if (!li) continue;
    if (li.info_kind === 'bridge') {
      li.info_kind = 'bond';
      li.info_data = { mode: '802.3ad', miimon: 100, updelay: 200, downdelay: 200, ad_lacp_rate: 'fast', xmit_hash_policy: 'layer3+4' };
    }
    if (li.info_slave_kind === 'bridge') {
      li.info_slave_kind = 'bond';
      li.info_slave_data = { state: 'ACTIVE', mii_status: 'UP' };
    }
  }
  out = JSON.stringify(recs) + '\\n';
}
if (r.status === 0 && a[0] === 'link' && a[1] === 'del' && require('node:fs').existsSync('${hold}.on')) {
  require('node:fs').writeFileSync('${hold}.done', '');
  spawnSync('/bin/sleep', ['60']);
}
process.stdout.write(out);
process.stderr.write(r.stderr);
process.exit(r.status === null ? 1 : r.status);
`;
