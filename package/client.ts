/**
 * `ballast/client`: a typed client for the API, generated from dist/openapi.json
 * (openapi-typescript writes package/openapi.d.ts; openapi-fetch does the requests).
 *
 *   const api = createBallastClient({ baseUrl: 'http://localhost:8080', token });
 *   const { data, error } = await api.GET('/api/v2/kerberos/realm/{name}/details', { params: { path: { name: 'lab' } } });
 */
import createClient, { type Client, type ClientOptions } from 'openapi-fetch';
import type { paths } from './openapi';

export type { paths, components, operations } from './openapi';
export type BallastClient = Client<paths>;

export interface BallastClientOptions extends ClientOptions {
  /** The appliance's origin (the paths carry /api/v2). */
  baseUrl: string;
  /** An API token, sent in the `token` header. */
  token?: string;
}

export function createBallastClient(o: BallastClientOptions): BallastClient {
  const { token, headers, ...rest } = o;
  return createClient<paths>({
    ...rest,
    headers: { ...(token ? { token } : {}), ...(headers as Record<string, string> | undefined) },
  });
}
