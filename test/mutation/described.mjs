#!/usr/bin/env node
/**
 * `npm run mutate:described`: the mutations issue #35 described in words, each applied to the
 * code by hand-written text substitution, its test files run, and the mutation put back. Every
 * one must fail a test; the exit code is 1 when one does not. Stryker (run.mjs) measures whole
 * modules; this pins the exact edges a reviewer named, so a refactor that moves them keeps a
 * test on each. Refuses to touch a file with uncommitted changes (it rewrites files in place).
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

const repo = resolve(import.meta.dirname, '../..');

/** [what, file, text, mutated text, test files that must fail] */
const DESCRIBED = [
  [
    'the secret comparison dropped (an existing token id with a wrong secret)',
    'handlers/core/auth.ts',
    'if (!row || !constantTimeEqual(hash, row.hash))',
    'if (!row)',
    ['test/host/auth.test.ts', 'test/host/security-edges.test.ts'],
  ],
  [
    'a root matches its sibling prefix (startsWith(root) for startsWith(root + "/"))',
    'handlers/core/paths.ts',
    'p.startsWith(`${r}/`)',
    'p.startsWith(r)',
    ['test/host/confine.test.ts', 'test/host/security-edges.test.ts'],
  ],
  [
    'a certificate commit window ten times too short',
    'runtime/areas/certificate/ops.ts',
    'Date.now() + seconds * 1000',
    'Date.now() + seconds * 100',
    ['test/host/certificate-window.test.ts'],
  ],
  [
    'event pruning that drops events still owing deliveries',
    'runtime/areas/notification/worker.ts',
    "\n        AND NOT EXISTS (SELECT 1 FROM deliveries d WHERE d.event_id = events.id AND d.state = 'pending')",
    '',
    ['test/host/notification-prune.test.ts'],
  ],
  [
    'the host-listener reader keeps sockets in any state',
    'runtime/areas/pod/compose-check.ts',
    'if (f[3] !== state) continue;',
    'if (f.length < 4) continue;',
    ['test/routes/pod-compose-check.test.ts'],
  ],
  [
    'the host-listener reader reads the port from the peer address',
    'runtime/areas/pod/compose-check.ts',
    "const port = parseInt(f[1].split(':')[1] ?? '', 16);",
    "const port = parseInt(f[2].split(':')[1] ?? '', 16);",
    ['test/routes/pod-compose-check.test.ts'],
  ],
  [
    'a directory swapped mid-walk taken for the same one (inode not compared)',
    'runtime/areas/fs/explore-common.ts',
    'now.dev === was.dev && now.ino === was.ino',
    'now.dev === was.dev',
    ['test/host/security-edges.test.ts'],
  ],
  [
    'intent-journal recovery undoes steps in the order they were made',
    'runtime/system/journal.ts',
    'for (const step of (JSON.parse(row.undo) as string[][][]).reverse())',
    'for (const step of JSON.parse(row.undo) as string[][][])',
    ['test/host/journal-recovery.test.ts', 'test/host/security-edges.test.ts'],
  ],
  [
    'S3 ports 1000-1023 accepted',
    'handlers/s3/requests.ts',
    'Number(p) >= 1024',
    'Number(p) >= 1000',
    ['test/parsers/parser-bounds.test.ts'],
  ],
  [
    'a 3-character S3 user warned about',
    'handlers/s3/credentials.ts',
    'if (bytes(rootUser) < 3)',
    'if (bytes(rootUser) <= 3)',
    ['test/parsers/parser-bounds.test.ts', 'test/routes/s3-shares.test.ts'],
  ],
  [
    'a port above 65535 in ss output accepted',
    'handlers/s3/parse/ss.ts',
    'if (port > 65535)',
    'if (port > 65536)',
    ['test/parsers/parser-bounds.test.ts'],
  ],
  [
    'tc sizes in Gb read in 1000s',
    'handlers/traffic/parse/tc-units.ts',
    ': 1024 ** 3;',
    ': 1000 ** 3;',
    ['test/parsers/parser-bounds.test.ts'],
  ],
];

{
  const dirty = execFileSync('git', ['status', '--porcelain', '--', ...new Set(DESCRIBED.map((d) => d[1]))], {
    cwd: repo,
    encoding: 'utf8',
  });
  if (dirty.trim()) throw new Error(`uncommitted changes in files this rewrites:\n${dirty}`);
  const survivors = [];
  for (const [what, file, from, to, tests] of DESCRIBED) {
    const path = join(repo, file);
    const original = readFileSync(path, 'utf8');
    if (original.split(from).length !== 2) throw new Error(`${file}: the text to mutate is not there once: ${from}`);
    writeFileSync(path, original.replace(from, to));
    let r;
    try {
      r = spawnSync('nice', ['-n', '10', 'npx', 'vitest', 'run', '--bail', '1', ...tests], {
        cwd: repo,
        encoding: 'utf8',
      });
    } finally {
      writeFileSync(path, original);
    }
    const killed = r.status !== 0 && /Tests? +\d+ failed|\d+ failed/.test(r.stdout);
    console.log(`${killed ? 'killed  ' : 'SURVIVED'} ${what} (${file})`);
    if (!killed) survivors.push(what);
  }
  if (survivors.length) {
    console.log(`\n${survivors.length} described mutation(s) no test caught`);
    process.exitCode = 1;
  }
}
