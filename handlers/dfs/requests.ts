/** Request bodies of the dfs routes. */
import * as z from 'zod';
import { absolutePath, interfaceName } from '../core/schemas';
import {
  datasetComponent,
  fsName,
  isNidInput,
  LNET_NAME_RE,
  lnetName,
  mgsNids,
  NID_MAX,
  NID_MESSAGE,
  poolName,
  sameLnet,
  targetIndex,
} from './names';

export const lnetChangeBody = z.strictObject({
  lnetName: lnetName.describe('LNet network, e.g. tcp1 or o2ib'),
  faceName: interfaceName.describe('physical interface, e.g. eth1'),
});

const counters = z.record(z.string().regex(/^[a-z_ ]{1,40}$/), z.number().int());
const localNi = z.strictObject({
  nid: z.string().max(NID_MAX).refine(isNidInput, NID_MESSAGE),
  status: z.enum(['up', 'down']).optional(),
  interfaces: z.record(z.string().regex(/^\d{1,2}$/, 'interface index must be 0-99'), interfaceName).optional(),
  statistics: counters.optional(),
  sent_stats: counters.optional(),
  received_stats: counters.optional(),
  dropped_stats: counters.optional(),
  'health stats': counters.optional(),
  tunables: counters.optional(),
  'lnd tunables': counters.nullable().optional(),
  'dev cpt': z.number().int().min(-1).max(1024).optional(),
  'tcp bonding': z.number().int().min(0).max(1).optional(),
  CPT: z
    .string()
    .regex(/^\[\d{1,4}(,\d{1,4}){0,1023}\]$/, 'must be a CPT list like "[0,1]"')
    .optional(),
});
export const lnetConfigBody = z.strictObject({
  net: z
    .array(
      z
        .strictObject({
          'net type': z
            .string()
            .refine((s) => s === 'lo' || LNET_NAME_RE.test(s), 'must be lo or an LNet network (tcp, tcp1, o2ib…)'),
          'local NI(s)': z.array(localNi).min(1).max(32),
        })
        .superRefine((n, ctx) => {
          // a NI belongs to its net: 10.0.0.1@tcp1 under `net type: tcp1`, @tcp0 under tcp, never @tcp10 under tcp1
          n['local NI(s)'].forEach((ni, i) => {
            const net = ni.nid.slice(ni.nid.indexOf('@') + 1);
            if (!sameLnet(net, n['net type']))
              ctx.addIssue({
                code: 'custom',
                path: ['local NI(s)', i, 'nid'],
                message: `${ni.nid} is not on ${n['net type']}`,
              });
          });
        }),
    )
    .min(1)
    .max(32),
});
export type LnetConfigBody = z.output<typeof lnetConfigBody>;

export const fsVerifyBody = z.strictObject({
  fsName: datasetComponent.describe('dataset of the target below the pool (the device name), e.g. mgs or demofs-mdt0'),
  poolName: poolName.describe('ZFS pool'),
});

export const fsMountBody = z.strictObject({
  fsName: fsName.describe('Lustre filesystem name'),
  lnetId: mgsNids.describe('NID of the management server (failover nodes separated by :)'),
  persist: z.boolean().default(false).describe('also write the mount to fstab'),
});

export const createMgsBody = z.strictObject({
  poolName: poolName.describe('existing ZFS pool; the MGT is the dataset <pool>/mgs'),
  persist: z.boolean().default(false).describe('also write the target mount to fstab'),
  reformat: z
    .boolean()
    .default(false)
    .describe('reformat an existing MGT: destroys the management service and what relies on it'),
});

export const createTargetBody = z.strictObject({
  fsName: fsName.describe('Lustre filesystem name'),
  poolName: poolName.describe(
    'existing ZFS pool; the target is the dataset <pool>/<fsName>-ost<index> (or -mdt<index>)',
  ),
  index: targetIndex.describe('target index, decimal, e.g. "0"'),
  mgs_node: mgsNids.describe('NID(s) of the management server; failover nodes separated by :'),
  persist: z.boolean().default(false).describe('also write the target mount to fstab'),
});

export const flrConfigBody = z.strictObject({
  max_history_size: z.number().int().min(1).max(1_000_000_000).describe('entries of resync history kept'),
  run_interval: z.number().int().min(1).max(604_800).describe('seconds between synchronisation runs'),
  directories: z
    .array(absolutePath)
    .min(1)
    .max(256)
    .refine((d) => new Set(d).size === d.length, 'directories must not repeat')
    .describe('directories (on client mounts under the client mount root) whose mirrors are synchronised'),
});
