import { join } from 'node:path';
import { hostname } from 'node:os';
import { writeFixture } from './fixture-file';
import type { CommandBackend, ExecOptions, ExecResult, PtyResult, PtyStep, StopSignal } from './types';

/** Live commands, each also written as a fixture: how a real appliance is captured for replay. */
export class RecordBackend implements CommandBackend {
  private n = 0;
  constructor(
    private readonly live: CommandBackend,
    private readonly dir: string,
  ) {}

  private file(argv: string[]): string {
    const tool = argv[0].slice(argv[0].lastIndexOf('/') + 1).replace(/[^A-Za-z0-9_.-]/g, '_');
    const slug = argv
      .slice(1)
      .join('-')
      .replace(/[^A-Za-z0-9_.-]+/g, '_')
      .slice(0, 60);
    const stamp = new Date().toISOString().replace(/[:.]/g, '-');
    return join(this.dir, tool, `${stamp}-${++this.n}-${slug || 'noargs'}.yaml`);
  }

  private source(): string {
    return `recorded live on ${hostname()} at ${new Date().toISOString()} by ballast record`;
  }

  async exec(argv: string[], opts: ExecOptions, stop?: StopSignal): Promise<ExecResult> {
    const r = await this.live.exec(argv, opts, stop);
    writeFixture(this.file(argv), { source: this.source(), argv, code: r.code, stdout: r.stdout, stderr: r.stderr });
    return r;
  }

  async pty(
    argv: string[],
    dialogue: PtyStep[],
    opts: Omit<ExecOptions, 'stdin'>,
    stop?: StopSignal,
  ): Promise<PtyResult> {
    const r = await this.live.pty(argv, dialogue, opts, stop);
    // The dialogue's answers are not stored: they may be passwords.
    writeFixture(this.file(argv), { source: this.source(), argv, code: r.code, stdout: r.output, stderr: '' });
    return r;
  }
}
