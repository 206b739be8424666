/**
 * Ballast inside a Hono app, under /mgmt: the routes, the OpenAPI document (/mgmt/openapi.json)
 * and the docs page (/mgmt/docs) follow the prefix, and so does the typed client.
 *
 *   npm i ballast hono && npx tsx hono-mount.ts       (the demo appliance: nothing on the machine changes)
 *
 * For a real appliance give `config: '/etc/ballast/config.yaml'` instead of `demo: true`.
 */
import { Hono } from 'hono';
import { createBallast, createToken } from 'ballast/host';
import { createBallastClient } from 'ballast/client';

const ballast = await createBallast({ demo: true, basePath: '/mgmt' });
const { token } = await createToken(ballast.host.db, 'hono-example', ['*']);

const app = new Hono();
app.get('/', (c) => c.text('my appliance UI'));
// replaceRequest: false keeps /mgmt in the URL: Ballast sees the path it documents
app.mount('/mgmt', (request) => ballast.fetch(request), { replaceRequest: false });

// the typed client, pointed at the mount (here through app.fetch: no port needed)
const api = createBallastClient({
  baseUrl: 'http://appliance.local',
  basePath: '/mgmt',
  token,
  fetch: async (request: Request) => app.fetch(request),
});
const { data, error } = await api.GET('/api/v2/kerberos/realm/{name}/details', {
  params: { path: { name: 'lab' } },
});
if (error) throw new Error(`GET realm details: ${error.error.message}`);

const doc = (await (await app.request('/mgmt/openapi.json')).json()) as { paths: Record<string, unknown> };
const docs = await app.request('/mgmt/docs');
console.log(
  JSON.stringify({
    realm: data.raw.split('\n')[0],
    documentPaths: Object.keys(doc.paths).filter((p) => p.startsWith('/mgmt/kerberos/realm')),
    docsPage: docs.status,
  }),
);
await ballast.close();
