import { ApiError } from '../../core/errors';
import { route } from '../../core/route';
import { ParseError } from '../../core/parse-error';
import { devices, lctl, run } from '../commands';
import { osdOf } from '../devices';
import { paramValue, parseGetParam } from '../parse/get-param';
import { mgsDevice } from '../responses';

export default route({
  method: 'GET',
  path: '/dfs/device/mgs',
  permission: 'dfs:read',
  summary:
    'The management server of this node: its uuid, the filesystems registered with it and its backend (404 on a node without an MGS)',
  response: mgsDevice,
  examples: [{ summary: 'the MGS of the demo node (MGT on ZFS, filesystem demofs)' }],
  async handler({ system, vars }) {
    const d = await devices(system, vars);
    const mgs = d.lines.find((x) => x.type === 'mgs');
    if (!mgs) throw new ApiError('not_found', 'this node runs no management server (lctl dl lists no mgs device)');
    // A standalone MGT has its own osd (MGS-osd); an MGS combined with MDT0000 lives on that MDT's osd.
    const osd =
      osdOf(d.lines, 'MGS') ?? d.lines.find((x) => x.type.startsWith('osd-') && /-MDT[0-9a-f]{4}-osd$/.test(x.name));
    if (!osd) throw new ApiError('bad_gateway', 'lctl dl lists an mgs but no osd device holding it');
    const target = osd.name.replace(/-osd$/, '');
    const argv = lctl(
      vars,
      'get_param',
      'mgs.MGS.filesystems',
      `${osd.type}.${target}.fstype`,
      `${osd.type}.${target}.mntdev`,
    );
    const params = parseGetParam((await run(system, vars, argv, 'lctlMs')).stdout);
    const fstype = paramValue(params, `${osd.type}.${target}.fstype`);
    const mntdev = paramValue(params, `${osd.type}.${target}.mntdev`);
    if (fstype === undefined || mntdev === undefined)
      throw new ParseError('lctl get_param', `no fstype/mntdev of ${osd.type}.${target}`);
    const fs = (paramValue(params, 'mgs.MGS.filesystems') ?? '')
      .split('\n')
      .map((s) => s.trim())
      .filter(Boolean);
    return { uuid: mgs.uuid, filesystems: fs, fstype: fstype.trim(), mntdev: mntdev.trim() };
  },
});
