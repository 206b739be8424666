/**
 * journalctl --reverse gives the newest entries first, so a byte limit cuts the oldest ones; the
 * lines are turned back into time order. `-- No entries --` is an empty log.
 */
export function boundedLog(stdout: string, truncated: boolean, maxBytes: number): string {
  let lines = stdout.split('\n');
  if (truncated || new TextEncoder().encode(stdout).length > maxBytes) lines = lines.slice(0, -1); // a cut line is dropped whole
  lines = lines.filter((l) => l !== '' && l !== '-- No entries --');
  const kept: string[] = [];
  let bytes = 0;
  for (const l of lines) {
    bytes += new TextEncoder().encode(l).length + 1;
    if (bytes > maxBytes) break;
    kept.push(l);
  }
  return kept.reverse().join('\n');
}
