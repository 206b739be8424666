/**
 * Removes secrets from text that may reach a log, an error answer or the outbox (`last_error`):
 * the secret itself and the base64 forms a protocol may echo (HTTP Basic, SMTP AUTH PLAIN/LOGIN).
 */
export function redact(text: string, secrets: readonly string[], users: readonly string[] = []): string {
  const needles = new Set<string>();
  for (const s of secrets) {
    if (s.length < 4) continue;
    needles.add(s);
    needles.add(Buffer.from(s).toString('base64'));
    for (const u of users) {
      needles.add(Buffer.from(`${u}:${s}`).toString('base64'));
      needles.add(Buffer.from(`\0${u}\0${s}`).toString('base64'));
    }
  }
  let out = text;
  // Longest first, so a secret inside a longer encoded form does not break the latter's match.
  for (const n of [...needles].sort((a, b) => b.length - a.length)) out = out.split(n).join('***');
  return out;
}
