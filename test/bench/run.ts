// npm run bench: see test/bench/host.ts (host vs bare node:http, cold start, RSS) and explore.ts.
import { main } from './host';

await main();
