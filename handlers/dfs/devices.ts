/** Device answers built from `lctl dl` and `lctl get_param` (pure, shared by the device routes). */
import { ApiError } from '../core/errors';
import type { DlLine } from './parse/lctl-dl';
import { toDeviceRecord, type DeviceRecord } from './parse/lctl-dl';

/** Warnings for a device listing: devices not UP, and stderr. */
export function deviceWarnings(lines: DlLine[], stderr: string): string {
  const w = lines.filter((d) => d.status !== 'UP').map((d) => `device ${d.index} ${d.name} (${d.type}) is ${d.status}`);
  if (stderr.trim()) w.push(stderr.trim());
  return w.join('\n');
}

export const deviceRecords = (lines: DlLine[]): DeviceRecord[] => lines.map(toDeviceRecord);

/** The MGS NID this node uses: the first mgc (`MGC<nid>`). */
export function mgsNidOf(lines: DlLine[]): string {
  const mgc = lines.find((d) => d.type === 'mgc' && d.name.startsWith('MGC'));
  if (!mgc)
    throw new ApiError('conflict', 'this node has no management client (mgc): no Lustre target or client is running');
  return mgc.name.slice(3);
}

/** The osd device of a target (`<label>-osd`, or `MGS-osd`): its type says the backend. */
export function osdOf(lines: DlLine[], label: string): DlLine | undefined {
  return lines.find((d) => d.type.startsWith('osd-') && d.name === `${label}-osd`);
}
