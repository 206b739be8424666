/**
 * Refusal rules for make_filesystem, mount and unmount, as pure functions over parsed facts
 * (lsblk, findmnt, /proc/swaps, wipefs). The route gathers the facts through SYSTEM and asks
 * here; the answer's `code` is stable (for tests and clients), `reason` is for people and
 * becomes the 409 message.
 *
 * make_filesystem refuses a device that
 *   - is not a block device lsblk knows, is read-only, or is a CD/DVD (`rom`);
 *   - is mounted (lsblk MOUNTPOINTS, or any findmnt source naming it);
 *   - is active swap (/proc/swaps, or lsblk's `[SWAP]`);
 *   - has anything stacked on it (partitions, device-mapper/LVM/md/crypt holders: lsblk
 *     children): formatting a disk under a mounted partition would destroy it;
 *   - carries any signature (filesystem, partition table, RAID, LUKS, swap): creating a
 *     filesystem over existing data must be a deliberate wipe elsewhere, never a side effect.
 * The checks run in that order so the reason names the most telling problem.
 */
import { isUnder } from '../core/paths';
import type { MountEntry } from '../tools/findmnt';
import { flattenLsblk, type LsblkDevice } from '../tools/lsblk';
import type { CheckResult } from './check-result';
import type { SwapEntry } from './parse/proc-swaps';
import type { WipefsSignature } from './parse/wipefs';

export interface DeviceFacts {
  /** the device as requested (e.g. `/dev/loop0`) */
  device: string;
  /** `lsblk -J -b -o ... -- <device>`: the device and what is stacked on it */
  lsblk: readonly LsblkDevice[];
  /** `findmnt -J` over all mounts */
  mounts: readonly MountEntry[];
  /** /proc/swaps */
  swaps: readonly SwapEntry[];
  /** `wipefs -n -J -- <device>` */
  signatures: readonly WipefsSignature[];
}

const refuse = (code: string, reason: string): CheckResult => ({ ok: false, code, reason });

/**
 * Locate the requested device in lsblk output, by path or by `/dev/<name>`. Links such as
 * /dev/disk/by-id/... are not followed here (pure code cannot): the route resolves them first,
 * and an unresolved link is refused as unknown, which is the safe answer.
 */
export function findDevice(lsblk: readonly LsblkDevice[], device: string): LsblkDevice | null {
  const all = flattenLsblk(lsblk);
  return (
    all.find((d) => d.path === device) ??
    all.find(
      (d) => (d.name !== null && `/dev/${d.name}` === device) || (d.kname !== null && `/dev/${d.kname}` === device),
    ) ??
    null
  );
}

function describe(d: LsblkDevice): string {
  return `${d.path} (${d.type})`;
}

export function checkDeviceFree(facts: DeviceFacts): CheckResult {
  const node = findDevice(facts.lsblk, facts.device);
  if (!node) return refuse('not-a-block-device', `${facts.device} is not a block device known to lsblk`);
  const path = node.path;
  if (node.ro === true) return refuse('read-only', `${path} is read-only`);
  if (node.type === 'rom') return refuse('not-writable', `${path} is an optical drive`);

  const mountedAt = node.mountpoints.filter((m) => m !== '[SWAP]');
  const byFindmnt = facts.mounts.filter((m) => m.sourceDevice === path || m.sourceDevice === facts.device);
  const targets = [...new Set([...mountedAt, ...byFindmnt.map((m) => m.target)])];
  if (targets.length > 0) {
    return refuse('mounted', `${path} is mounted at ${targets.map((t) => JSON.stringify(t)).join(', ')}`);
  }

  if (
    node.mountpoints.includes('[SWAP]') ||
    facts.swaps.some((s) => s.filename === path || s.filename === facts.device)
  ) {
    return refuse('swap', `${path} is in use as swap`);
  }

  if (node.children.length > 0) {
    const busy = flattenLsblk(node.children);
    const mountedBelow = busy.filter((c) => c.mountpoints.length > 0);
    const detail = mountedBelow.length
      ? `; ${mountedBelow.map((c) => `${c.path} is ${c.mountpoints.includes('[SWAP]') ? 'swap' : `mounted at ${c.mountpoints.map((m) => JSON.stringify(m)).join(', ')}`}`).join('; ')}`
      : '';
    return refuse('in-use', `${path} holds other devices: ${node.children.map(describe).join(', ')}${detail}`);
  }

  if (facts.signatures.length > 0) {
    const sigs = facts.signatures.map(
      (s) => `${s.type}${s.usage ? ` (${s.usage})` : ''} at offset 0x${s.offset.toString(16)}`,
    );
    return refuse('signature', `${path} already carries ${sigs.join(', ')}`);
  }
  // lsblk's udev-sourced columns, when present, are a second witness of the same thing
  if (node.fstype !== null || node.pttype !== null) {
    return refuse('signature', `${path} already carries ${node.fstype ?? `a ${node.pttype} partition table`}`);
  }
  return { ok: true };
}

// ---------------------------------------------------------------------------------------------
// mount / unmount
// ---------------------------------------------------------------------------------------------

/** `/a/b/` → `/a/b`; mount targets are compared as findmnt prints them (no trailing slash). */
function normaliseTarget(p: string): string {
  return p.length > 1 ? p.replace(/\/+$/, '') : p;
}

export function checkCanMount(facts: {
  device: string;
  mountpoint: string;
  mounts: readonly MountEntry[];
}): CheckResult {
  const target = normaliseTarget(facts.mountpoint);
  const onTarget = facts.mounts.find((m) => m.target === target);
  if (onTarget) {
    return refuse('mountpoint-busy', `${JSON.stringify(target)} is already a mountpoint (of ${onTarget.source})`);
  }
  const deviceMounts = facts.mounts.filter((m) => m.sourceDevice === facts.device);
  if (deviceMounts.length > 0) {
    return refuse(
      'already-mounted',
      `${facts.device} is already mounted at ${deviceMounts.map((m) => JSON.stringify(m.target)).join(', ')}`,
    );
  }
  return { ok: true };
}

export function checkCanUnmount(facts: {
  mountpoint: string;
  /** optional in the spec; when given it must be what is mounted there */
  device?: string;
  mounts: readonly MountEntry[];
}): CheckResult {
  const target = normaliseTarget(facts.mountpoint);
  // findmnt lists stacked mounts in order; the last one on a target is the visible one
  const onTarget = facts.mounts.filter((m) => m.target === target);
  if (onTarget.length === 0) return refuse('not-mounted', `${JSON.stringify(target)} is not mounted`);
  const top = onTarget[onTarget.length - 1];
  if (facts.device !== undefined && top.sourceDevice !== facts.device) {
    return refuse('device-mismatch', `${JSON.stringify(target)} holds ${top.source}, not ${facts.device}`);
  }
  const below = facts.mounts.filter((m) => isUnder(m.target, target, true));
  if (below.length > 0) {
    return refuse(
      'has-submounts',
      `${JSON.stringify(target)} has filesystems mounted below it: ${below.map((m) => JSON.stringify(m.target)).join(', ')}`,
    );
  }
  return { ok: true };
}
