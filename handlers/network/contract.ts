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
 *       confirmDefaultS: 60             # the confirmation window a change to the interface
 *                                       # carrying the request gets when it names none (0: 409)
 *
 * The DHCP client is not a setting but a binary: `system.binaries.dhclient` (see README.md).
 */
import * as z from 'zod';

/** Bounds of `confirmWithin` (seconds). */
export const MIN_CONFIRM_S = 5;
export const MAX_CONFIRM_S = 3600;

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
    /**
     * Seconds a change that would cut the connection carrying the request (the lockout guard's
     * cases) waits for POST /network/confirm when the request names no `confirmWithin` and no
     * `force`; 0 keeps the old rule: such a change is a 409.
     */
    confirmDefaultS: z.number().int().min(0).max(MAX_CONFIRM_S).default(60),
  })
  .strict();
export type NetworkSettings = z.output<typeof networkSettings>;

// ---- confirmed changes (README "Changing the management interface safely") -------------------
// The host's network area keeps the checkpoint and the deadline (runtime/areas/network/). The
// traffic routes reach the same ops by name (handlers/traffic/checkpoint.ts): an area's routes
// import no other area.

export const CHANGE_AREAS = ['network', 'traffic'] as const;
const argvList = z.array(z.array(z.string().min(1)).min(1));

/**
 * Before a change: refuse (409) while another waits for its confirmation; with `window`, take the
 * checkpoint (the runtime state of `devices` as ip and tc show it; for traffic the stored rules
 * named in `rules`) and reserve the one slot. Answers the checkpoint's id (null without window).
 */
export const CHANGE_OPEN_OP = 'network/change/open';
export const changeOpenPayload = z.strictObject({
  area: z.enum(CHANGE_AREAS),
  change: z.string().min(1).max(200),
  devices: z.array(z.string().min(1).max(15)).max(64),
  window: z.number().int().min(MIN_CONFIRM_S).max(MAX_CONFIRM_S).optional(),
  rules: z.array(z.string().min(1).max(64)).max(64).optional(),
});
export type ChangeOpenPayload = z.input<typeof changeOpenPayload>;
export const changeOpenResult = z.object({ id: z.number().int().nullable() });

/**
 * The change is applied: from now on its checkpoint is restored unless confirmed in time. A
 * network change hands over its intent (the journal row's kept files and undo steps move to the
 * checkpoint in one transaction); a traffic change gives its undo steps itself.
 */
export const CHANGE_KEEP_OP = 'network/change/keep';
export const changeKeepPayload = z.strictObject({
  id: z.number().int(),
  intent: z.number().int().optional(),
  undo: z.array(argvList).optional(),
});
export const changeKeepResult = z.object({ id: z.number().int(), deadline: z.string(), window: z.number() });

/** The change failed (and was rolled back by its route): free the slot. */
export const CHANGE_DROP_OP = 'network/change/drop';
export const changeDropPayload = z.strictObject({ id: z.number().int() });

/** What GET /network/pending shows, and the confirm/rollback ops answer about a change. */
export const pendingChange = z.object({
  id: z.number().int(),
  area: z.enum(CHANGE_AREAS),
  change: z.string().describe('what the change was (route and its target)'),
  devices: z.array(z.string()),
  window: z.number().describe('seconds the change had to be confirmed in'),
  created: z.string().describe('ISO 8601'),
  deadline: z.string().describe('ISO 8601: restored on its own from then on'),
  remaining: z.number().describe('seconds left (0: the rollback is under way)'),
});
export type PendingChange = z.output<typeof pendingChange>;

export const CHANGE_PENDING_OP = 'network/change/pending';
export const changePendingResult = z.object({ pending: pendingChange.nullable() });

export const CHANGE_CONFIRM_OP = 'network/change/confirm';
export const changeConfirmPayload = z.strictObject({ id: z.number().int() });

/** Restore at once (`id` optional: the one pending change). */
export const CHANGE_ROLLBACK_OP = 'network/change/rollback';
export const changeRollbackPayload = z.strictObject({ id: z.number().int().optional() });

/** What a rollback did: files put back, commands run, and what still differs from the checkpoint. */
export const rollbackReport = z.object({
  files: z.array(z.string()),
  commands: z.array(z.array(z.string())),
  failed: z.array(z.object({ step: z.string(), error: z.string() })),
  unrestored: z.array(z.string()).describe('differences from the checkpoint left after the rollback (empty: all back)'),
});
export type RollbackReport = z.output<typeof rollbackReport>;
export const changeRollbackResult = z.object({ change: pendingChange, report: rollbackReport });
