/**
 * Command output as a terminal would have shown it. mke2fs draws its progress counters with
 * backspaces (`0/8\b\b\b   \b\b\bdone`) even when stdout is a pipe; applied here, the
 * make_filesystem answer reads `Allocating group tables: done` instead of a run of control
 * characters. `\r` returns to the start of the line; trailing blanks are dropped.
 */
export function renderTerminalText(text: string): string {
  return text
    .split('\n')
    .map((line) => {
      if (!/[\b\r]/.test(line)) return line.replace(/[ \t]+$/, '');
      const cells: string[] = [];
      let at = 0;
      for (const ch of line) {
        if (ch === '\b') at = Math.max(0, at - 1);
        else if (ch === '\r') at = 0;
        else cells[at++] = ch;
      }
      return cells.join('').replace(/[ \t]+$/, '');
    })
    .join('\n');
}
