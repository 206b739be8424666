/**
 * The systemd unit of a pod: a oneshot service whose start is the host's check of the stored
 * compose file and then `compose up -d`, and whose stop is `compose down` (handlers/pod/README.md
 * "The unit"). It works in the compose file's directory, which no container can reach, so compose
 * reads no `.env` a container wrote.
 */

/** One systemd command-line word: quoted when needed; `%` and `$` escaped so systemd expands nothing. */
export function unitWord(w: string): string {
  const esc = w.replace(/%/g, '%%').replace(/\$/g, '$$$$');
  if (/^[A-Za-z0-9_@%+=:,./-]+$/.test(esc)) return esc;
  return `"${esc.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;
}

export interface UnitInput {
  project: string;
  /** the data directory (mounted before start) */
  dir: string;
  /** the directory of the compose file (the working directory) */
  filesDir: string;
  /** the check run before every start (`ballast pod verify -- <project>`) */
  verifyArgv: string[];
  composeArgv: (sub: string[]) => string[];
  engineUnit: string;
  env: Record<string, string>;
  timeoutSec: number;
  productName: string;
}

export function renderUnit(u: UnitInput): string {
  const line = (argv: string[]) => argv.map(unitWord).join(' ');
  const env = Object.entries(u.env)
    .sort(([a], [b]) => (a < b ? -1 : 1))
    .map(([k, v]) => `Environment=${unitWord(`${k}=${v}`)}`);
  return [
    '[Unit]',
    `Description=${u.productName.replace(/[\n%]/g, ' ')} pod ${u.project}`,
    `Requires=${u.engineUnit}`,
    `After=${u.engineUnit} network-online.target`,
    'Wants=network-online.target',
    `RequiresMountsFor=${unitWord(u.dir)} ${unitWord(u.filesDir)}`,
    '',
    '[Service]',
    'Type=oneshot',
    'RemainAfterExit=yes',
    `WorkingDirectory=${unitWord(u.filesDir)}`,
    ...env,
    `ExecStartPre=${line(u.verifyArgv)}`,
    `ExecStart=${line(u.composeArgv(['up', '-d', '--remove-orphans']))}`,
    `ExecStop=${line(u.composeArgv(['down']))}`,
    `TimeoutStartSec=${u.timeoutSec}`,
    `TimeoutStopSec=${u.timeoutSec}`,
    '',
    '[Install]',
    'WantedBy=multi-user.target',
    '',
  ].join('\n');
}
