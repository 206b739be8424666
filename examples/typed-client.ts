/**
 * The typed client against a running appliance (`npx ballast serve --demo` in another terminal:
 * it prints its URL and writes the demo's admin token to var/demo/admin.token).
 *
 *   BALLAST_URL=http://127.0.0.1:8080 BALLAST_TOKEN=$(cat var/demo/admin.token) npx tsx typed-client.ts
 *
 * Paths, parameters, bodies and answers are typed from the OpenAPI document.
 */
import { createBallastClient } from 'ballast/client';

const api = createBallastClient({
  baseUrl: process.env.BALLAST_URL ?? 'http://127.0.0.1:8080',
  token: process.env.BALLAST_TOKEN,
});

const realm = await api.GET('/api/v2/kerberos/realm/{name}/details', { params: { path: { name: 'lab' } } });
if (realm.error) throw new Error(`${realm.response.status}: ${realm.error.error.message}`);
// realm.data is { raw: string; json: … }: a typo in a field name does not compile
const firstLine = realm.data.raw.split('\n')[0];

const interfaces = await api.GET('/api/v2/network/interface');
if (interfaces.error) throw new Error(`${interfaces.response.status}: ${interfaces.error.error.message}`);

const denied = await createBallastClient({ baseUrl: process.env.BALLAST_URL ?? 'http://127.0.0.1:8080' }).GET(
  '/api/v2/kerberos/conf',
);
console.log(
  JSON.stringify({
    realm: firstLine,
    links: interfaces.data.map((i) => i.link),
    withoutToken: denied.response.status,
  }),
);
