/**
 * Copies every upstream Lustre sample a route's parser reads into fixtures/lustre/<command>/
 * (same name, same bytes). It never writes `<name>.expected.json`: that answer is written by hand
 * from the sample and FORMATS.md, so the samples test checks the parser against the sample and
 * not against its own earlier output.
 *   npx vite-node test/tools/dfs/import-samples.ts
 */
import { copyFileSync, mkdirSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { repo, ruleFor, sharedDir } from '../../parsers/dfs/samples';

const src = join(sharedDir(), 'upstream-samples', 'lustre');
for (const dir of readdirSync(src).sort()) {
  if (!statSync(join(src, dir)).isDirectory()) continue;
  for (const file of readdirSync(join(src, dir)).sort()) {
    const rule = ruleFor(dir, file);
    if (!rule) throw new Error(`no parser rule for ${dir}/${file}`);
    if (!rule.parser) continue;
    const out = join(repo, 'fixtures', 'lustre', dir);
    mkdirSync(out, { recursive: true });
    copyFileSync(join(src, dir, file), join(out, file));
  }
}
