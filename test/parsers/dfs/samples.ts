/**
 * Which parser reads which upstream Lustre sample (by its directory and name under
 * `../shared/upstream-samples/lustre/`). Every sample must resolve here: the samples test fails on
 * a sample no rule covers.
 */
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseLctlDl, toDeviceRecord } from '../../../handlers/dfs/parse/lctl-dl';
import {
  parseColonLines,
  parseGetParam,
  parseHeadConcatenation,
  parseHealthCheck,
  parseImport,
  parseMgsLive,
  parseMgsServerUuid,
  parseNameList,
  parseSetParamError,
  paramValue,
  valueOf,
} from '../../../handlers/dfs/parse/get-param';
import { parseLctlPing, parseListNids } from '../../../handlers/dfs/parse/lctl-ping';
import { parseLfsCheck, parseLfsDf } from '../../../handlers/dfs/parse/lfs-df';
import {
  parseExport,
  parseGlobalShow,
  parseLnetctlPing,
  parseNetShow,
  parsePeerShow,
  parseStatsShow,
} from '../../../handlers/dfs/parse/lnetctl';
import { parseMkfsLustre } from '../../../handlers/dfs/parse/mkfs-lustre';
import { parseLustreMounts } from '../../../handlers/dfs/parse/mount';
import { parseZfsList, parseZpoolList, parseZpoolStatus } from '../../../handlers/dfs/parse/zfs';
import { parseKeyValueConf, parseUnitFile } from '../../../handlers/dfs/parse/keyvalue-conf';

export const repo = resolve(import.meta.dirname, '../../..');

/**
 * `<repo>/../shared` (CI: shared/ beside the checkout). A helper worktree lives one level deeper
 * (`/work/wt/<name>` beside `/work/shared`), and BALLAST_SHARED_DIR overrides both.
 */
export function sharedDir(): string {
  const candidates = [
    process.env.BALLAST_SHARED_DIR,
    join(repo, '..', 'shared'),
    join(repo, '..', '..', 'shared'),
  ].filter((x): x is string => !!x);
  const found = candidates.find((c) => existsSync(join(c, 'upstream-samples', 'lustre')));
  if (!found)
    throw new Error(
      `no shared/upstream-samples/lustre beside the repo (looked in ${candidates.join(', ')}); set BALLAST_SHARED_DIR`,
    );
  return found;
}

export type SampleParser = (text: string) => unknown;

const getParamWithHealth: SampleParser = (t) => {
  const params = parseGetParam(t);
  const h = paramValue(params, 'health_check');
  return { params, health: h === undefined ? undefined : parseHealthCheck(h) };
};

/** `<dir>/<file>` → parser (first match wins). */
export const RULES: { dir: string; file?: RegExp; parser: SampleParser; name: string }[] = [
  {
    dir: 'lctl-dl',
    name: 'lctl dl → device records',
    parser: (t) => parseLctlDl(t).map((d) => ({ line: d, record: toDeviceRecord(d) })),
  },
  {
    dir: 'lctl-get_param',
    file: /recovery_status-grep/,
    name: 'key: value lines',
    parser: (t) => parseColonLines(t, 'recovery_status'),
  },
  { dir: 'lctl-get_param', file: /mdt\.uuid/, name: 'get_param -n (one value)', parser: valueOf },
  { dir: 'lctl-get_param', file: /mgc\.import/, name: 'get_param -n import (YAML)', parser: parseImport },
  { dir: 'lctl-get_param', file: /mgs_server_uuid/, name: 'get_param -n mgs_server_uuid', parser: parseMgsServerUuid },
  { dir: 'lctl-get_param', file: /MGS\.filesystems|mgs-live-list/, name: 'name list', parser: (t) => parseNameList(t) },
  { dir: 'lctl-get_param', file: /MGS\.live\./, name: 'mgs live', parser: parseMgsLive },
  {
    dir: 'lctl-get_param',
    file: /procfs-values/,
    name: 'procfs values (head concatenation)',
    parser: parseHeadConcatenation,
  },
  { dir: 'lctl-get_param', name: 'get_param name=value', parser: getParamWithHealth },
  { dir: 'lctl-set_param', file: /EACCES/, name: 'set_param error', parser: parseSetParamError },
  { dir: 'lctl-set_param', name: 'set_param echo', parser: parseGetParam },
  { dir: 'lctl-list_nids', name: 'list_nids', parser: parseListNids },
  { dir: 'lctl-ping', name: 'lctl ping', parser: parseLctlPing },
  { dir: 'lfs-check', name: 'lfs check', parser: parseLfsCheck },
  { dir: 'lfs-df', name: 'lfs df', parser: parseLfsDf },
  { dir: 'lnetctl-export', name: 'lnetctl export', parser: parseExport },
  { dir: 'lnetctl-global-show', name: 'lnetctl global show', parser: parseGlobalShow },
  { dir: 'lnetctl-net-show', name: 'lnetctl net show', parser: parseNetShow },
  { dir: 'lnetctl-peer-show', name: 'lnetctl peer show', parser: parsePeerShow },
  { dir: 'lnetctl-ping', name: 'lnetctl ping', parser: parseLnetctlPing },
  { dir: 'lnetctl-stats-show', name: 'lnetctl stats show', parser: parseStatsShow },
  { dir: 'mkfs.lustre', name: 'mkfs.lustre', parser: parseMkfsLustre },
  { dir: 'mount', name: 'mount -t lustre', parser: parseLustreMounts },
  { dir: 'zfs-list', name: 'zfs list', parser: parseZfsList },
  { dir: 'zpool', file: /zpool-list/, name: 'zpool list', parser: parseZpoolList },
  { dir: 'zpool', name: 'zpool status / import', parser: parseZpoolStatus },
  { dir: 'flr-lamigo', file: /systemd-unit/, name: 'systemd unit', parser: parseUnitFile },
  { dir: 'flr-lamigo', file: /conf/, name: 'key=value conf', parser: (t) => parseKeyValueConf(t, 'lpurge conf') },
];

export function ruleFor(dir: string, file: string) {
  return RULES.find((r) => r.dir === dir && (!r.file || r.file.test(file)));
}
