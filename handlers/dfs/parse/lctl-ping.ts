/**
 * `lctl ping <nid>`: one `12345-<nid>` token per NID of the peer (the first is always `0@lo`),
 * optionally `N out of M ids listed`. Split on any whitespace (a pasted sample put two on one
 * line). Failure: `failed to ping <nid>: <strerror>` — on stdout on the 2.15+ netlink path, on
 * stderr on the ioctl path — so callers also check the exit status.
 */
import { ParseError } from '../../core/parse-error';
import { isNid } from '../names';

export interface LctlPing {
  /** NIDs in the order printed (a concatenation of several pings keeps its repeats). */
  nids: string[];
  /** `failed to ping …` lines. */
  failures: { nid: string; error: string }[];
}

export function parseLctlPing(text: string): LctlPing {
  const out: LctlPing = { nids: [], failures: [] };
  text.split('\n').forEach((line, i) => {
    const l = line.trim();
    if (l === '') return;
    const f = /^failed to ping (\S+): (.+)$/.exec(l);
    if (f) {
      out.failures.push({ nid: f[1], error: f[2].trim() });
      return;
    }
    if (/^\d+ out of \d+ ids listed$/.test(l)) return;
    for (const tok of l.split(/\s+/)) {
      const m = /^(\d+)-(.+)$/.exec(tok);
      if (!m || !isNid(m[2]))
        throw new ParseError('lctl ping', `expected "<pid>-<nid>", got ${JSON.stringify(tok.slice(0, 40))}`, i + 1);
      out.nids.push(m[2]);
    }
  });
  return out;
}
