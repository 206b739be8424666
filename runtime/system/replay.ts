import type { Fixture } from './fixture-file';
import type { CommandBackend, ExecOptions, ExecResult, PtyResult, PtyStep } from './types';
import { SystemRefusal } from './types';

/**
 * Answers commands from recorded fixtures. Matching is on the exact argv. A fixture marked
 * `once` is used by the first matching call and then retired (for before/after sequences);
 * otherwise the last loaded fixture for an argv wins, so a scenario can override the base set.
 * An argv with no fixture is a loud error naming it, never a silent empty success.
 */
export class ReplayBackend implements CommandBackend {
  private readonly once: Fixture[] = [];
  private readonly sticky = new Map<string, Fixture>();
  readonly calls: { argv: string[]; stdin?: string; env?: Record<string, string> }[] = [];

  /**
   * `aliases` maps a placeholder used in fixture argv (e.g. `$ROOT`) to the real prefix it stands
   * for on this checkout (the demo's var/demo/root), so fixtures stay valid wherever the repo lives.
   */
  constructor(
    fixtures: Fixture[] = [],
    private readonly aliases: Record<string, string> = {},
  ) {
    this.load(fixtures);
  }

  load(fixtures: Fixture[]): void {
    for (const f0 of fixtures) {
      const f = { ...f0, argv: f0.argv.map((a) => this.expand(a)) };
      if (f.once) this.once.push(f);
      else this.sticky.set(key(f.argv), f);
    }
  }

  private expand(arg: string): string {
    let out = arg;
    for (const [placeholder, real] of Object.entries(this.aliases)) out = out.split(placeholder).join(real);
    return out;
  }

  private take(argv: string[]): Fixture {
    const k = key(argv);
    const i = this.once.findIndex((f) => key(f.argv) === k);
    if (i >= 0) return this.once.splice(i, 1)[0];
    const f = this.sticky.get(k);
    if (f) return f;
    throw new SystemRefusal(
      'not_recorded',
      `replay: no recorded fixture for argv ${JSON.stringify(argv)} (a replay host answers only its recorded examples)`,
    );
  }

  async exec(argv: string[], opts: ExecOptions): Promise<ExecResult> {
    this.calls.push({ argv, stdin: opts.stdin === undefined ? undefined : '<stdin>', env: opts.env });
    const f = this.take(argv);
    return {
      code: f.code,
      signal: null,
      stdout: f.stdout,
      stderr: f.stderr,
      timedOut: false,
      truncated: false,
      durationMs: 0,
    };
  }

  async pty(argv: string[], _dialogue: PtyStep[], opts: Omit<ExecOptions, 'stdin'>): Promise<PtyResult> {
    this.calls.push({ argv, env: opts.env });
    const f = this.take(argv);
    return { code: f.code, output: f.stdout + f.stderr, timedOut: false, durationMs: 0 };
  }
}

const key = (argv: string[]) => JSON.stringify(argv);
