/**
 * The argv a rendered pod unit runs (its ExecStart/ExecStartPre words, systemd's quoting and
 * `%%`/`$$` undone): how the system tests run a unit's commands the way systemd would. Only tests
 * read units back; the product renders them (handlers/pod/render/unit.ts).
 */
export function execStartOf(unitText: string, key: 'ExecStart' | 'ExecStartPre' = 'ExecStart'): string[] {
  const l = unitText.split('\n').find((x) => x.startsWith(`${key}=`));
  if (!l) return [];
  const words: string[] = [];
  const re = /"((?:[^"\\]|\\.)*)"|(\S+)/g;
  for (const m of l.slice(key.length + 1).matchAll(re)) {
    const w = m[1] !== undefined ? m[1].replace(/\\(.)/g, '$1') : m[2];
    words.push(w.replace(/%%/g, '%').replace(/\$\$/g, '$'));
  }
  return words;
}
