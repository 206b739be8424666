import * as z from 'zod';
import { ParseError } from '../../core/parse-error';

const PARSER = 'ip-link';

/**
 * `ip -j link show` -> the interface names, in the kernel's (ifindex) order, each marked when it
 * is a loopback device.
 *
 * The traffic area only needs names (which devices the listing shows), so it reads this small
 * subset itself rather than reaching into the network area's parser (areas import only
 * handlers/core and themselves). Objects are read loosely: iproute2 adds keys between versions.
 */
const Link = z.looseObject({
  ifname: z.string().min(1),
  link_type: z.string().optional(),
  flags: z.array(z.string()).optional(),
});

export interface LinkName {
  name: string;
  loopback: boolean;
}

export function parseIpLinkNames(stdout: string): LinkName[] {
  let doc: unknown;
  try {
    doc = JSON.parse(stdout);
  } catch {
    throw new ParseError(PARSER, 'output is not JSON', 1);
  }
  const r = z.array(Link).safeParse(doc);
  if (!r.success) {
    const i = r.error.issues[0]!;
    throw new ParseError(PARSER, `unexpected link list: ${i.path.join('.')}: ${i.message}`, 1);
  }
  return r.data.map((l) => ({
    name: l.ifname,
    // link_type is "loopback" for lo; the LOOPBACK flag covers a renamed or typeless one.
    loopback: l.link_type === 'loopback' || (l.flags ?? []).includes('LOOPBACK'),
  }));
}
