/**
 * Lockout guard: a change that would cut the connection the request came in on is applied with
 * a confirmation window (change-window.ts: `confirmWithin`, by default
 * `settings.network.confirmDefaultS`), or refused (409) when that setting is 0, unless the
 * request says `force: true` (the unsafe path: no window).
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
import { conflict, type ApiError } from '../core/errors';
import type { ConnectionInfo } from '../core/route';
import { normalizeAddress } from './ipv4';
import type { IpAddrRecord } from './parse/ip-addr';

export type GuardedAction = 'take down' | 're-address' | 'enslave' | 'unconfigure';

/** Names of the interfaces holding `address` (IPv4 or IPv6, as the host reported it). */
export function interfacesCarrying(addrs: IpAddrRecord[], address: string | null): string[] {
  if (!address) return [];
  return addrs.filter((r) => r.addresses.some((a) => a.local.toLowerCase() === address)).map((r) => r.ifname);
}

/** What a refused change is told it can do instead (README "Changing the management interface safely"). */
const WAYS_OUT =
  'send "confirmWithin": <seconds> to try it with an automatic rollback, or "force": true to do it without one';

/** The 409 for a change that would cut the connection the request came in on, or null. */
export function lockoutConflict(
  connection: ConnectionInfo,
  addrs: IpAddrRecord[],
  targets: string[],
  action: GuardedAction,
): ApiError | null {
  const local = normalizeAddress(connection.localAddress);
  const hit = interfacesCarrying(addrs, local).find((n) => targets.includes(n));
  if (!hit) return null;
  return conflict(
    `refusing to ${action} ${hit}: it carries ${local}, the address this request came in on, so the change would cut this connection; ${WAYS_OUT}`,
    { device: hit, address: local, action },
  );
}

const globalV4 = (r: IpAddrRecord) => r.addresses.filter((a) => a.family === 'inet' && a.scope === 'global');

/** The 409 for enslaving the port that carries the box's only global IPv4 address, or null. */
export function lastAddressConflict(addrs: IpAddrRecord[], ports: string[]): ApiError | null {
  const onPorts = addrs.filter((r) => ports.includes(r.ifname) && globalV4(r).length > 0);
  const elsewhere = addrs.some((r) => !ports.includes(r.ifname) && globalV4(r).length > 0);
  const first = onPorts[0];
  if (!first || elsewhere) return null;
  const a = globalV4(first)[0];
  return conflict(
    `refusing to enslave ${first.ifname}: it carries ${a?.local ?? 'an address'}, the only global IPv4 address of this box; ${WAYS_OUT}`,
    { device: first.ifname, address: a?.local ?? null, action: 'enslave' },
  );
}
