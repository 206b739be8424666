/**
 * The YAML lnetctl imports and `show_config` answers: the request's structure as lnetctl prints
 * it (`net:` list, keys with spaces, 4-space indentation, interface indices as plain integers).
 */
import { Document } from 'yaml';
import type { LnetConfigBody } from '../requests';

export function renderLnetYaml(cfg: LnetConfigBody): string {
  const doc = new Document({}, { version: '1.2' });
  const net = cfg.net.map((n) => ({
    'net type': n['net type'],
    'local NI(s)': n['local NI(s)'].map((ni) => {
      const out: Record<string, unknown> = {};
      for (const [k, v] of Object.entries(ni)) {
        if (k === 'interfaces' && v && typeof v === 'object') {
          out[k] = new Map(
            Object.entries(v as Record<string, string>)
              .sort(([a], [b]) => Number(a) - Number(b))
              .map(([i, name]) => [Number(i), name]),
          );
        } else out[k] = v;
      }
      return out;
    }),
  }));
  doc.contents = doc.createNode({ net });
  return doc.toString({ indent: 4, indentSeq: true, lineWidth: 0, nullStr: '' });
}
