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
  /** `once` fixtures in load order, each with its argv key computed once */
  private readonly once: { key: string; fixture: Fixture }[] = [];
  private readonly sticky = new Map<string, Fixture>();
  /**
   * The calls answered, oldest first, for tests to assert on (argv, whether stdin was given,
   * env). Bounded: past `maxCalls` the oldest half is dropped, so a long-running replay host
   * (the demo, the bench) keeps flat memory; the host's own replay back end records none.
   */
  readonly calls: { argv: string[]; stdin?: string; env?: Record<string, string> }[] = [];
  private readonly maxCalls: number;

  /**
   * `aliases` maps a placeholder used in fixture argv (e.g. `$ROOT`) to the real prefix it stands
   * for on this checkout (the demo's var/demo/root), so fixtures stay valid wherever the repo lives.
   * `maxCalls`: how many calls `calls` keeps (default REPLAY_CALLS_KEPT; 0: none).
   */
  constructor(
    fixtures: Fixture[] = [],
    private readonly aliases: Record<string, string> = {},
    o: { maxCalls?: number } = {},
  ) {
    this.maxCalls = o.maxCalls ?? REPLAY_CALLS_KEPT;
    this.load(fixtures);
  }

  load(fixtures: Fixture[]): void {
    for (const f0 of fixtures) {
      const f = { ...f0, argv: f0.argv.map((a) => this.expand(a)) };
      if (f.once) this.once.push({ key: key(f.argv), fixture: f });
      else this.sticky.set(key(f.argv), f);
    }
  }

  private record(call: { argv: string[]; stdin?: string; env?: Record<string, string> }): void {
    if (this.maxCalls <= 0) return;
    if (this.calls.length >= this.maxCalls) this.calls.splice(0, Math.ceil(this.maxCalls / 2));
    this.calls.push(call);
  }

  private expand(arg: string): string {
    let out = arg;
    for (const [placeholder, real] of Object.entries(this.aliases)) out = out.split(placeholder).join(real);
    return out;
  }

  private take(argv: string[]): Fixture {
    const k = key(argv);
    if (this.once.length > 0) {
      const i = this.once.findIndex((f) => f.key === k);
      if (i >= 0) return this.once.splice(i, 1)[0].fixture;
    }
    const f = this.sticky.get(k);
    if (f) return f;
    throw new SystemRefusal(
      'not_recorded',
      `replay: no recorded fixture for argv ${JSON.stringify(argv)} (a replay host answers only its recorded examples)`,
    );
  }

  async exec(argv: string[], opts: ExecOptions): Promise<ExecResult> {
    this.record({ argv, stdin: opts.stdin === undefined ? undefined : '<stdin>', env: opts.env });
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
    this.record({ argv, env: opts.env });
    const f = this.take(argv);
    return { code: f.code, output: f.stdout + f.stderr, timedOut: false, durationMs: 0 };
  }
}

const key = (argv: string[]) => JSON.stringify(argv);

/** What a ReplayBackend keeps of its calls by default (tests read them; see `calls`). */
export const REPLAY_CALLS_KEPT = 10_000;
