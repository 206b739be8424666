/**
 * Webhook targets on this machine or its link: loopback (127.0.0.0/8, ::1), link-local
 * (169.254.0.0/16 — cloud metadata services live there —, fe80::/10) and the unspecified
 * address (0.0.0.0, ::), as IPv4, IPv6 or IPv4-mapped IPv6. An agent may not point at them
 * unless `settings.notification.allowLocalTargets` is true: a `notification:manage` token must
 * not become a way to make the appliance POST to its own local services.
 * Shared by the routes (literal addresses and `localhost` in the URL) and the host's sender
 * (every address a name resolves to, checked as it connects).
 */
export function isLocalAddress(address: string): boolean {
  const a = address.toLowerCase().replace(/^\[|\]$/g, '');
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(a);
  const v4 = mapped ? mapped[1] : /^\d+\.\d+\.\d+\.\d+$/.test(a) ? a : undefined;
  if (v4) {
    const [o1, o2] = v4.split('.').map(Number);
    return o1 === 127 || o1 === 0 || (o1 === 169 && o2 === 254);
  }
  // only 0s and colons: an unspecified address however written ([0:]* is that language, linear)
  if (a === '::1' || /^[0:]*$/.test(a)) return true;
  return /^fe[89ab][0-9a-f]?:/.test(a);
}

/** A URL host that names this machine without DNS: a local literal address or localhost. */
export function isLocalHost(hostname: string): boolean {
  const h = hostname.toLowerCase().replace(/\.$/, '');
  return h === 'localhost' || h.endsWith('.localhost') || isLocalAddress(h);
}
