import { conflict } from '../../core/errors';
import { route } from '../../core/route';
import { emitNetworkEvent } from '../events';
import { linkSetArgv } from '../argv';
import { inetStanza } from '../config-files';
import { openChange } from '../change-window';
import { lockoutConflict } from '../guard';
import { deviceParams, updateBody } from '../requests';
import { networkInterface } from '../responses';
import { addrOf, describeInterface, managedLink, networkContext, readSnapshot } from '../state';
import { commit } from '../transaction';

/**
 * Runtime only: `ip link set dev X up|down`. The stanza (and its `auto` line) is not changed,
 * so the interface comes back as configured at the next boot; the spec's transition applies to
 * configured interfaces only, hence 409 for one without an inet stanza.
 */
export default route({
  method: 'POST',
  path: '/network/interface/:device_name/update',
  permission: 'network:manage',
  examples: [
    {
      summary: 'take eno2 down',
      params: { device_name: 'eno2' },
      body: { state: 'down' },
      // down, its DHCP lease still on it
      then: [
        {
          method: 'GET',
          path: '/network/interface/eno2/details',
          shows: [{ link: 'eno2', state: 'down', ipv4: { address: '10.1.2.50/24' } }],
        },
      ],
    },
  ],
  // one change to the interfaces files and links at a time: each plans from what it read
  lock: 'network-config',
  summary: 'Bring a configured interface up or down',
  params: deviceParams,
  body: updateBody,
  response: networkInterface,
  async handler({ params, body, system, vars, events, connection }) {
    const c = networkContext(system, vars);
    const s = await readSnapshot(c);
    const dev = params.device_name;
    managedLink(c, s, dev);
    if (!inetStanza(s.config, dev)) {
      // up and addressed without a stanza: someone else manages it (by hand, a DHCP client,
      // another tool); say so rather than "not configured", which it plainly is
      const inet = (addrOf(s, dev)?.addresses ?? [])
        .filter((a) => a.family === 'inet')
        .map((a) => `${a.local}/${a.prefixlen}`);
      if (inet.length > 0) {
        throw conflict(
          `${dev} has ${inet.join(', ')} but no stanza in the interfaces files: it is managed outside them (by hand, a DHCP client or another tool); configure it through this API first to manage it here`,
          { device: dev, addresses: inet },
        );
      }
      throw conflict(`${dev} is not configured; configure it first`, { device: dev });
    }
    const guard = body.state === 'down' ? lockoutConflict(connection, s.addrs, [dev], 'take down') : null;
    const change = await openChange(system, c.settings, {
      change: `${body.state} ${dev}`,
      devices: [dev],
      body,
      guard,
    });
    await commit(system, [], [{ argv: linkSetArgv(c.bins, dev, { state: body.state }), undo: [] }], { change });
    await emitNetworkEvent(events, 'network.interface.updated', { device: dev, state: body.state });
    return describeInterface(c, dev);
  },
});
