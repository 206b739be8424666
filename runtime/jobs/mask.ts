/**
 * What a job's log line must not show. Commands get their secrets on stdin or in files (never in
 * argv, which the audit trail keeps), but a tool's stderr may echo one back: an API token, a
 * `password=…`/`secret: …` pair, a PEM private key block, a URL's userinfo.
 */
const PATTERNS: [RegExp, string][] = [
  [/blt_[0-9a-f]{12}_[A-Za-z0-9_-]{43}/g, 'blt_********'],
  [/-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?(-----END [A-Z ]*PRIVATE KEY-----|$)/g, '[private key]'],
  [
    /\b(pass(?:word|wd|phrase)?|secret(?:[_-]?key)?|token|api[_-]?key|access[_-]?key)(\s*[=:]\s*)("[^"]*"|'[^']*'|\S+)/gi,
    '$1$2********',
  ],
  [/(\b[a-z][a-z0-9+.-]*:\/\/)[^/\s:@]+:[^/\s@]+@/gi, '$1********@'],
];

export function maskSecrets(line: string): string {
  let out = line;
  for (const [re, to] of PATTERNS) out = out.replace(re, to);
  return out;
}
