/**
 * Who may become a bond port (bind, slaves): an interface the listing shows, that is not a
 * bond itself and is not already a port of another bond, at runtime (`master`) or in the
 * configuration (`bond-master`, or named in another bond's slaves list).
 */
import { conflict } from '../core/errors';
import { SLAVES_OPTIONS, splitNames } from './bond';
import { optionValue } from './config-files';
import type { DeviceBefore } from './plan';
import { configuredMaster } from './stanzas';
import { addrOf, managedLink, type NetworkContext, type Snapshot } from './state';

/** The bond whose configuration claims `port`, other than `except`. */
export function configuredBondOf(s: Snapshot, port: string, except: string | null): string | null {
  for (const iface of s.config.merged.ifaces) {
    if (iface.family !== 'inet' || iface.name === except) continue;
    if (iface.name === port && configuredMaster(iface) && configuredMaster(iface) !== except)
      return configuredMaster(iface);
    if (iface.name !== port && splitNames(optionValue(iface, SLAVES_OPTIONS) ?? '').includes(port)) return iface.name;
  }
  return null;
}

export function newPorts(c: NetworkContext, s: Snapshot, names: string[], bond: string | null): DeviceBefore[] {
  return names.map((name) => {
    const link = managedLink(c, s, name);
    if (link.kind === 'bond') throw conflict(`${name} is a bond; a bond cannot be a port of another bond`);
    if (link.master && link.master !== bond)
      throw conflict(`${name} is already a port of ${link.master}`, { device: name, master: link.master });
    const claimed = configuredBondOf(s, name, bond);
    if (claimed) throw conflict(`${name} is configured as a port of ${claimed}`, { device: name, master: claimed });
    return { link, addr: addrOf(s, name) };
  });
}
