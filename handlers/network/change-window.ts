/**
 * A change with a confirmation window, route side (README "Changing the management interface
 * safely"). Every change route asks the host before it changes anything:
 *
 * - the window: the request's `confirmWithin`; else, when the lockout guard found that the change
 *   would cut this connection and the request did not say `force`, `settings.network.confirmDefaultS`
 *   (0: the guard's 409 instead, the old rule); else none. `force` without `confirmWithin` is the
 *   unsafe path: applied at once, nothing to come back to.
 * - `network/change/open`: a 409 naming the change that waits for its confirmation, if one does
 *   (one at a time: rolling it back restores files another change may have written since); with
 *   a window the host takes the checkpoint (runtime state as ip shows it) and answers its id.
 *
 * commit() (transaction.ts) then applies the change under its intent and, with an id, hands the
 * intent over to the checkpoint (`network/change/keep`) instead of closing it; a change that
 * fails gives the slot back (`network/change/drop`).
 */
import type { ApiError } from '../core/errors';
import type { SystemClient } from '../core/system';
import { CHANGE_OPEN_OP, type ChangeOpenPayload, type NetworkSettings } from './contract';

export interface WindowRequest {
  confirmWithin?: number;
  force: boolean;
}

/** Seconds of the confirmation window, undefined for none; throws `guard` when it must refuse. */
export function windowFor(settings: NetworkSettings, body: WindowRequest, guard: ApiError | null): number | undefined {
  if (body.confirmWithin !== undefined) return body.confirmWithin;
  if (!guard || body.force) return undefined;
  if (settings.confirmDefaultS > 0) return settings.confirmDefaultS;
  throw guard;
}

/**
 * Asks the host for the change: 409 while another waits; the checkpoint's id with a window, null
 * without. `devices`: what the change touches (the host adds their masters and ports).
 */
export async function openChange(
  system: SystemClient,
  settings: NetworkSettings,
  o: { change: string; devices: string[]; body: WindowRequest; guard: ApiError | null },
): Promise<number | null> {
  const window = windowFor(settings, o.body, o.guard);
  const payload: ChangeOpenPayload = {
    area: 'network',
    change: o.change,
    devices: o.devices,
    ...(window === undefined ? {} : { window }),
  };
  return (await system.op<{ id: number | null }>(CHANGE_OPEN_OP, payload)).id;
}
