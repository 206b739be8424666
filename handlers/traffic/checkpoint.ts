/**
 * Traffic rule changes with a confirmation window (handlers/network/README.md "Changing the
 * management interface safely"): a rule that throttles the manager's own address can cut the
 * box off as surely as a wrong address. The checkpoint, its deadline and the rollback belong to
 * the host's network area, which keeps one for network and traffic changes alike; these are its
 * op names (declared with their payload schemas in handlers/network/contract.ts, which this area
 * may not import: an area's routes import only core, tools and themselves).
 */
import type { SystemClient } from '../core/system';

const CHANGE_OPEN_OP = 'network/change/open';
const CHANGE_KEEP_OP = 'network/change/keep';
const CHANGE_DROP_OP = 'network/change/drop';

/**
 * 409 while another network change waits for its confirmation; with `confirmWithin` the host
 * takes the checkpoint (tc of `device`, the stored rule `name` as it is now) and answers its id.
 */
export async function openTrafficChange(
  system: SystemClient,
  o: { change: string; device: string; rule: string; confirmWithin?: number },
): Promise<number | null> {
  const r = await system.op<{ id: number | null }>(CHANGE_OPEN_OP, {
    area: 'traffic',
    change: o.change,
    devices: [o.device],
    rules: [o.rule],
    ...(o.confirmWithin === undefined ? {} : { window: o.confirmWithin }),
  });
  return r.id;
}

/** The change is applied: its deadline starts. `undo`: tc argv (real binary) that take it back. */
export async function keepTrafficChange(system: SystemClient, id: number | null, undo: string[][]): Promise<void> {
  if (id === null) return;
  await system.op(CHANGE_KEEP_OP, { id, undo: undo.length ? [undo] : [] });
}

/** The change failed (and was undone): the slot is free again. Never throws: the failure is what matters. */
export async function dropTrafficChange(system: SystemClient, id: number | null): Promise<void> {
  if (id === null) return;
  await system.op(CHANGE_DROP_OP, { id }).catch((e: unknown) => {
    console.error(`traffic: could not free the checkpoint of change ${id}`, e);
  });
}
