/**
 * `lctl dl` / `lctl dl -t` (= /sys/kernel/debug/lustre/devices): `%3d %s %s %s %s %d[ %s]` —
 * index, status, type, name, uuid, refcount, and with `-t` the server NID on osc/mdc lines only.
 * Split on whitespace, never on columns (pasted samples shift the index). Tolerated quirks:
 * - a refcount glued to a 36-character UUID (a copy error in the Lustre manual's 1.8 example);
 * - duplicate or misaligned indices (a hand-edited IML fixture): indices are read, not checked.
 */
import { ParseError } from '../../core/parse-error';
import { isNid } from '../names';

const DL_STATUSES = ['UP', 'ST', 'IN', 'AT', '--'] as const;

export interface DlLine {
  index: number;
  status: string;
  type: string;
  name: string;
  uuid: string;
  refcount: number;
  /** `-t` only: the NID of the server an osc/mdc is connected to. */
  nid?: string;
}

const UUID_GLUED = /^([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})(\d+)$/;

export function parseLctlDl(text: string): DlLine[] {
  const out: DlLine[] = [];
  const lines = text.split('\n');
  lines.forEach((raw, i) => {
    const line = raw.trim();
    if (line === '') return;
    let f = line.split(/\s+/);
    if (f.length === 5) {
      const m = UUID_GLUED.exec(f[4]);
      if (m) f = [...f.slice(0, 4), m[1], m[2]];
    }
    if (f.length !== 6 && f.length !== 7)
      throw new ParseError('lctl dl', `expected 6 or 7 fields, got ${f.length}`, i + 1);
    const [idx, status, type, name, uuid, ref, nid] = f;
    if (!/^\d+$/.test(idx))
      throw new ParseError('lctl dl', `device index ${JSON.stringify(idx)} is not a number`, i + 1);
    if (!(DL_STATUSES as readonly string[]).includes(status))
      throw new ParseError('lctl dl', `unknown device status ${JSON.stringify(status)}`, i + 1);
    if (!/^\d+$/.test(ref)) throw new ParseError('lctl dl', `refcount ${JSON.stringify(ref)} is not a number`, i + 1);
    if (!/^[a-z][a-z0-9-]*$/.test(type))
      throw new ParseError('lctl dl', `device type ${JSON.stringify(type)} is not a type name`, i + 1);
    if (nid !== undefined && !isNid(nid))
      throw new ParseError('lctl dl', `7th field ${JSON.stringify(nid)} is not a NID`, i + 1);
    const d: DlLine = { index: Number(idx), status, type, name, uuid, refcount: Number(ref) };
    if (nid !== undefined) d.nid = nid;
    out.push(d);
  });
  return out;
}

/** The spec's device record. */
export interface DeviceRecord {
  status: string;
  type: string;
  name: string;
  short_name: string;
  uuid: string;
  ref_count: string;
  index?: number;
  filesystem?: string;
  nid?: string;
}

const TARGET_IN_NAME = /^([A-Za-z0-9_]{1,8})-((MDT|OST|MDD|QMT)([0-9a-fA-F]{4}))(?:-|$)/;
const CLIENT_STACK = /^([A-Za-z0-9_]{1,8})-(clilov|clilmv|mdtlov)(?:-|$)/;

/**
 * What a device line says in the spec's terms: `short_name` is the target label (`OST000a`) for
 * target-bound devices, `clilov`/`clilmv`/`mdtlov` for the stacks, `MGC` for a management client
 * (its NID comes from the name), `MGS` for the management server and its osd, else the name.
 * `index` is the decimal target index (`OST000a` → 10), `filesystem` the fsname.
 */
export function toDeviceRecord(d: DlLine): DeviceRecord {
  const r: DeviceRecord = {
    status: d.status,
    type: d.type,
    name: d.name,
    short_name: d.name,
    uuid: d.uuid,
    ref_count: String(d.refcount),
  };
  const t = TARGET_IN_NAME.exec(d.name);
  const c = CLIENT_STACK.exec(d.name);
  if (t) {
    r.filesystem = t[1];
    r.short_name = `${t[3]}${t[4]}`;
    r.index = parseInt(t[4], 16);
  } else if (c) {
    r.filesystem = c[1];
    r.short_name = c[2];
  } else if (d.type === 'mgc' && d.name.startsWith('MGC') && isNid(d.name.slice(3))) {
    r.short_name = 'MGC';
    r.nid = d.name.slice(3);
  } else if (/^MGS(-osd)?$/.test(d.name)) {
    r.short_name = 'MGS';
  }
  if (d.nid) r.nid = d.nid;
  return r;
}
