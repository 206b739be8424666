import type { Fixture } from './fixture-file';
import type { CommandBackend, ExecOptions, ExecResult, PtyResult, PtyStep } from './types';
import { SystemRefusal } from './types';

/**
 * Answers commands from recorded fixtures. Matching is on the exact argv. A fixture marked
 * `once` is used by the first matching call and then retired (for before/after sequences);
 * otherwise the last loaded fixture for an argv wins, so a scenario can override the base set.
 * A fixture with `after: <name>` (or a list of names) answers only once the fixture(s) of that
 * name have answered (the state a change leaves: the demo's `configure` → `list`); the most recent
 * such change wins, and on a tie the fixture naming more changes.
 * An argv with no fixture is a loud error naming it, never a silent empty success.
 */
export class ReplayBackend implements CommandBackend {
  /** `once` fixtures in load order, each with its argv key computed once */
  private readonly once: { key: string; fixture: Fixture }[] = [];
  private readonly sticky = new Map<string, Fixture>();
  /** `after` fixtures (sticky ones), by argv */
  private readonly states = new Map<string, Fixture[]>();
  /** fixture name → when it last answered (a counter) */
  private readonly answered = new Map<string, number>();
  private tick = 0;
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
      else if (f.after) this.states.set(key(f.argv), [...(this.states.get(key(f.argv)) ?? []), f]);
      else this.sticky.set(key(f.argv), f);
    }
  }

  private expand(arg: string): string {
    let out = arg;
    for (const [placeholder, real] of Object.entries(this.aliases)) out = out.split(placeholder).join(real);
    return out;
  }

  private record(call: { argv: string[]; stdin?: string; env?: Record<string, string> }): void {
    if (this.maxCalls <= 0) return;
    if (this.calls.length >= this.maxCalls) this.calls.splice(0, Math.ceil(this.maxCalls / 2));
    this.calls.push(call);
  }

  private take(argv: string[]): Fixture {
    const f = this.pick(argv);
    if (f?.name) this.answered.set(f.name, ++this.tick);
    if (f) return f;
    throw new SystemRefusal(
      'not_recorded',
      `replay: no recorded fixture for argv ${JSON.stringify(argv)} (a replay host answers only its recorded examples)`,
    );
  }

  private pick(argv: string[]): Fixture | undefined {
    const k = key(argv);
    // when the last of the changes it follows answered (0: no `after`, -1: not all yet), and a
    // fraction per change named, so that on a tie the fixture naming more changes wins
    const since = (f: Fixture) => {
      const names = f.after === undefined ? [] : Array.isArray(f.after) ? f.after : [f.after];
      let t = 0;
      for (const n of names) {
        const at = this.answered.get(n);
        if (at === undefined) return -1;
        t = Math.max(t, at);
      }
      return t + names.length / 1000;
    };
    let best = -1;
    let onceAt = -1;
    this.once.forEach((o, i) => {
      const t = o.key === k ? since(o.fixture) : -1;
      if (t > best) [best, onceAt] = [t, i];
    });
    let state: Fixture | undefined;
    for (const f of this.states.get(k) ?? []) {
      const t = since(f);
      if (t > best) [best, onceAt, state] = [t, -1, f];
    }
    if (onceAt >= 0) return this.once.splice(onceAt, 1)[0].fixture;
    return state ?? this.sticky.get(k);
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
