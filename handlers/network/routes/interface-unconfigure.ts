import { notFound, type ApiError } from '../../core/errors';
import { route } from '../../core/route';
import { emitNetworkEvent } from '../events';
import { messageResponse } from '../../core/schemas';
import { SLAVES_OPTIONS, splitNames } from '../bond';
import { ConfigEdit, hasAnyStanza, inetStanza, optionValue } from '../config-files';
import { openChange } from '../change-window';
import { lockoutConflict } from '../guard';
import { planUnconfigure, planUnconfigureBond } from '../plan';
import { deviceParams, unconfigureBody } from '../requests';
import { configuredMaster } from '../stanzas';
import { addrOf, linkOf, networkContext, notCreatedBond, notListed, readSnapshot, type Snapshot } from '../state';
import { isListed } from '../select';
import { commit, type Step } from '../transaction';

/** Names configured as ports of `bond`: in its slaves list or by their own `bond-master`. */
function configuredPorts(s: Snapshot, bond: string): string[] {
  return [
    ...splitNames(optionValue(inetStanza(s.config, bond), SLAVES_OPTIONS) ?? ''),
    ...s.config.merged.ifaces.filter((i) => i.family === 'inet' && configuredMaster(i) === bond).map((i) => i.name),
  ];
}

/**
 * The spec's "unconfigure" operation (its route is not given there; this is ours): the
 * interface loses its stanza (every family, and its auto/allow lines), its IPv4 addresses and
 * its admin state (left down). A bond is deleted after its ports are released, and the ports
 * lose their `bond-master` stanzas; a bond port is taken out of its bond, in the bond's
 * `slaves` list too. A stanza left for a device that no longer exists is just removed.
 */
export default route({
  method: 'POST',
  path: '/network/interface/:device_name/unconfigure',
  permission: 'network:manage',
  examples: [
    {
      summary: 'remove the configuration of eno2',
      params: { device_name: 'eno2' },
      body: {},
      then: [
        {
          method: 'GET',
          path: '/network/interface',
          shows: [{ link: 'eno2', state: 'down', config: null, ipv4: null }],
        },
      ],
    },
  ],
  // one change to the interfaces files and links at a time: each plans from what it read
  lock: 'network-config',
  summary: 'Remove an interface configuration and leave it down (a bond is deleted, its ports released)',
  params: deviceParams,
  body: unconfigureBody,
  response: messageResponse,
  async handler({ params, body, system, vars, events, connection }) {
    const c = networkContext(system, vars);
    const s = await readSnapshot(c);
    const dev = params.device_name;
    const link = linkOf(s, dev);
    const edit = new ConfigEdit(s.config).removeStanza(dev);
    const stanza = inetStanza(s.config, dev);
    const wasDhcp = stanza?.method === 'dhcp';
    let steps: Step[] = [];
    let released: string[] = [];
    let message = `${dev} unconfigured`;
    let guard: ApiError | null = null;
    let devices = [dev];

    if (!link) {
      // nothing to remove: the same 404 as any unknown name, and nothing is written
      if (!hasAnyStanza(s.config, dev)) throw notFound(`no network interface ${dev}`);
      if (notCreatedBond(c, s.links, s.config, dev)) {
        // a bond defined only in the files: its ports' bond-master stanzas go with it
        const ports = [...new Set(configuredPorts(s, dev))].filter(
          (p) => configuredMaster(inetStanza(s.config, p)) === dev,
        );
        for (const p of ports) edit.removeStanza(p);
        message = ports.length
          ? `${dev} was not created; its configuration and its ports' (${ports.join(', ')}) were removed`
          : `${dev} was not created; its configuration was removed`;
      } else message = `${dev} does not exist; its configuration was removed`;
    } else if (!isListed(link, c.settings.list)) {
      throw notListed(link);
    } else if (
      link.kind !== 'bond' &&
      link.master === null &&
      !hasAnyStanza(s.config, dev) &&
      !link.flags.includes('UP') &&
      !(addrOf(s, dev)?.addresses ?? []).some((a) => a.family === 'inet')
    ) {
      // nothing left to remove (no stanza, no IPv4 address, down): say so, change nothing, no event
      return { message: `${dev} is already unconfigured` };
    } else if (link.kind === 'bond') {
      released = s.links.filter((l) => l.master === dev).map((l) => l.ifname);
      guard = lockoutConflict(connection, s.addrs, [dev, ...released], 'unconfigure');
      devices = [dev, ...released];
      for (const p of new Set([...released, ...configuredPorts(s, dev)])) {
        if (configuredMaster(inetStanza(s.config, p)) === dev) edit.removeStanza(p);
      }
      steps = planUnconfigureBond(c.bins, { link, addr: addrOf(s, dev) }, released, wasDhcp);
      message = released.length
        ? `${dev} unconfigured and deleted; ports ${released.join(', ')} released`
        : `${dev} unconfigured and deleted`;
    } else {
      guard = lockoutConflict(connection, s.addrs, [dev], 'unconfigure');
      const master = link.master;
      // the bond's slaves line loses it too, also when only the configuration made it a port
      const bond = master ?? configuredMaster(stanza);
      const list = bond ? splitNames(optionValue(inetStanza(s.config, bond), SLAVES_OPTIONS) ?? '') : [];
      if (bond && list.includes(dev)) {
        const rest = list.filter((p) => p !== dev);
        edit.setOption(bond, SLAVES_OPTIONS, { value: rest.length ? rest : 'none' });
      }
      steps = planUnconfigure(c.bins, { device: { link, addr: addrOf(s, dev) }, master, wasDhcp });
      if (bond) message = `${dev} unconfigured and taken out of ${bond}`;
    }
    // a stanza without a device: only files change, and the checkpoint covers them all the same
    const change = await openChange(system, c.settings, {
      change: `unconfigure ${dev}`,
      devices: link ? devices : [],
      body,
      guard,
    });
    await commit(system, edit.changes(), steps, { change });
    await emitNetworkEvent(events, 'network.interface.unconfigured', {
      device: dev,
      ...(link?.kind === 'bond' ? { deleted: true, released } : {}),
    });
    return { message };
  },
});
