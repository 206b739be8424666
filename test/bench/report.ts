/**
 * Rows of `npm run bench`: each figure with its samples (one per round), printed as a Markdown
 * table of median and spread (min–max), so a run can be pasted into the README as it is. Other
 * bench files (test/bench/isolate.ts) build Rows and print them with the same function.
 */
export interface Row {
  /** what was measured, e.g. "DB route, Ballast host" */
  figure: string;
  /** "req/s", "ms", "MB", "×"… */
  unit: string;
  /** one value per round */
  samples: number[];
  /** decimals shown (default: 0, or 2 for ratios) */
  digits?: number;
  /** a target from the issue, shown beside the figure, e.g. "≥ 0.60" */
  target?: string;
}

export interface Stats {
  median: number;
  min: number;
  max: number;
}

export function stats(samples: number[]): Stats {
  const s = [...samples].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  const median = s.length % 2 ? s[mid] : (s[mid - 1] + s[mid]) / 2;
  return { median, min: s[0], max: s[s.length - 1] };
}

/** Per-round ratios a[i] / b[i] (the two figures were measured back to back in round i). */
export function ratios(a: number[], b: number[]): number[] {
  return a.map((x, i) => x / b[i]);
}

const fmt = (v: number, digits: number) =>
  Number.isFinite(v)
    ? v.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits })
    : '–';

/**
 * How many rounds, and each round's value in the order measured: a target that holds "in every
 * round" (p99) is read off here, and so is a drift across the run.
 */
const inOrder = (samples: number[], digits: number) =>
  samples.length > 1 ? `${samples.length}: ${samples.map((v) => fmt(v, digits)).join(' · ')}` : String(samples.length);

/** The table, a line per figure, each with when it was measured (UTC, to the minute: the README keeps them). */
export function formatRows(title: string, rows: Row[], at = new Date()): string {
  const when = `${at.toISOString().slice(0, 16).replace('T', ' ')} UTC`;
  const lines = [
    `${title}`,
    '',
    '| figure | median | spread (min–max) | rounds (in order) | target | measured |',
    '|---|---|---|---|---|---|',
  ];
  for (const r of rows) {
    const d = r.digits ?? (r.unit === '×' ? 2 : 0);
    const s = stats(r.samples);
    lines.push(
      `| ${r.figure} | ${fmt(s.median, d)} ${r.unit} | ${fmt(s.min, d)}–${fmt(s.max, d)} | ${inOrder(r.samples, d)} | ${r.target ?? ''} | ${when} |`,
    );
  }
  return lines.join('\n');
}

export function printRows(title: string, rows: Row[], write: (text: string) => void = (t) => console.log(t)): void {
  write(`\n${formatRows(title, rows)}\n`);
}
