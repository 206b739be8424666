/**
 * `ip -j -d link show [dev X]` (iproute2 JSON) → IpLinkRecord[].
 *
 * The raw shape is validated loosely (iproute2 adds keys between versions: altnames in 5.5,
 * ad_lacp_active in 5.15, ...), then narrowed to the keys the product uses. Bond master and
 * bond port data are read tolerantly: each key optional, only `mode` required on a master.
 */
import * as z from 'zod';
import { ParseError } from '../../core/parse-error';
import { bondInfo, bondSlaveInfo, type IpLinkRecord } from '../responses';
import { describeIssues, parseJsonArray, recordLabel } from './json';

const PARSER = 'ip-link';

const rawLink = z.looseObject({
  ifindex: z.number().int(),
  ifname: z.string().min(1),
  flags: z.array(z.string()),
  mtu: z.number().int(),
  qdisc: z.string().optional(),
  operstate: z.string(),
  linkmode: z.string().optional(),
  group: z.string().optional(),
  txqlen: z.number().int().optional(),
  link_type: z.string(),
  address: z.string().optional(),
  broadcast: z.string().optional(),
  master: z.string().optional(),
  // iproute2 prints the peer's name when it can resolve it, else `link_index`/`link_netnsid`;
  // `"link": null` occurs for a peer in another namespace on some versions
  link: z.string().nullable().optional(),
  altnames: z.array(z.string()).optional(),
  promiscuity: z.number().optional(),
  linkinfo: z
    .looseObject({
      info_kind: z.string().optional(),
      info_data: z.unknown().optional(),
      info_slave_kind: z.string().optional(),
      info_slave_data: z.unknown().optional(),
    })
    .optional(),
});

export function parseIpLink(stdout: string): IpLinkRecord[] {
  const doc = parseJsonArray(PARSER, stdout);
  return doc.map((raw, i) => {
    const r = rawLink.safeParse(raw);
    if (!r.success) throw new ParseError(PARSER, `${recordLabel(i, raw)}: ${describeIssues(r.error)}`);
    const l = r.data;
    const info = l.linkinfo;
    const kind = info?.info_kind ?? null;
    const slaveKind = info?.info_slave_kind ?? null;

    let bond: IpLinkRecord['bond'] = null;
    if (kind === 'bond') {
      const b = bondInfo.safeParse(info?.info_data ?? {});
      if (!b.success)
        throw new ParseError(PARSER, `${recordLabel(i, raw)}: linkinfo.info_data: ${describeIssues(b.error)}`);
      bond = b.data;
    }
    let bondSlave: IpLinkRecord['bond_slave'] = null;
    if (slaveKind === 'bond') {
      const s = bondSlaveInfo.safeParse(info?.info_slave_data ?? {});
      if (!s.success)
        throw new ParseError(PARSER, `${recordLabel(i, raw)}: linkinfo.info_slave_data: ${describeIssues(s.error)}`);
      bondSlave = s.data;
    }

    return {
      ifindex: l.ifindex,
      ifname: l.ifname,
      flags: l.flags,
      mtu: l.mtu,
      qdisc: l.qdisc ?? null,
      operstate: l.operstate,
      linkmode: l.linkmode ?? null,
      group: l.group ?? null,
      txqlen: l.txqlen ?? null,
      link_type: l.link_type,
      address: l.address ?? null,
      broadcast: l.broadcast ?? null,
      master: l.master ?? null,
      link: l.link ?? null,
      altnames: l.altnames ?? [],
      kind,
      slave_kind: slaveKind,
      bond,
      bond_slave: bondSlave,
      // `-d` always prints promiscuity; without it, linkinfo is never printed either
      details: l.promiscuity !== undefined,
    };
  });
}
