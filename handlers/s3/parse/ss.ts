/**
 * `ss -Hltn` (iproute2): listening TCP sockets, no header, numeric. Each line is
 * `State Recv-Q Send-Q Local-Address:Port Peer-Address:Port [Process]`; the local address is
 * `0.0.0.0:22`, `[::]:22`, `127.0.0.53%lo:53`, `*:80` or `[::ffff:127.0.0.1]:8080`. Returns
 * the local ports, sorted and unique. A line of another shape is a ParseError naming the line.
 */
import { ParseError } from '../../core/parse-error';

const P = 'ss';

export function parseSsListening(text: string): number[] {
  const ports = new Set<number>();
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const l = lines[i].trim();
    if (l === '') continue;
    const f = l.split(/\s+/);
    if (f.length < 5) throw new ParseError(P, 'expected State Recv-Q Send-Q Local:Port Peer:Port', i + 1);
    if (!/^\d+$/.test(f[1]) || !/^\d+$/.test(f[2])) throw new ParseError(P, 'Recv-Q and Send-Q must be numbers', i + 1);
    const local = f[3];
    const m = /:(\d{1,5})$/.exec(local);
    if (!m) throw new ParseError(P, 'local address has no numeric port', i + 1);
    const port = Number(m[1]);
    if (port > 65535) throw new ParseError(P, 'port out of range', i + 1);
    ports.add(port);
  }
  return [...ports].sort((a, b) => a - b);
}
