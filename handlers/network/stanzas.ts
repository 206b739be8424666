/**
 * The stanzas the API writes, in the appliance's format (fixtures/ifupdown/
 * appliance-bond-underscore.interfaces), which is what the spec's `config` object shows:
 *
 *   auto bond0                      auto eth0
 *   iface bond0 inet static         iface eth0 inet manual
 *       address 172.16.5.20             bond-master bond0
 *       netmask 255.255.0.0
 *       mtu 9000
 *       slaves eth0 eth1
 *       bond_mode 4 ...
 *
 * The API owns the inet stanza of an interface it configures: configure rewrites it from the
 * request. Carried over from the old stanza, unless the request sets them: `mtu` (an MTU not
 * given is left as it is, at runtime too) and the `bond*` / `slave*` options (so re-addressing
 * a bond keeps it a bond at the next boot). Other options (gateway, dns-*, hooks) are not;
 * the previous file is kept as the backup. inet6 stanzas are left as they are.
 */
import { conflict } from '../core/errors';
import { bondStanzaOptions, MASTER_OPTIONS, sameOption, SLAVES_OPTIONS, splitNames, type BondParams } from './bond';
import { netmaskFromPrefix } from './ipv4';
import { ifupdownOptionInput, type IfaceStanzaInput } from './render/ifupdown';
import type { Addressing, StanzaOption } from './requests';
import type { IfupdownIface } from './parse/ifupdown';

function addressingOptions(a: Addressing): StanzaOption[] {
  const out: StanzaOption[] = [];
  if (a.method === 'static' && a.ip !== undefined && a.prefix !== undefined) {
    out.push({ name: 'address', value: a.ip }, { name: 'netmask', value: netmaskFromPrefix(a.prefix) });
  }
  if (a.mtu !== undefined) out.push({ name: 'mtu', value: String(a.mtu) });
  return out;
}

/** An option of the old stanza as renderer input; refuses (409) what cannot be written safely. */
function carried(dev: string, name: string, value: string): StanzaOption {
  const o: StanzaOption = { name, value: SLAVES_OPTIONS.includes(name) ? splitNames(value) : value };
  if (Array.isArray(o.value) && o.value.length === 0) o.value = 'none';
  if (!ifupdownOptionInput.safeParse(o).success) {
    throw conflict(
      `the existing option "${name}" of ${dev} cannot be carried over into the new stanza (its value is not a plain token); set it in the request or edit the file`,
    );
  }
  return o;
}

export function configureStanza(
  dev: string,
  addressing: Addressing,
  requested: StanzaOption[],
  old: IfupdownIface | null,
): IfaceStanzaInput {
  const options = addressingOptions(addressing);
  for (const o of old?.options ?? []) {
    if (!/^(bond|slave)/.test(o.name) && o.name !== 'mtu') continue;
    if (requested.some((r) => sameOption(r.name, o.name)) || options.some((x) => sameOption(x.name, o.name))) continue;
    options.push(carried(dev, o.name, o.value));
  }
  options.push(...requested);
  return { name: dev, method: addressing.method, options, auto: true };
}

export function bondStanza(
  bond: string,
  addressing: Addressing,
  ports: string[],
  params: BondParams,
): IfaceStanzaInput {
  return {
    name: bond,
    method: addressing.method,
    options: [...addressingOptions(addressing), { name: 'slaves', value: ports }, ...bondStanzaOptions(params)],
    auto: true,
  };
}

export function portStanza(port: string, bond: string): IfaceStanzaInput {
  return { name: port, method: 'manual', options: [{ name: 'bond-master', value: bond }], auto: true };
}

/** The bond a stanza makes its interface a port of (`bond-master X`), if any. */
export function configuredMaster(iface: IfupdownIface | null): string | null {
  return iface?.options.find((o) => MASTER_OPTIONS.includes(o.name))?.value ?? null;
}

/**
 * A stanza that defines a bond: an inet stanza with a slaves list (`slaves`, `bond-slaves`,
 * `bond_slaves`) or any other `bond*` option, and no `bond-master` (that makes it a port).
 */
export function definesBond(iface: IfupdownIface | null): boolean {
  if (!iface || iface.family !== 'inet' || configuredMaster(iface) !== null) return false;
  return iface.options.some((o) => SLAVES_OPTIONS.includes(o.name) || /^bond[-_]/.test(o.name));
}
