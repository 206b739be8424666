// npm run bench: test/bench/host.ts (host vs bare node:http, cold start, RSS), explore.ts, then
// isolate.ts (the same routes with the handlers in workerd and in Deno). BENCH_ISOLATES=0 skips
// the isolate rows.
import { benchHeader, main } from './host';
import { isolateRows } from './isolate';
import { printRows } from './report';

await main();
if (process.env.BENCH_ISOLATES !== '0') printRows(`${benchHeader()}; routes in isolates`, await isolateRows());
