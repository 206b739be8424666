/**
 * A client's compose text (YAML or JSON) to a plain document. Runs in a worker thread
 * (yaml-reader.ts), never on the host's event loop, because yaml's cost on hostile text is far
 * above its cost on a compose file (measured on Node 20, yaml 2.9):
 * - its composer recurses once per nesting level: ~800 levels (`[[[…` or `- - - …`, 1.6 kB)
 *   overflow the stack, and a second overflow inside its regular expressions aborts the whole
 *   process ("RegExpCompiler Allocation failed - process out of memory");
 * - a mapping key that is a collection (`? ? ? … x`) is stringified once per level: 400 levels
 *   took 46 s;
 * - its duplicate-key check compares each key with every earlier one: 20 000 keys took 18 s;
 * - its lexer and parser are linear but slow on tiny tokens: ~5-10 s for 1 MiB of `[`.
 * So: the CST (lexer and parser, iterative) is walked first with an explicit stack, and
 * collections nested deeper than `maxDepth` or a mapping key that is not a scalar are refused
 * before anything recurses; yaml's own duplicate-key check is off and done here with a Set per
 * mapping; aliases are expanded under yaml's maxAliasCount. The worker's deadline and heap
 * limit bound the rest.
 *
 * `readYaml` stands alone (the worker runs it as text, yaml-reader.ts): nothing from this
 * module's scope, the library passed in.
 */
import type * as Yaml from 'yaml';

/** Compose nests ~6 levels; the document check refuses more than 32 (compose-check.ts noProto). */
export const YAML_MAX_DEPTH = 64;
/** yaml's maxAliasCount: (uses of an alias) × (aliases inside what it names), at most */
export const YAML_MAX_ALIASES = 50;

/** The document as JSON text, or why there is none (a message for `fileContents`). */
export type YamlRead = { json: string } | { message: string };

export interface YamlTask {
  id: number;
  text: string;
  maxDepth: number;
  maxAliases: number;
}

export function readYaml(yaml: typeof Yaml, text: string, maxDepth: number, maxAliases: number): YamlRead {
  const lines = new yaml.LineCounter();
  const at = (offset: number) => {
    const p = lines.linePos(offset);
    return `(line ${p.line}, column ${p.col})`;
  };
  const stack: { token: Yaml.CST.Token | null | undefined; depth: number }[] = [];
  for (const token of new yaml.Parser(lines.addNewLine).parse(text)) stack.push({ token, depth: 0 });
  while (stack.length > 0) {
    const { token, depth } = stack.pop()!;
    if (!token) continue;
    if (token.type === 'document') stack.push({ token: token.value, depth });
    else if (token.type === 'block-map' || token.type === 'block-seq' || token.type === 'flow-collection') {
      if (depth >= maxDepth)
        return { message: `not usable YAML ${at(token.offset)}: collections nested more than ${maxDepth} deep` };
      for (const item of token.items) {
        const key = 'key' in item ? item.key : null;
        if (
          key &&
          key.type !== 'scalar' &&
          key.type !== 'single-quoted-scalar' &&
          key.type !== 'double-quoted-scalar'
        ) {
          const what =
            key.type === 'alias' ? 'an alias' : key.type === 'block-scalar' ? 'a block scalar' : 'a collection';
          return {
            message: `not usable YAML ${at(key.offset)}: a mapping key must be a plain or quoted string, not ${what}`,
          };
        }
        stack.push({ token: item.value, depth: depth + 1 }); // a key is a scalar: nothing nests in it
      }
    }
  }

  const doc = yaml.parseDocument(text, { uniqueKeys: false, prettyErrors: true, merge: true, logLevel: 'error' });
  if (doc.errors.length > 0) {
    const e = doc.errors[0];
    const p = e.linePos?.[0];
    const first = e.message.split('\n')[0].replace(/ at line \d+, column \d+:?$/, '');
    return { message: `not valid YAML${p ? ` (line ${p.line}, column ${p.col})` : ''}: ${first}` };
  }
  let duplicate: string | null = null;
  yaml.visit(doc, {
    Map(_, map) {
      const seen = new Set<string>();
      for (const pair of map.items) {
        // the property name toJS gives the key (keys are scalars here): `1` and "1" are one key
        const key = yaml.isScalar(pair.key) ? String(pair.key.value) : String(pair.key);
        if (seen.has(key)) {
          const offset = yaml.isScalar(pair.key) ? (pair.key.range?.[0] ?? 0) : 0;
          duplicate = `not valid YAML ${at(offset)}: Map keys must be unique`;
          return yaml.visit.BREAK;
        }
        seen.add(key);
      }
      return undefined;
    },
  });
  if (duplicate) return { message: duplicate };
  try {
    return { json: JSON.stringify(doc.toJS({ maxAliasCount: maxAliases })) };
  } catch (e) {
    return { message: `not usable YAML: ${(e as Error).message.split('\n')[0]}` };
  }
}
