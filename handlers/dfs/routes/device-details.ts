import * as z from 'zod';
import { ApiError } from '../../core/errors';
import { ParseError } from '../../core/parse-error';
import { route } from '../../core/route';
import { devices, lctl, run } from '../commands';
import { mgsNidOf, osdOf } from '../devices';
import { deviceName, TARGET_RE } from '../names';
import { paramValue, parseGetParam } from '../parse/get-param';
import { deviceDetail } from '../responses';

const OSD_KEYS = ['blocksize', 'kbytesavail', 'kbytesfree', 'kbytestotal', 'mntdev'] as const;

export default route({
  method: 'GET',
  path: '/dfs/device/:device/details',
  permission: 'dfs:read',
  summary:
    'A metadata or object storage target this node serves (demofs-MDT0000, demofs-OST0001): its osd, mdt/mdd or obdfilter devices and space',
  params: z.object({ device: deviceName.describe('target name <fs>-MDTnnnn or <fs>-OSTnnnn (hex index)') }),
  response: deviceDetail,
  examples: [{ summary: "the demo node's metadata target", params: { device: 'demofs-MDT0000' } }],
  async handler({ params, system, vars }) {
    const t = TARGET_RE.exec(params.device);
    if (!t)
      throw new ApiError(
        'bad_request',
        `${params.device} is not a target name (<fs>-MDTnnnn or <fs>-OSTnnnn); the MGS has GET /dfs/device/mgs`,
      );
    const [label, fs, kind, hex] = [params.device, t[1], t[2] as 'MDT' | 'OST', t[3]];
    const d = await devices(system, vars);
    const main = d.lines.find(
      (x) => x.name === label && (kind === 'MDT' ? x.type === 'mdt' || x.type === 'mds' : x.type === 'obdfilter'),
    );
    if (!main)
      throw new ApiError(
        'not_found',
        `this node does not serve ${label} (lctl dl lists no ${kind === 'MDT' ? 'mdt' : 'obdfilter'} device of that name)`,
      );
    const osd = osdOf(d.lines, label);
    if (!osd) throw new ApiError('bad_gateway', `lctl dl lists ${label} but no ${label}-osd device`);
    const names = OSD_KEYS.map((k) => `${osd.type}.${label}.${k}`);
    if (kind === 'MDT') names.push(`mdt.${label}.readonly`);
    const p = parseGetParam((await run(system, vars, lctl(vars, 'get_param', ...names), 'lctlMs')).stdout);
    const get = (n: string) => {
      const v = paramValue(p, n);
      if (v === undefined) throw new ParseError('lctl get_param', `no ${n}`);
      return v.trim();
    };
    const int = (n: string) => {
      const v = get(n);
      if (!/^\d+$/.test(v)) throw new ParseError('lctl get_param', `${n} is not an integer`);
      return Number(v);
    };
    const osdRec = {
      name: osd.name,
      uuid: osd.uuid,
      blocksize: int(`${osd.type}.${label}.blocksize`),
      kbytesavail: int(`${osd.type}.${label}.kbytesavail`),
      kbytesfree: int(`${osd.type}.${label}.kbytesfree`),
      kbytestotal: int(`${osd.type}.${label}.kbytestotal`),
      mntdev: get(`${osd.type}.${label}.mntdev`),
    };
    const devicesOut: Record<string, unknown> = { [osd.type]: osdRec };
    if (kind === 'MDT') {
      const ro = get(`mdt.${label}.readonly`);
      if (ro !== '0' && ro !== '1')
        throw new ParseError('lctl get_param', `mdt.${label}.readonly is ${JSON.stringify(ro)}`);
      devicesOut.mdt = { name: main.name, uuid: main.uuid, readonly: ro === '1' };
      const mdd = d.lines.find((x) => x.type === 'mdd' && x.name === `${fs}-MDD${hex}`);
      if (mdd) devicesOut.mdd = { name: mdd.name, uuid: mdd.uuid };
    } else {
      devicesOut.obdfilter = { name: main.name, uuid: main.uuid };
    }
    return {
      devices: devicesOut,
      mgs: mgsNidOf(d.lines),
      name: label,
      filesystem: fs,
      type: kind,
      index: parseInt(hex, 16),
    };
  },
});
