/**
 * The systemd unit of one S3 share (pure). Only the share name, the configured paths, user and
 * server command reach the text; the share's own values (path, port, credentials) live in the
 * environment file and reach the command as `${VAR}`, which systemd expands to exactly one
 * argument each (systemd.service(5), "Command lines"). So no user-supplied text is ever parsed by
 * systemd as unit syntax.
 *
 * Quoting (systemd.syntax(7), systemd.service(5)): a word of plain characters is written bare;
 * any other word is written in double quotes with `\` and `"` escaped by `\`; in every word `%`
 * is written `%%` (specifiers) and `$` is written `$$` (variable expansion). A word that is
 * exactly `;`, control characters, and paths outside `[A-Za-z0-9_./@+-]` in EnvironmentFile=
 * cannot be rendered safely and are refused.
 */
import { serviceName } from '../names';
import type { S3Settings } from '../contract';

export class RenderError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'RenderError';
  }
}

export interface UnitInput {
  shareName: string;
  /** absolute path of the share's environment file */
  envFile: string;
  settings: Pick<S3Settings, 'serverCommand' | 'env' | 'user' | 'group'>;
}

const BARE = /^[A-Za-z0-9_./:,=@+-]+$/;
const CONTROL = /[\u0000-\u001f\u007f]/;
const PLAIN_PATH = /^\/[A-Za-z0-9_./@+-]+$/;
const PLACEHOLDER = /\{(path|port)\}/g;

function escapeLiteral(s: string): string {
  return s.replace(/%/g, '%%').replace(/\$/g, '$$$$');
}

/** One ExecStart word; `{path}`/`{port}` become `${<var>}` of the configured variable names. */
export function renderCommandWord(word: string, vars: { path: string; port: string }): string {
  if (CONTROL.test(word))
    throw new RenderError(`server command word ${JSON.stringify(word)} contains a control character`);
  if (word === ';' || word === '')
    throw new RenderError(`server command word ${JSON.stringify(word)} cannot be rendered`);
  const parts: string[] = [];
  let last = 0;
  for (const m of word.matchAll(PLACEHOLDER)) {
    parts.push(escapeLiteral(word.slice(last, m.index)));
    parts.push(`\${${m[1] === 'path' ? vars.path : vars.port}}`);
    last = (m.index ?? 0) + m[0].length;
  }
  parts.push(escapeLiteral(word.slice(last)));
  const literal = word.replace(PLACEHOLDER, '');
  if (literal === '' || BARE.test(literal)) return parts.join('');
  return `"${parts.map((p) => (p.startsWith('${') ? p : p.replace(/\\/g, '\\\\').replace(/"/g, '\\"'))).join('')}"`;
}

export function renderUnit(u: UnitInput): string {
  const { settings: s } = u;
  if (!PLAIN_PATH.test(u.envFile) || u.envFile.split('/').includes('..')) {
    throw new RenderError(
      `environment file path ${JSON.stringify(u.envFile)} cannot be written into a unit (letters, digits and _ . / @ + - only)`,
    );
  }
  const [exe] = s.serverCommand;
  if (!exe || !PLAIN_PATH.test(exe))
    throw new RenderError(
      `server executable ${JSON.stringify(exe)} must be an absolute path of letters, digits and _ . / @ + -`,
    );
  const exec = s.serverCommand.map((w) => renderCommandWord(w, s.env)).join(' ');
  const lines = [
    `# S3 share ${u.shareName} (${serviceName(u.shareName)}), managed by Ballast: changes here are overwritten.`,
    '[Unit]',
    `Description=Ballast S3 share ${u.shareName}`,
    'Wants=network-online.target',
    'After=network-online.target',
    '',
    '[Service]',
    // exec: start fails when the server cannot be executed at all (rolled back), but a server
    // that starts and then exits (credentials below the S3 minimums) leaves the share created.
    'Type=exec',
    `User=${s.user}`,
    ...(s.group ? [`Group=${s.group}`] : []),
    `EnvironmentFile=${u.envFile}`,
    `ExecStart=${exec}`,
    'Restart=on-failure',
    'RestartSec=5s',
    'LimitNOFILE=65536',
    '',
    '[Install]',
    'WantedBy=multi-user.target',
    '',
  ];
  return lines.join('\n');
}
