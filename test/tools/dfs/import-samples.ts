/**
 * Copies every upstream Lustre sample into fixtures/lustre/<command>/ (same name, same bytes) and
 * writes `<name>.expected.json` beside it from the parser (review the diff before committing).
 *   npx vite-node test/tools/dfs/import-samples.ts
 */
import { copyFileSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { repo, ruleFor, sharedDir } from '../../parsers/dfs/samples';

const src = join(sharedDir(), 'upstream-samples', 'lustre');
for (const dir of readdirSync(src).sort()) {
  if (!statSync(join(src, dir)).isDirectory()) continue;
  for (const file of readdirSync(join(src, dir)).sort()) {
    const rule = ruleFor(dir, file);
    if (!rule) throw new Error(`no parser rule for ${dir}/${file}`);
    const out = join(repo, 'fixtures', 'lustre', dir);
    mkdirSync(out, { recursive: true });
    copyFileSync(join(src, dir, file), join(out, file));
    const parsed = rule.parser(readFileSync(join(src, dir, file), 'utf8'));
    writeFileSync(join(out, `${file}.expected.json`), `${JSON.stringify(parsed, null, 2)}\n`);
  }
}
