/**
 * Lockout guard: refuse (409) a change that would cut the connection the request came in on,
 * unless the request says `force: true`.
 *
 * The host tells each route the local address of the HTTP connection (`connection.localAddress`,
 * from the x-ballast-connection header the host sets after dropping any a client sent). The
 * interface carrying that address is the one this request depends on. A change "would cut"
 * the connection when it takes that interface down, re-addresses it (configure flushes and
 * re-adds addresses even when the new address is the same), enslaves it to a bond (ports lose
 * their addresses) or unconfigures it. When the host reports no local address (an embedding
 * server that does not set the header) the guard cannot know and lets the change through.
 *
 * bind adds one rule of its own, `lastAddressGuard`: a port must not carry the box's only
 * global IPv4 address outside the new bond, since enslaving it would leave the box with no
 * address to be managed on even when this request came in some other way (e.g. loopback).
 */
import { conflict } from '../core/errors';
import type { ConnectionInfo } from '../core/route';
import { normalizeAddress } from './ipv4';
import type { IpAddrRecord } from './parse/ip-addr';

export type GuardedAction = 'take down' | 're-address' | 'enslave' | 'unconfigure';

/** Names of the interfaces holding `address` (IPv4 or IPv6, as the host reported it). */
export function interfacesCarrying(addrs: IpAddrRecord[], address: string | null): string[] {
  if (!address) return [];
  return addrs.filter((r) => r.addresses.some((a) => a.local.toLowerCase() === address)).map((r) => r.ifname);
}

export function lockoutGuard(
  connection: ConnectionInfo,
  addrs: IpAddrRecord[],
  targets: string[],
  action: GuardedAction,
  force: boolean,
): void {
  if (force) return;
  const local = normalizeAddress(connection.localAddress);
  const hit = interfacesCarrying(addrs, local).find((n) => targets.includes(n));
  if (hit) {
    throw conflict(
      `refusing to ${action} ${hit}: it carries ${local}, the address this request came in on, so the change would cut this connection; send "force": true to do it anyway`,
      { device: hit, address: local, action },
    );
  }
}

const globalV4 = (r: IpAddrRecord) => r.addresses.filter((a) => a.family === 'inet' && a.scope === 'global');

export function lastAddressGuard(addrs: IpAddrRecord[], ports: string[], force: boolean): void {
  if (force) return;
  const onPorts = addrs.filter((r) => ports.includes(r.ifname) && globalV4(r).length > 0);
  const elsewhere = addrs.some((r) => !ports.includes(r.ifname) && globalV4(r).length > 0);
  const first = onPorts[0];
  if (first && !elsewhere) {
    const a = globalV4(first)[0];
    throw conflict(
      `refusing to enslave ${first.ifname}: it carries ${a?.local ?? 'an address'}, the only global IPv4 address of this box; send "force": true to do it anyway`,
      { device: first.ifname, address: a?.local ?? null, action: 'enslave' },
    );
  }
}
