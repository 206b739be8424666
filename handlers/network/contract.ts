/**
 * What the network routes and the host's network area module (runtime/areas/network.ts) share:
 * `settings.network` of the host configuration, which routes read with
 * `areaSettings(vars, 'network', networkSettings)`:
 *
 *   settings:
 *     network:
 *       list: { kinds: [bond, veth] }   # the listing rule (select.ts); default: NICs and bonds
 *       concurrency: 4                  # ethtool commands in flight when reading many NICs
 *       dhcpTimeoutMs: 60000            # how long the DHCP client may take for a lease
 *
 * The DHCP client is not a setting but a binary: `system.binaries.dhclient` (see README.md).
 */
import * as z from 'zod';

const listRule = z
  .object({
    physical: z.boolean(),
    linkTypes: z.array(z.string()),
    kinds: z.array(z.string()),
    includeNames: z.array(z.string()),
    excludeNames: z.array(z.string()),
  })
  .partial()
  .strict();

export const networkSettings = z
  .object({
    list: listRule.default({}),
    // below the host's command concurrency cap (8) so one listing never fills its queue alone
    concurrency: z.number().int().min(1).max(32).default(4),
    dhcpTimeoutMs: z.number().int().min(1000).max(600_000).default(60_000),
  })
  .strict();
export type NetworkSettings = z.output<typeof networkSettings>;
