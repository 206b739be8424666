/**
 * The routes in Deno: the host (commands, files, database) stays in Node and spawns
 * `deno run` on the package's isolate entry (dist/deno.mjs), which serves the routes with
 * Deno.serve and reaches the host only through its binding socket (least permissions: no
 * --allow-run, no --allow-env, no network but two Unix sockets).
 *
 *   npm i ballast deno@2.9.6 && npx tsx isolate-deno.ts
 *
 * The same from the command line: `npx ballast serve --demo --isolate deno`.
 */
import { createBallast, createToken } from 'ballast/host';

const ballast = await createBallast({ demo: true, isolate: 'deno' });
try {
  const { token } = await createToken(ballast.host.db, 'deno-example', ['*']);
  const res = await ballast.fetch(
    new Request('http://appliance.local/api/v2/kerberos/realm/lab/details', { headers: { token } }),
  );
  const body = (await res.json()) as { raw: string };
  console.log(JSON.stringify({ isolate: ballast.isolate, status: res.status, realm: body.raw.split('\n')[0] }));
} finally {
  await ballast.close();
}
