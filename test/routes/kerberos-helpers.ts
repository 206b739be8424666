/**
 * Shared bits of the Kerberos route tests: every Kerberos route module, and a replay back end
 * that also remembers what a real one would receive but replay ignores (the pty dialogue and the
 * options), and can play a command that hangs past its time limit.
 */
import { ReplayBackend } from '../../runtime/system/replay';
import type { ExecOptions, ExecResult, PtyResult, PtyStep } from '../../runtime/system/types';
import type { Fixture } from '../../runtime/system/fixture-file';
import type { RouteModule } from '../../handlers/core/route';
import confGet from '../../handlers/kerberos/routes/conf-get';
import confUpdate from '../../handlers/kerberos/routes/conf-update';
import keyList from '../../handlers/kerberos/routes/key-list';
import realmCreate from '../../handlers/kerberos/routes/realm-create';
import realmDelete from '../../handlers/kerberos/routes/realm-delete';
import realmDetails from '../../handlers/kerberos/routes/realm-details';
import realmList from '../../handlers/kerberos/routes/realm-list';
import realmUpdate from '../../handlers/kerberos/routes/realm-update';
import ticketDestroy from '../../handlers/kerberos/routes/ticket-destroy';
import ticketList from '../../handlers/kerberos/routes/ticket-list';
import ticketObtain from '../../handlers/kerberos/routes/ticket-obtain';

export const KERBEROS_ROUTES: RouteModule[] = [
  ticketObtain,
  ticketList,
  ticketDestroy,
  keyList,
  confGet,
  confUpdate,
  realmList,
  realmCreate,
  realmDetails,
  realmUpdate,
  realmDelete,
];

export interface SeenCall {
  kind: 'exec' | 'pty';
  argv: string[];
  dialogue?: PtyStep[];
  opts: ExecOptions;
}

export class InspectingReplay extends ReplayBackend {
  readonly seen: SeenCall[] = [];
  /** argv (JSON) that "hang": answered as a command killed at its time limit. */
  readonly hanging = new Set<string>();

  constructor(fixtures: Fixture[] = []) {
    super(fixtures);
  }

  override async exec(argv: string[], opts: ExecOptions): Promise<ExecResult> {
    this.seen.push({ kind: 'exec', argv, opts });
    if (this.hanging.has(JSON.stringify(argv))) {
      return {
        code: 143,
        signal: 'SIGTERM',
        stdout: '',
        stderr: '',
        timedOut: true,
        truncated: false,
        durationMs: opts.timeoutMs ?? 0,
      };
    }
    return super.exec(argv, opts);
  }

  override async pty(argv: string[], dialogue: PtyStep[], opts: Omit<ExecOptions, 'stdin'>): Promise<PtyResult> {
    this.seen.push({ kind: 'pty', argv, dialogue, opts });
    if (this.hanging.has(JSON.stringify(argv)))
      return { code: -1, output: '', timedOut: true, durationMs: opts.timeoutMs ?? 0 };
    return super.pty(argv, dialogue, opts);
  }

  last(): SeenCall {
    const c = this.seen[this.seen.length - 1];
    if (!c) throw new Error('no command was run');
    return c;
  }
}

/** A pty fixture: kinit's output as a terminal shows it (CRLF line ends, stdout and stderr merged). */
export function ptyFixture(argv: string[], code: number, lines: string[], source: string): Fixture {
  return { source, argv, code, stdout: lines.map((l) => `${l}\r\n`).join(''), stderr: '' };
}
