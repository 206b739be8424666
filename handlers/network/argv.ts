/**
 * Every command line the network routes run, built in one place so routes, tests and the
 * README agree. Interface names reach here only after validation (no leading `-`, no spaces),
 * and iproute2 takes them after the `dev` keyword, so they cannot be read as options.
 */
import type { IpAddress } from './parse/ip-addr';

export interface Bins {
  ip: string;
  ethtool: string;
  /** the DHCP client (ISC dhclient command line); absent when the host configured none */
  dhclient?: string;
}

export const readArgv = {
  links: (b: Bins) => [b.ip, '-j', '-d', 'link', 'show'],
  addrs: (b: Bins) => [b.ip, '-j', 'addr', 'show'],
  link: (b: Bins, dev: string) => [b.ip, '-j', '-d', 'link', 'show', 'dev', dev],
  addr: (b: Bins, dev: string) => [b.ip, '-j', 'addr', 'show', 'dev', dev],
  ethtool: (b: Bins, dev: string) => [b.ethtool, dev],
  ethtoolDriver: (b: Bins, dev: string) => [b.ethtool, '-i', dev],
};

/** IPv4 only: the kernel's IPv6 link-local address and anything SLAAC gave are left alone. */
export const flushArgv = (b: Bins, dev: string) => [b.ip, '-4', 'addr', 'flush', 'dev', dev];

/** `broadcast +` derives the broadcast address from the prefix, as ifupdown's static method does. */
export const addAddrArgv = (b: Bins, dev: string, cidr: string) => [
  b.ip,
  'addr',
  'add',
  cidr,
  'broadcast',
  '+',
  'dev',
  dev,
];

export const delAddrArgv = (b: Bins, dev: string, cidr: string) => [b.ip, 'addr', 'del', cidr, 'dev', dev];

/** Put back an address exactly as it was (its broadcast and label), for rollback. */
export function readdAddrArgv(b: Bins, dev: string, a: IpAddress): string[] {
  const argv = [b.ip, 'addr', 'add', `${a.local}/${a.prefixlen}`];
  if (a.broadcast) argv.push('broadcast', a.broadcast);
  if (a.label && a.label !== dev) argv.push('label', a.label);
  argv.push('dev', dev);
  return argv;
}

export function linkSetArgv(b: Bins, dev: string, o: { mtu?: number; state?: 'up' | 'down' }): string[] {
  const argv = [b.ip, 'link', 'set', 'dev', dev];
  if (o.mtu !== undefined) argv.push('mtu', String(o.mtu));
  if (o.state) argv.push(o.state);
  return argv;
}

export const masterArgv = (b: Bins, dev: string, bond: string) => [b.ip, 'link', 'set', 'dev', dev, 'master', bond];
export const nomasterArgv = (b: Bins, dev: string) => [b.ip, 'link', 'set', 'dev', dev, 'nomaster'];
export const bondAddArgv = (b: Bins, bond: string, bondArgs: string[]) => [
  b.ip,
  'link',
  'add',
  'name',
  bond,
  'type',
  'bond',
  ...bondArgs,
];
export const linkDelArgv = (b: Bins, dev: string) => [b.ip, 'link', 'del', 'dev', dev];

/**
 * ISC dhclient as Debian's ifupdown runs it, with the same pid and lease files, so an
 * `ifdown`/`ifup` later finds and replaces our client: `-1` tries once and exits non-zero
 * without a lease (instead of retrying in the background forever), `-x` stops the client
 * without releasing the lease.
 */
export function dhclientArgv(dhclient: string, dev: string, action: 'start' | 'stop'): string[] {
  const files = ['-pf', `/run/dhclient.${dev}.pid`, '-lf', `/var/lib/dhcp/dhclient.${dev}.leases`];
  return action === 'start' ? [dhclient, '-4', '-1', ...files, dev] : [dhclient, '-4', '-x', ...files, dev];
}
