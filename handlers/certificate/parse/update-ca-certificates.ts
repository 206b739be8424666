import { ParseError } from '../../core/parse-error';

/**
 * What `update-ca-certificates` (Debian ca-certificates 20230311) printed, stdout and stderr:
 *   [Clearing symlinks in DIR...\ndone.\n]Updating certificates in DIR...\n
 *   [W: … (stderr)]\nN added, M removed; done.\nRunning hooks in DIR...\n[E: HOOK exited with code N.]\ndone.
 * The summary line is required; without it the tool did not get to update the store.
 */
export interface TrustStoreUpdate {
  added: number;
  removed: number;
  /** `--fresh`: the symlinks were cleared first */
  fresh: boolean;
  /** `W: …` lines (a certificate listed in the conf but missing, …) */
  warnings: string[];
  /** `E: <hook> exited with code N.` lines (rc stays 0) */
  hookErrors: string[];
}

const SUMMARY = /^(\d+) added, (\d+) removed; done\.$/;

export function parseUpdateCaCertificates(stdout: string, stderr = ''): TrustStoreUpdate {
  const lines = `${stdout}\n${stderr}`.split('\n').map((l) => l.trimEnd());
  let summary: RegExpExecArray | null = null;
  let updating = false;
  const out: TrustStoreUpdate = { added: 0, removed: 0, fresh: false, warnings: [], hookErrors: [] };
  for (const l of lines) {
    if (/^Updating certificates in .+\.\.\.$/.test(l)) updating = true;
    else if (/^Clearing symlinks in .+\.\.\.$/.test(l)) out.fresh = true;
    else if (l.startsWith('W: ')) out.warnings.push(l.slice(3));
    else if (/^E: .+ exited with code \d+\.$/.test(l)) out.hookErrors.push(l.slice(3));
    else {
      const m = SUMMARY.exec(l);
      if (m) {
        if (summary) throw new ParseError('update-ca-certificates', 'two summary lines');
        summary = m;
      }
    }
  }
  if (!updating) throw new ParseError('update-ca-certificates', 'no "Updating certificates in …" line');
  if (!summary) throw new ParseError('update-ca-certificates', 'no "N added, M removed; done." line');
  out.added = Number(summary[1]);
  out.removed = Number(summary[2]);
  return out;
}
