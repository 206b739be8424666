import { route } from '../../core/route';
import { emitNetworkEvent } from '../events';
import { bondParams, BOND_MODES, LACP_RATES, nextBondName, XMIT_HASH_POLICIES } from '../bond';
import { ConfigEdit, hasAnyStanza } from '../config-files';
import { openChange } from '../change-window';
import { lastAddressConflict, lockoutConflict } from '../guard';
import { planBind } from '../plan';
import { newPorts } from '../ports';
import { bindBody } from '../requests';
import { networkInterface } from '../responses';
import { bondStanza, portStanza } from '../stanzas';
import { describeInterface, linkOf, networkContext, readSnapshot } from '../state';
import { commit } from '../transaction';

export default route({
  method: 'POST',
  path: '/network/interface/bind',
  permission: 'network:manage',
  examples: [
    {
      summary: 'a bond over eno5 with a static address',
      body: { isdhcp: false, address: '10.30.0.10', netmask: '255.255.255.0', slaves: 'eno5' },
      then: [
        {
          method: 'GET',
          path: '/network/interface',
          shows: [
            { link: 'bond1', config: { slaves: 'eno5' }, ipv4: { address: '10.30.0.10/24' } },
            { link: 'eno5', config: { 'bond-master': 'bond1' } },
          ],
        },
      ],
    },
  ],
  // one change to the interfaces files and links at a time: each plans from what it read
  lock: 'network-config',
  summary: 'Create the next free bondN from the given ports (802.3ad by default), configure and bring it up',
  body: bindBody,
  response: networkInterface,
  async handler({ body, system, vars, events, connection }) {
    const c = networkContext(system, vars);
    const s = await readSnapshot(c);
    const ports = newPorts(c, s, body.slaves, null);
    const guard =
      lockoutConflict(connection, s.addrs, body.slaves, 'enslave') ?? lastAddressConflict(s.addrs, body.slaves);

    const bond = nextBondName((n) => linkOf(s, n) !== null || hasAnyStanza(s.config, n));
    const params = bondParams(body);
    const edit = new ConfigEdit(s.config).setStanza(bondStanza(bond, body.addressing, body.slaves, params));
    for (const p of body.slaves) edit.setStanza(portStanza(p, bond));
    const steps = planBind(c.bins, {
      bond,
      params,
      ports,
      addressing: body.addressing,
      dhcpTimeoutMs: c.settings.dhcpTimeoutMs,
    });
    // the bond first, before any file is written: without the bonding module nothing changes
    const change = await openChange(system, c.settings, {
      change: `bind ${bond} (${body.slaves.join(', ')})`,
      devices: [bond, ...body.slaves],
      body,
      guard,
    });
    await commit(system, edit.changes(), steps, { firstSteps: 1, change });

    const { method, ip, prefix, mtu } = body.addressing;
    const data = {
      device: bond,
      slaves: body.slaves,
      mode: BOND_MODES[params.mode],
      lacp_rate: LACP_RATES[params.lacpRate],
      miimon: params.miimon,
      updelay: params.updelay,
      downdelay: params.downdelay,
      xmit_hash_policy: XMIT_HASH_POLICIES[params.xmitHashPolicy],
      addressing: method,
      ...(ip ? { address: `${ip}/${prefix}` } : {}),
      ...(mtu ? { mtu } : {}),
    };
    await emitNetworkEvent(events, 'network.bond.created', data);
    return describeInterface(c, bond);
  },
});
