import { conflict, notFound } from '../../core/errors';
import { route } from '../../core/route';
import { emitNetworkEvent } from '../events';
import { SLAVES_OPTIONS, splitNames } from '../bond';
import { ConfigEdit, inetStanza, optionValue } from '../config-files';
import { openChange } from '../change-window';
import { lastAddressConflict, lockoutConflict } from '../guard';
import { planSlaves } from '../plan';
import { newPorts } from '../ports';
import { slavesBody } from '../requests';
import { networkInterface } from '../responses';
import { configuredMaster, portStanza } from '../stanzas';
import { describeInterface, linkOf, networkContext, notCreated, notCreatedBond, readSnapshot } from '../state';
import { commit } from '../transaction';

/**
 * Reselect a bond's ports. Added ports are enslaved (down, IPv4 flushed, `master`) and get a
 * `bond-master` stanza; removed ones are released (`nomaster`), left down and lose their
 * stanza; the bond's `slaves` option is rewritten in place, the rest of its stanza untouched.
 */
export default route({
  method: 'POST',
  path: '/network/interface/slaves',
  permission: 'network:manage',
  examples: [{ summary: 'add eno5 to bond0', body: { device: 'bond0', slaves: 'eno3,eno4,eno5' } }],
  // one change to the interfaces files and links at a time: each plans from what it read
  lock: 'network-config',
  summary: "Set a bond's ports (comma separated); answers the bond",
  body: slavesBody,
  response: networkInterface,
  async handler({ body, system, vars, events, connection }) {
    const c = networkContext(system, vars);
    const s = await readSnapshot(c);
    const bond = body.device;
    const link = linkOf(s, bond);
    if (!link && notCreatedBond(c, s.links, s.config, bond)) throw notCreated(bond);
    if (!link) throw notFound(`no network interface ${bond}`);
    if (link.kind !== 'bond') throw conflict(`${bond} is not a bond`, { device: bond });
    const stanza = inetStanza(s.config, bond);
    if (!stanza)
      throw conflict(`${bond} has no configuration to change; create bonds with /network/interface/bind`, {
        device: bond,
      });

    const running = s.links.filter((l) => l.master === bond).map((l) => l.ifname);
    const configured = [
      ...splitNames(optionValue(stanza, SLAVES_OPTIONS) ?? ''),
      ...s.config.merged.ifaces.filter((i) => i.family === 'inet' && configuredMaster(i) === bond).map((i) => i.name),
    ];
    const added = body.slaves.filter((p) => !running.includes(p));
    const removed = running.filter((p) => !body.slaves.includes(p));
    const ports = newPorts(c, s, added, bond);
    const guard = lockoutConflict(connection, s.addrs, added, 'enslave') ?? lastAddressConflict(s.addrs, added);

    const edit = new ConfigEdit(s.config).setOption(bond, SLAVES_OPTIONS, { value: body.slaves });
    for (const p of new Set([...running, ...configured])) {
      if (!body.slaves.includes(p) && configuredMaster(inetStanza(s.config, p)) === bond) edit.removeStanza(p);
    }
    for (const p of body.slaves) {
      if (configuredMaster(inetStanza(s.config, p)) !== bond) edit.setStanza(portStanza(p, bond));
    }
    const change = await openChange(system, c.settings, {
      change: `slaves of ${bond}: ${body.slaves.join(', ')}`,
      devices: [bond, ...new Set([...running, ...body.slaves])],
      body,
      guard,
    });
    await commit(system, edit.changes(), planSlaves(c.bins, bond, ports, removed), { change });

    await emitNetworkEvent(events, 'network.bond.slaves_changed', {
      device: bond,
      slaves: body.slaves,
      added,
      removed,
    });
    return describeInterface(c, bond);
  },
});
