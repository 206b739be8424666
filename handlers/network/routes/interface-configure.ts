import { conflict } from '../../core/errors';
import { route } from '../../core/route';
import { emitNetworkEvent } from '../events';
import { ConfigEdit, inetStanza } from '../config-files';
import { openChange } from '../change-window';
import { lockoutConflict } from '../guard';
import { planAddressing } from '../plan';
import { configureBody } from '../requests';
import { networkInterface } from '../responses';
import { configuredMaster, configureStanza } from '../stanzas';
import { addrOf, describeInterface, managedLink, networkContext, readSnapshot } from '../state';
import { commit } from '../transaction';

export default route({
  method: 'POST',
  path: '/network/interface/configure',
  permission: 'network:manage',
  // DHCP waits for a lease (dhclient/dhcpcd), a static change runs a few ip commands
  long: { budgetS: 180, phases: [] },
  examples: [
    {
      summary: 'a static address on the spare port eno5',
      body: { device: 'eno5', isdhcp: false, address: '192.168.50.10', netmask: '255.255.255.0' },
      then: [
        {
          method: 'GET',
          path: '/network/interface',
          shows: [
            {
              link: 'eno5',
              state: 'up',
              config: { mode: 'static', address: '192.168.50.10' },
              ipv4: { type: 'static', address: '192.168.50.10/24' },
            },
          ],
        },
      ],
    },
  ],
  // one change to the interfaces files and links at a time: each plans from what it read
  lock: 'network-config',
  summary: 'Configure an interface for DHCP or a static address: writes its ifupdown stanza and applies it now',
  body: configureBody,
  response: networkInterface,
  async handler({ body, system, vars, events, connection }) {
    const c = networkContext(system, vars);
    const s = await readSnapshot(c);
    const dev = body.device;
    const link = managedLink(c, s, dev);
    const old = inetStanza(s.config, dev);
    // a port gets no address of its own: the bond carries it
    const master = link.master ?? configuredMaster(old);
    if (master)
      throw conflict(`${dev} is a port of ${master}; configure ${master}, or take ${dev} out of it first`, {
        device: dev,
        master,
      });
    const guard = lockoutConflict(connection, s.addrs, [dev], 're-address');

    const stanza = configureStanza(dev, body.addressing, body.options, old);
    const files = new ConfigEdit(s.config).setStanza(stanza).changes();
    const steps = planAddressing(c.bins, { link, addr: addrOf(s, dev) }, body.addressing, {
      wasDhcp: old?.method === 'dhcp',
      dhcpTimeoutMs: c.settings.dhcpTimeoutMs,
    });
    const change = await openChange(system, c.settings, { change: `configure ${dev}`, devices: [dev], body, guard });
    await commit(system, files, steps, { change });

    const { method, ip, prefix, mtu } = body.addressing;
    const data = {
      device: dev,
      mode: method,
      ...(ip ? { address: `${ip}/${prefix}` } : {}),
      ...(mtu ? { mtu } : {}),
      options: body.options.map((o) => o.name),
    };
    await emitNetworkEvent(events, 'network.interface.configured', data);
    return describeInterface(c, dev);
  },
});
