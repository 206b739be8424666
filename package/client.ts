/**
 * `ballast/client`: a typed client for the API, generated from dist/openapi.json
 * (openapi-typescript writes package/openapi.d.ts; openapi-fetch does the requests).
 *
 *   const api = createBallastClient({ baseUrl: 'http://localhost:8080', token });
 *   const { data, error } = await api.GET('/api/v2/kerberos/realm/{name}/details', { params: { path: { name: 'lab' } } });
 *
 * The typed paths carry /api/v2; an API mounted under another base path (an embedder's
 * `config.basePath`, `/mgmt`) is reached with `basePath: '/mgmt'`: each request's /api/v2 is
 * replaced by it, so the same typed calls work wherever the API is mounted.
 */
import createClient, { type Client, type ClientOptions } from 'openapi-fetch';
import type { paths } from './openapi';
import { waitForJob, type Job, type WaitForJobOptions } from './jobs';

export type { paths, components, operations } from './openapi';
export { JobWaitError, type Job, type JobProgress, type WaitForJobOptions } from './jobs';
export type BallastClient = Client<paths> & {
  /**
   * A job's events read to its end (progress to `onProgress`), then the job as it ended: for a
   * long route asked with `Prefer: respond-async` (its 202 gives `job.id`), or a 504 naming one.
   */
  waitForJob(id: string, options?: WaitForJobOptions): Promise<Job>;
};

export interface BallastClientOptions extends ClientOptions {
  /** The appliance's origin (the paths carry /api/v2). */
  baseUrl: string;
  /** An API token, sent in the `token` header. */
  token?: string;
  /** Where the API is mounted when it is not /api/v2 (`'/mgmt'`, or `'/'` for the root). */
  basePath?: string;
}

const API_BASE = '/api/v2';

export function createBallastClient(o: BallastClientOptions): BallastClient {
  const { token, headers, basePath, ...rest } = o;
  const client = createClient<paths>({
    ...rest,
    headers: { ...(token ? { token } : {}), ...(headers as Record<string, string> | undefined) },
  });
  const base = basePath === undefined ? API_BASE : basePath.replace(/\/+$/, '');
  if (base !== API_BASE) {
    const mount = new URL(o.baseUrl).pathname.replace(/\/+$/, '');
    client.use({
      onRequest({ request }) {
        const url = new URL(request.url);
        const at = `${mount}${API_BASE}`;
        if (url.pathname !== at && !url.pathname.startsWith(`${at}/`)) return request;
        url.pathname = `${mount}${base}${url.pathname.slice(at.length)}` || '/';
        return new Request(url, request);
      },
    });
  }
  const f = rest.fetch ?? globalThis.fetch;
  const apiUrl = `${o.baseUrl.replace(/\/+$/, '')}${base === API_BASE ? API_BASE : base}`;
  const plain: Record<string, string> = {
    ...(token ? { token } : {}),
    ...(headers as Record<string, string> | undefined),
  };
  return Object.assign(client, {
    waitForJob: (id: string, options?: WaitForJobOptions) =>
      waitForJob({ apiUrl, headers: plain, fetch: (input, init) => f(new Request(input, init)) }, id, options),
  });
}
