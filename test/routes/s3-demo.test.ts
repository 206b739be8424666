/**
 * The demo appliance (npm start) answers every example of every S3 route from fixtures/demo/s3
 * and the seeded shares media and backup (fixtures/demo/files): a fresh demo host runs the
 * examples in route order (list, details, create, update, delete) and each answers its status
 * and, on success, its response schema, with the S3 headers.
 */
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RouteModule } from '../../handlers/core/route';
import create from '../../handlers/s3/routes/create';
import del from '../../handlers/s3/routes/delete';
import details from '../../handlers/s3/routes/details';
import list from '../../handlers/s3/routes/list';
import update from '../../handlers/s3/routes/update';
import { examplePath } from '../../runtime/demo-examples';
import { ReplayBackend } from '../../runtime/system/replay';
import { makeDemoHost, type TestHost } from '../helpers/host';

const ROUTES: RouteModule[] = [list, details, create, update, del];

let d: TestHost;

beforeAll(async () => {
  d = await makeDemoHost({ routes: ROUTES, replayCallsKept: 1000 });
});
afterAll(async () => {
  await d?.close();
});

describe('the demo appliance answers every S3 example', () => {
  for (const r of ROUTES) {
    for (const ex of r.meta.examples ?? []) {
      it(`${r.meta.method} ${r.meta.path}: ${ex.summary}`, async () => {
        const res = await d.call(r.meta.method, examplePath(r.meta.path, ex), {
          body: r.meta.method === 'GET' ? undefined : (ex.body ?? {}),
        });
        const text = res.text;
        expect([res.status, text.slice(0, 300)]).toEqual([ex.status ?? 200, expect.any(String)]);
        expect(res.headers.get('content-type')).toBe('application/string; charset=utf-8');
        expect(res.headers.get('x-powered-by')).toBeNull();
        const json: unknown = JSON.parse(text);
        if (res.status === 200) expect(r.schemas.response.safeParse(json).success).toBe(true);
        else expect(json).toMatchObject({ error: { code: expect.any(String), message: expect.any(String) } });
      });
    }
  }

  it('after the examples: projects and lab exist, media is gone with its directory kept, backup has its new secret', async () => {
    const shares = (
      await d.call<Record<string, { path: string; rootPassword: string; enabled: boolean }>>('GET', '/api/v2/s3/list')
    ).json;
    expect(Object.keys(shares).sort()).toEqual(['backup', 'lab', 'projects']);
    expect(shares.projects.path).toBe('/srv/projects');
    expect(shares.projects.rootPassword).toBe('**************ey');
    expect(shares.backup.enabled).toBe(false);
    // backup is stopped: its update may restart it only if it runs, so it stays stopped
    const replay = d.host.backend instanceof ReplayBackend ? d.host.backend : undefined;
    const backupCalls = (replay?.calls ?? []).map((c) => c.argv).filter((a) => a.includes('s3-backup.service'));
    expect(backupCalls.filter((a) => a[1] !== 'is-enabled')).toEqual([
      ['/usr/bin/systemctl', 'try-restart', '--', 's3-backup.service'],
    ]);
    expect(statSync(join(d.root, 'srv/media')).isDirectory()).toBe(true);
    const env = statSync(join(d.root, 'etc/ballast/s3/projects.env'));
    expect(env.mode & 0o777).toBe(0o600);
  });
});
