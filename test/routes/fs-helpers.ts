import type { CommandBackend, ExecOptions, ExecResult, PtyResult, PtyStep } from '../../runtime/system/types';
import { ReplayBackend } from '../../runtime/system/replay';
import type { Fixture } from '../../runtime/system/fixture-file';

/**
 * A replay back end whose fixture set a test replaces wholesale (`use`), so each test states
 * exactly which commands may run and sees only its own calls, on one shared host.
 */
export class SwitchableReplay implements CommandBackend {
  private current = new ReplayBackend();
  /** what each exec got on stdin (the replay back end itself keeps only a marker) */
  stdins: (string | undefined)[] = [];

  use(fixtures: Fixture[]): void {
    this.current = new ReplayBackend(fixtures);
    this.stdins = [];
  }

  calls(): ReplayBackend['calls'] {
    return this.current.calls;
  }

  exec(argv: string[], opts: ExecOptions): Promise<ExecResult> {
    this.stdins.push(opts.stdin);
    return this.current.exec(argv, opts);
  }

  pty(argv: string[], dialogue: PtyStep[], opts: Omit<ExecOptions, 'stdin'>): Promise<PtyResult> {
    return this.current.pty(argv, dialogue, opts);
  }
}
