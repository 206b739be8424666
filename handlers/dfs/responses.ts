/** Answer shapes of the dfs routes (the spec's "Distributed filesystem records"). */
import * as z from 'zod';

export const deviceRecord = z.object({
  status: z.string().describe('UP, ST (stopping), IN (inactive), AT (attached) or --'),
  type: z
    .string()
    .describe('device type: mgc, mgs, osd-zfs, mdt, mdd, lod, osp, ost, obdfilter, lov, lmv, mdc, osc, lwp, qmt…'),
  name: z.string().describe('device name, e.g. demofs-OST0000-osc-ffff8a1b2c3d4000'),
  short_name: z
    .string()
    .describe('target label (OST0000, MDT0000, MDD0000), clilov/clilmv/mdtlov, MGC, MGS, or the name'),
  uuid: z.string(),
  ref_count: z.string().describe('reference count as lctl prints it'),
  index: z.number().int().optional().describe('decimal target index (OST000a → 10) for target-bound devices'),
  filesystem: z.string().optional().describe('fsname for filesystem devices'),
  nid: z.string().optional().describe('server NID of an osc/mdc (lctl dl -t), or the MGS NID of an mgc'),
});

export const deviceList = z.object({
  warnings: z.string().describe('devices not UP and anything lctl printed on stderr; empty when none'),
  raw: z.string().describe('lctl dl -t output'),
  parsed: z.array(deviceRecord),
});

export const mgsDevice = z.object({
  uuid: z.string(),
  filesystems: z.array(z.string()).describe('filesystems registered with this MGS'),
  fstype: z.string().describe('backend of the MGT: zfs or ldiskfs'),
  mntdev: z.string().describe('<pool>/<dataset> on ZFS, a block device on ldiskfs'),
});

const osdComponent = z.object({
  name: z.string(),
  uuid: z.string(),
  blocksize: z.number().int(),
  kbytesavail: z.number().int(),
  kbytesfree: z.number().int(),
  kbytestotal: z.number().int(),
  mntdev: z.string(),
});
const nameUuid = z.object({ name: z.string(), uuid: z.string() });

export const deviceDetail = z.object({
  devices: z
    .object({
      'osd-zfs': osdComponent.optional(),
      'osd-ldiskfs': osdComponent.optional(),
      mdt: nameUuid.extend({ readonly: z.boolean() }).optional(),
      mdd: nameUuid.optional(),
      obdfilter: nameUuid.optional(),
    })
    .describe("the target's devices on this node keyed by component"),
  mgs: z.string().describe('NID of the MGS this node uses (from its mgc)'),
  name: z.string().describe('target, e.g. demofs-MDT0000'),
  filesystem: z.string(),
  type: z.enum(['MDT', 'OST']),
  index: z.number().int(),
});

export const network = z.object({
  net_type: z.string(),
  local_ni_s: z.array(
    z.object({
      nid: z.string(),
      status: z.string().describe('up or down'),
      interfaces: z.record(z.string(), z.string()).optional().describe('index → interface name'),
    }),
  ),
});

const peerNi = z.looseObject({
  nid: z.string(),
  state: z.string().optional().describe('NA, up or down'),
  max_ni_tx_credits: z.number().optional(),
  available_tx_credits: z.number().optional(),
  min_tx_credits: z.number().optional(),
  tx_q_num_of_buf: z.number().optional(),
  available_rtr_credits: z.number().optional(),
  min_rtr_credits: z.number().optional(),
  refcount: z.number().optional(),
  statistics: z.record(z.string(), z.number()).optional(),
});
export const peer = z.object({
  primary_nid: z.string(),
  multi_rail: z.boolean(),
  peer_ni: z
    .array(peerNi)
    .describe(
      'verbose adds credits, refcount, statistics and (2.12+) sent/received/dropped stats and health stats per NI',
    ),
  peer_state: z.number().optional(),
});

export const pingResult = z.object({
  warnings: z.string().describe('the failure line when the peer did not answer; empty on success'),
  raw: z.string(),
  parsed: z.array(z.string()).describe('NIDs the peer answered with (the first is 0@lo)'),
});

export const fsRow = z.object({
  uuid: z.string(),
  '1kblocks': z.number().describe('size in KiB'),
  used: z.number(),
  available: z.number(),
  use: z.number().describe('percent used'),
  mounted: z.string().describe('client mount point'),
  filesystem: z.string(),
  name: z.string().describe('target label (demofs-OST0000) or filesystem_summary'),
  mgs: z.string().describe('MGS NIDs of the mount (:-separated failover nodes)'),
  index: z.number().int().optional(),
  type: z.enum(['MDT', 'OST']).optional(),
  nid: z.string().optional().describe('server NID the client is connected to for this target'),
});
export const fsResult = z.object({
  raw: z.string().describe('lfs df output'),
  warnings: z.string().describe('unreachable/inactive targets, flags, stderr; empty when none'),
  parsed: z.array(fsRow),
});

export const resultOnly = z.object({ result: z.string() });

export const flrConfig = z.object({
  max_history_size: z.number().int(),
  run_interval: z.number().int(),
  directories: z.array(z.string()),
});
