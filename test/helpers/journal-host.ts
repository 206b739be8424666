/**
 * The host journal-recovery.test.ts kills: `vite-node test/helpers/journal-host.ts <config.json>
 * <root>` serves the real host (runtime/serve.ts, from source) with the two-intent change route
 * and the jobs routes, and prints `ready <url> <admin token>` once it listens.
 */
import { readFileSync } from 'node:fs';
import { serve } from '../../runtime/serve';
import { createToken } from '../../runtime/tokens';
import type { HostConfig } from '../../runtime/config';
import jobDetails from '../../handlers/jobs/routes/details';
import { liveBackend, twoIntentChange } from './journal-change';
import { distDir } from './host';

const [configFile, root] = process.argv.slice(2);
const config = JSON.parse(readFileSync(configFile, 'utf8')) as HostConfig;
const s = await serve({
  config,
  distDir,
  backend: liveBackend(),
  routes: [twoIntentChange(root), jobDetails],
  signals: false,
  accessLog: false,
  log: (l) => process.stderr.write(`${l}\n`),
});
const admin = await createToken(s.host.db, 'admin', ['*']);
process.stdout.write(`ready ${s.server.url} ${admin.token}\n`);
